package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStreamReceivesTheUsersNotificationsLive(t *testing.T) {
	env.PurgeCommands(t)
	env.Users.Put(recipient.User{ID: 601, IsActive: true, AccessGroup: "call-center"}, recipient.User{ID: 602, IsActive: true})
	api := env.StartAPI(t, servicetest.APIOptions{})
	env.StartWorker(t, servicetest.WorkerOptions{})

	token := []string{"X-Internal-Token", servicetest.Token}
	mine := servicetest.Stream(t, api.URL+"/v2/notification/stream/", append(token, "X-User-Id", "601")...)
	theirs := servicetest.Stream(t, api.URL+"/v2/notification/stream", append(token, "X-User-Id", "602")...)
	require.True(t, api.Hub.Online(601))

	start := time.Now()
	status, res := servicetest.Post(t, api.URL, "/v2/notification/private", 1,
		`{"userId":601,"title":"Срочно","text":"Перезвоните клиенту","priority":"urgent","level":"danger"}`)
	require.Equal(t, http.StatusOK, status, res.Message)
	ev, ok := servicetest.Next(mine, "notification", time.Second)
	require.True(t, ok, "the notification arrives within a second")
	t.Logf("live after %s", time.Since(start))
	var m live.Message
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &m))
	assert.Equal(t, "Срочно", m.Title)
	assert.Equal(t, "Перезвоните клиенту", m.Text)
	assert.EqualValues(t, "urgent", m.Priority)
	assert.EqualValues(t, "danger", m.Level)
	assert.True(t, m.OpenAutomatically, "urgent notifications open by themselves")
	assert.False(t, m.IsRead)
	assert.Positive(t, m.ID)

	status, _ = servicetest.Post(t, api.URL, "/v2/notification/group", 1,
		`{"group":"call-center","title":"Plan","text":"Daily plan","priority":"default","level":"default"}`)
	require.Equal(t, http.StatusOK, status)
	ev, ok = servicetest.Next(mine, "notification", time.Second)
	require.True(t, ok)
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &m))
	assert.Equal(t, "Plan", m.Title)
	assert.False(t, m.OpenAutomatically)

	_, ok = servicetest.Next(theirs, "notification", 300*time.Millisecond)
	assert.False(t, ok, "another user's stream gets nothing")

	// The record is in the inbox as well.
	p := list(t, api.URL, 601, "")
	assert.Equal(t, 2, p.Total)

	// Shutting down ends every stream.
	api.Hub.Close()
	select {
	case _, open := <-mine:
		for open {
			_, open = <-mine
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the stream did not end on shutdown")
	}
	assert.False(t, api.Hub.Online(601))
}
