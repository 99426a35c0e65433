package recipient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ccplatform/pkg/svcclient"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTargetJSONIsTheRecipientsRequest(t *testing.T) {
	for target, want := range map[Target]string{
		{UserID: 3}:      `{"userId":3}`,
		{All: true}:      `{"all":true}`,
		{Group: "admin"}: `{"group":"admin"}`,
	} {
		raw, err := json.Marshal(target)
		require.NoError(t, err)
		assert.JSONEq(t, want, string(raw))
		assert.True(t, target.Valid())
	}
	assert.False(t, Target{}.Valid())
	assert.False(t, Target{UserID: 1, All: true}.Valid())
	assert.False(t, Target{Group: "nobody"}.Valid())
	// A negative id names no user, and beside another target it would make two (FuzzCommandMessage).
	assert.False(t, Target{UserID: -1}.Valid())
	assert.False(t, Target{UserID: -1, All: true}.Valid())
	assert.False(t, Target{UserID: -1, Group: "admin"}.Valid())
}

func TestUserDecodesTheContractFields(t *testing.T) {
	var users []User
	require.NoError(t, json.Unmarshal([]byte(`[
		{"id":1,"email":"a@b.c","isActive":true,"accessGroup":"admin","messengerNotificationsEnabled":true,
		 "messengerChatId":"-100","messengerNotificationsPriority":"urgent","emailNotificationsEnabled":true,
		 "emailNotificationsPriority":null,"name":"ignored"},
		{"id":2,"messengerChatId":12345},
		{"id":3,"messengerChatId":null}]`), &users))
	urgent := "urgent"
	assert.Equal(t, User{ID: 1, Email: "a@b.c", IsActive: true, AccessGroup: "admin", MessengerNotificationsEnabled: true,
		MessengerChatID: "-100", MessengerNotificationsPriority: &urgent, EmailNotificationsEnabled: true}, users[0])
	assert.Equal(t, ChatID("12345"), users[1].MessengerChatID)
	assert.Equal(t, ChatID(""), users[2].MessengerChatID)

	var u User
	assert.Error(t, json.Unmarshal([]byte(`{"messengerChatId":1.5}`), &u))
}

func TestFilterKeepsActiveUsersOfTheTarget(t *testing.T) {
	users := []User{
		{ID: 1, IsActive: true, AccessGroup: "admin"},
		{ID: 2, IsActive: false, AccessGroup: "admin"},
		{ID: 3, IsActive: true, AccessGroup: "client"},
	}
	ids := func(us []User) []int64 {
		var out []int64
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	assert.Equal(t, []int64{1}, ids(Filter(Target{Group: "admin"}, users)))
	assert.Equal(t, []int64{1, 3}, ids(Filter(Target{All: true}, users)))
	assert.Equal(t, []int64{2}, ids(Filter(Target{UserID: 2}, users[1:2])), "a named user is kept even when inactive")
}

// Lookup tells an inactive user from an unknown one, as the user service answers them.
func TestLookupTellsUnknownAndInactiveUsers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var target Target
		require.NoError(t, json.NewDecoder(r.Body).Decode(&target))
		w.Header().Set("Content-Type", "application/json")
		switch target.UserID {
		case 1:
			_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"list":[{"id":1,"isActive":true,"accessGroup":"admin"}]}}`))
		case 2:
			_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"list":[{"id":2,"isActive":false,"accessGroup":"admin"}]}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"success":false,"message":"user 3 does not exist","data":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	d := NewDirectory(svcclient.New("user", srv.URL, "token", time.Second))
	for id, want := range map[int64][2]bool{1: {true, true}, 2: {true, false}, 3: {false, false}} {
		found, active, err := d.Lookup(context.Background(), id)
		require.NoError(t, err, id)
		assert.Equal(t, want, [2]bool{found, active}, "user %d: found, active", id)
	}
}
