package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoAdminID is the id of the demo admin, whose key the stack uses.
func demoAdminID(t *testing.T) int64 {
	t.Helper()
	out, err := stack.UserAdmin("user", "list")
	require.NoError(t, err)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] == "admin@demo.callcenter.local" {
			id, err := strconv.ParseInt(f[0], 10, 64)
			require.NoError(t, err)
			return id
		}
	}
	t.Fatalf("no demo admin in:\n%s", out)
	return 0
}

type sseEvent struct{ name, data string }

// openStream opens the stack key's user's notification stream (see openStreamAs).
func openStream(t *testing.T) <-chan sseEvent {
	t.Helper()
	return openStreamAs(t, stack.APIKey)
}

// openStreamAs opens a user's notification stream through the gateway and waits for its ready
// event; it is closed when the test ends.
func openStreamAs(t *testing.T, key string) <-chan sseEvent {
	t.Helper()
	events := openSSE(t, "/v2/notification/stream/", key)
	ev, ok := nextEvent(events, "ready", 10*time.Second)
	require.True(t, ok, "the stream says it is ready")
	assert.Contains(t, ev.data, `"userId"`)
	return events
}

// openSSE opens an event stream of the gateway's with key and passes on its events as they come;
// it is closed when the test ends.
func openSSE(t *testing.T, path, key string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.BaseURL+path, nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := stack.Do(t, req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))
	events := make(chan sseEvent, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && (ev.name != "" || ev.data != ""):
				select {
				case events <- ev:
				case <-ctx.Done():
					return
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimPrefix(line[len("data:"):], " ")
			}
		}
	}()
	return events
}

func nextEvent(events <-chan sseEvent, name string, wait time.Duration) (sseEvent, bool) {
	deadline := time.After(wait)
	for {
		select {
		case ev, open := <-events:
			if !open {
				return sseEvent{}, false
			}
			if ev.name == name {
				return ev, true
			}
		case <-deadline:
			return sseEvent{}, false
		}
	}
}

type notificationView struct {
	ID                int64  `json:"id"`
	Title             string `json:"title"`
	Text              string `json:"text"`
	Priority          string `json:"priority"`
	Level             string `json:"level"`
	IsRead            bool   `json:"isRead"`
	OpenAutomatically bool   `json:"openAutomatically"`
}

func inbox(t *testing.T, query string) (list []notificationView, total int) {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/notification/"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var d struct {
		List  []notificationView `json:"list"`
		Total int                `json:"total"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &d))
	return d.List, d.Total
}

func TestPrivateNotificationReachesTheOpenStreamWithinASecond(t *testing.T) {
	me := demoAdminID(t)
	events := openStream(t)

	title := "Срочно: клиент ждёт " + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	r := stack.Call(t, http.MethodPost, "/v2/notification/private/", map[string]any{
		"userId": me, "title": title, "text": "Перезвоните до 18:00", "priority": "urgent", "level": "danger",
	})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.True(t, r.Env.Success)
	assert.JSONEq(t, `[]`, string(r.Env.Data))

	ev, ok := nextEvent(events, "notification", time.Second)
	require.True(t, ok, "the notification arrives within a second of the POST")
	t.Logf("live after %s", time.Since(start))
	var n notificationView
	require.NoError(t, json.Unmarshal([]byte(ev.data), &n))
	assert.Equal(t, title, n.Title)
	assert.Equal(t, "urgent", n.Priority)
	assert.True(t, n.OpenAutomatically)

	// The record is in the caller's inbox, unread, until it is marked read.
	unread, _ := inbox(t, "?unread=1")
	require.NotEmpty(t, unread)
	assert.Equal(t, n.ID, unread[0].ID)
	r = stack.Call(t, http.MethodPost, "/v2/notification/read/"+strconv.FormatInt(n.ID, 10)+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	unread, _ = inbox(t, "?unread=1")
	for _, u := range unread {
		assert.NotEqual(t, n.ID, u.ID)
	}
	all, _ := inbox(t, "?limit=100")
	found := false
	for _, x := range all {
		if x.ID == n.ID {
			found = true
			assert.True(t, x.IsRead)
		}
	}
	assert.True(t, found)
}

func TestGroupAndPublicNotificationsReachTheAdmin(t *testing.T) {
	events := openStream(t)
	for _, tc := range []struct {
		path string
		body map[string]any
	}{
		{"/v2/notification/group/", map[string]any{"group": "admin", "title": "Для админов", "text": "t", "priority": "default", "level": "success"}},
		{"/v2/notification/public", map[string]any{"title": "Для всех", "text": "t", "priority": "default", "level": "default"}},
	} {
		r := stack.Call(t, http.MethodPost, tc.path, tc.body)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		ev, ok := nextEvent(events, "notification", 2*time.Second)
		require.True(t, ok, tc.path)
		var n notificationView
		require.NoError(t, json.Unmarshal([]byte(ev.data), &n))
		assert.Equal(t, tc.body["title"], n.Title)
		assert.False(t, n.OpenAutomatically, "only urgent ones open by themselves")
	}
}

func TestNotificationBodiesAreCheckedAtOnce(t *testing.T) {
	r := stack.Call(t, http.MethodPost, "/v2/notification/private/", map[string]any{"userId": 999999999, "title": "t", "text": "t", "priority": "default", "level": "default"})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, map[string]string{"userId": "user 999999999 does not exist"}, r.Errors(t))

	out, err := stack.UserAdmin("user", "create", "--email", "inactive-recipient@e2e.local", "--active=false")
	require.NoError(t, err)
	inactive, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	require.NoError(t, err, out)
	r = stack.Call(t, http.MethodPost, "/v2/notification/private/", map[string]any{"userId": inactive, "title": "t", "text": "t", "priority": "default", "level": "default"})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, map[string]string{"userId": fmt.Sprintf("user %d is not active", inactive)}, r.Errors(t))

	r = stack.Call(t, http.MethodPost, "/v2/notification/group/", map[string]any{"group": "vip", "title": "", "priority": "high", "level": "default"})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Equal(t, []string{"group", "priority", "text", "title"}, keys(r.Errors(t)))
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
