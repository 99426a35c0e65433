package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "notification_api", func(e *servicetest.Env) { env = e })
}

const body = `{"title":"Заказ №5","text":"Проверьте лиды","priority":"urgent","level":"warning"}`

func withTarget(target string) string { return `{` + target + `,` + body[1:] }

func TestSendChecksTheBodyAtOnce(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{})
	cases := []struct {
		path, body string
		errors     map[string]string
	}{
		{"/v2/notification/private", `{}`, map[string]string{"userId": "is required", "title": "is required", "text": "is required", "priority": "is required", "level": "is required"}},
		{"/v2/notification/private/", withTarget(`"userId":-3`), map[string]string{"userId": "must be an integer > 0"}},
		{"/v2/notification/public", `{"title":"t","text":"x","priority":"soon","level":"default"}`, map[string]string{"priority": "must be one of default, urgent"}},
		{"/v2/notification/group", withTarget(`"group":"everyone"`), map[string]string{"group": "must be one of client, call-center, call-center-senior, arbitration, moderator, admin"}},
		{"/v2/notification/group", `[1]`, map[string]string{"body": "must be a JSON object"}},
	}
	for _, tc := range cases {
		status, res := servicetest.Post(t, api.URL, tc.path, 1, tc.body)
		assert.Equal(t, http.StatusBadRequest, status, tc.body)
		assert.False(t, res.Success)
		assert.Equal(t, tc.errors, res.Errors(), tc.body)
		for field, rule := range tc.errors {
			assert.Contains(t, res.Message, field+": "+rule)
		}
	}
}

// TestPrivateWithoutTheUserServiceIs503: the target of a private notification cannot be checked,
// which is not the caller's fault. An unknown user (400) is asked of the real user service end to
// end: gateway/e2e/notification_test.go.
func TestPrivateWithoutTheUserServiceIs503(t *testing.T) {
	env.PurgeCommands(t)
	api := env.StartAPI(t, servicetest.APIOptions{})
	status, res := servicetest.Post(t, api.URL, "/v2/notification/private", 1, withTarget(`"userId":5`))
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Message, "user service is unavailable")
	_, ok := env.TakeCommand(t, command.Queue, 300*time.Millisecond)
	assert.False(t, ok, "nothing is queued")
}

// TestSendQueuesACommand covers the targets that need no user check; a private notification's
// whole way, from the POST to each channel, is gateway/e2e/notification_delivery_test.go.
func TestSendQueuesACommand(t *testing.T) {
	env.PurgeCommands(t)
	api := env.StartAPI(t, servicetest.APIOptions{})
	for target, want := range map[string]recipient.Target{
		`"group":"admin"`: {Group: "admin"},
		`"all":"ignored"`: {All: true},
	} {
		path := "/v2/notification/group"
		if strings.Contains(target, "all") {
			path = "/v2/notification/public/"
		}
		status, res := servicetest.Post(t, api.URL, path, 1, withTarget(target))
		require.Equal(t, http.StatusOK, status, res.Message)
		assert.True(t, res.Success)
		assert.Equal(t, "", res.Message)
		assert.JSONEq(t, `[]`, string(res.Data))

		raw, ok := env.TakeCommand(t, command.Queue, 2*time.Second)
		require.True(t, ok, "the command is on the queue once the answer is given")
		cmd, err := command.Decode(raw)
		require.NoError(t, err)
		assert.Equal(t, want, cmd.Target)
		assert.Equal(t, notification.Content{Title: "Заказ №5", Text: "Проверьте лиды", Priority: "urgent", Level: "warning"}, cmd.Content)
		_, err = uuid.Parse(cmd.CommandID)
		assert.NoError(t, err)
	}
}

func TestSendIsIdempotent(t *testing.T) {
	env.PurgeCommands(t)
	api := env.StartAPI(t, servicetest.APIOptions{})
	key := "notify-" + uuid.NewString()
	s1, r1 := servicetest.Post(t, api.URL, "/v2/notification/public", 1, body, "Idempotency-Key", key)
	s2, r2 := servicetest.Post(t, api.URL, "/v2/notification/public", 1, body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, s1)
	require.Equal(t, http.StatusOK, s2)
	assert.Equal(t, "true", r2.Header.Get("Idempotent-Replayed"))
	assert.Empty(t, r1.Header.Get("Idempotent-Replayed"))
	_, ok := env.TakeCommand(t, command.Queue, time.Second)
	require.True(t, ok)
	_, ok = env.TakeCommand(t, command.Queue, 300*time.Millisecond)
	assert.False(t, ok, "a replay publishes nothing")

	s3, _ := servicetest.Post(t, api.URL, "/v2/notification/public", 1, withTarget(`"x":1`), "Idempotency-Key", key)
	assert.Equal(t, http.StatusConflict, s3)
}

func TestSendWithoutBrokerConfirmIs503(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{AMQPURL: "amqp://guest:guest@" + servicetest.ClosedAddr(t) + "/", ConfirmTimeout: 300 * time.Millisecond})
	start := time.Now()
	status, res := servicetest.Post(t, api.URL, "/v2/notification/public", 1, body)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Message, "message broker is unavailable")
	assert.Less(t, time.Since(start), 2*time.Second)

	status, res = servicetest.Call(t, http.MethodGet, api.URL+"/readyz", 0, "")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, res.Message, "broker: not connected")
}

func TestHealth(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{})
	// Ready once the broker is connected and the live listener subscribed; no token needed.
	assert.Eventually(t, func() bool {
		resp, err := http.Get(api.URL + "/readyz/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond)
}

func TestRoutesNeedTheInternalToken(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{})
	req, err := http.NewRequest(http.MethodGet, api.URL+"/v2/notification", nil)
	require.NoError(t, err)
	req.Header.Set("X-User-Id", "1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// store puts records for users straight into the database, as the worker would.
func store(t *testing.T, c notification.Content, users ...int64) []notification.Notification {
	t.Helper()
	var out []notification.Notification
	require.NoError(t, db.InTx(context.Background(), env.DB, func(tx *sqlx.Tx) error {
		var err error
		out, err = notification.InsertForRecipients(context.Background(), tx, uuid.NewString(), c, users)
		return err
	}))
	return out
}

type page struct {
	List  []notification.View `json:"list"`
	Next  int                 `json:"next"`
	Total int                 `json:"total"`
}

func list(t *testing.T, url string, user int64, query string) page {
	t.Helper()
	status, res := servicetest.Call(t, http.MethodGet, url+"/v2/notification/"+query, user, "")
	require.Equal(t, http.StatusOK, status, res.Message)
	var p page
	require.NoError(t, json.Unmarshal(res.Data, &p))
	return p
}

func TestInbox(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{})
	const me, other = 501, 502
	var mine []notification.Notification
	for i := range 3 {
		mine = append(mine, store(t, notification.Content{Title: "n" + string(rune('0'+i)), Text: "t", Priority: "default", Level: "success"}, me, other)...)
	}
	p := list(t, api.URL, me, "")
	assert.Equal(t, 3, p.Total)
	assert.Equal(t, 3, p.Next)
	require.Len(t, p.List, 3)
	assert.Equal(t, []string{"n2", "n1", "n0"}, []string{p.List[0].Title, p.List[1].Title, p.List[2].Title}, "newest first")
	assert.False(t, p.List[0].IsRead)
	assert.Nil(t, p.List[0].ReadAt)
	_, err := time.Parse(time.RFC3339, p.List[0].CreatedAt)
	assert.NoError(t, err)
	assert.True(t, strings.HasSuffix(p.List[0].CreatedAt, "+00:00"))

	p = list(t, api.URL, me, "?offset=1&limit=1")
	assert.Equal(t, 3, p.Total)
	assert.Equal(t, 2, p.Next)
	require.Len(t, p.List, 1)
	assert.Equal(t, "n1", p.List[0].Title)

	newest := p.List[0].ID
	status, res := servicetest.Call(t, http.MethodPost, api.URL+"/v2/notification/read/"+itoa(newest)+"/", me, "")
	require.Equal(t, http.StatusOK, status, res.Message)
	assert.JSONEq(t, `[]`, string(res.Data))
	status, _ = servicetest.Call(t, http.MethodPost, api.URL+"/v2/notification/read/"+itoa(newest), me, "")
	assert.Equal(t, http.StatusOK, status, "marking again is fine")

	unread := list(t, api.URL, me, "?unread=1")
	assert.Equal(t, 2, unread.Total)
	for _, v := range unread.List {
		assert.NotEqual(t, newest, v.ID)
	}
	all := list(t, api.URL, me, "?unread=0")
	assert.Equal(t, 3, all.Total)
	for _, v := range all.List {
		if v.ID == newest {
			assert.True(t, v.IsRead)
			require.NotNil(t, v.ReadAt)
		}
	}

	// Another user's notification is not found; bad ids and filters are 400; no caller is 401.
	var othersID int64
	for _, n := range mine {
		if n.UserID == other {
			othersID = n.ID
		}
	}
	status, res = servicetest.Call(t, http.MethodPost, api.URL+"/v2/notification/read/"+itoa(othersID), me, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "notification "+itoa(othersID)+" not found", res.Message)
	assert.Equal(t, 3, list(t, api.URL, other, "?unread=1").Total, "the other user's state is untouched")
	status, _ = servicetest.Call(t, http.MethodPost, api.URL+"/v2/notification/read/0", me, "")
	assert.Equal(t, http.StatusBadRequest, status)
	status, res = servicetest.Call(t, http.MethodGet, api.URL+"/v2/notification?limit=500&unread=yes", me, "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, map[string]string{"limit": "must be an integer from 1 to 100", "unread": "must be 0 or 1"}, res.Errors())
	status, _ = servicetest.Call(t, http.MethodGet, api.URL+"/v2/notification", 0, "")
	assert.Equal(t, http.StatusUnauthorized, status)

	empty := list(t, api.URL, 999999, "")
	assert.Equal(t, page{List: []notification.View{}}, empty)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
