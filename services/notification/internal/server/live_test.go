package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamReceivesTheUsersNotificationsLive publishes live events as the worker's live channel
// does and reads them from the API's stream. The whole way from a POST is end to end, with the
// real user service: gateway/e2e/notification_delivery_test.go.
func TestStreamReceivesTheUsersNotificationsLive(t *testing.T) {
	api := env.StartAPI(t, servicetest.APIOptions{})
	publisher := mq.NewPublisher(env.Dial(t, "test-live-publisher"))
	t.Cleanup(publisher.Close)
	sender := live.NewSender(publisher)
	const me, other = 601, 602

	token := []string{"X-Internal-Token", servicetest.Token}
	mine := servicetest.Stream(t, api.URL+"/v2/notification/stream/", append(token, "X-User-Id", strconv.Itoa(me))...)
	theirs := servicetest.Stream(t, api.URL+"/v2/notification/stream", append(token, "X-User-Id", strconv.Itoa(other))...)
	require.True(t, api.Hub.Online(me))

	push := func(c notification.Content) notification.Notification {
		n := store(t, c, me)[0]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, sender.Send(ctx, delivery.Delivery{Notification: n, Channel: delivery.Live}))
		return n
	}

	start := time.Now()
	n := push(notification.Content{Title: "Срочно", Text: "Перезвоните клиенту", Priority: "urgent", Level: "danger"})
	ev, ok := servicetest.Next(mine, "notification", time.Second)
	require.True(t, ok, "the notification arrives within a second")
	t.Logf("live after %s", time.Since(start))
	var m live.Message
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &m))
	assert.Equal(t, n.ID, m.ID)
	assert.Equal(t, "Срочно", m.Title)
	assert.Equal(t, "Перезвоните клиенту", m.Text)
	assert.EqualValues(t, "urgent", m.Priority)
	assert.EqualValues(t, "danger", m.Level)
	assert.True(t, m.OpenAutomatically, "urgent notifications open by themselves")
	assert.False(t, m.IsRead)

	push(notification.Content{Title: "Plan", Text: "Daily plan", Priority: "default", Level: "default"})
	ev, ok = servicetest.Next(mine, "notification", time.Second)
	require.True(t, ok)
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &m))
	assert.Equal(t, "Plan", m.Title)
	assert.False(t, m.OpenAutomatically)

	_, ok = servicetest.Next(theirs, "notification", 300*time.Millisecond)
	assert.False(t, ok, "another user's stream gets nothing")

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
	assert.False(t, api.Hub.Online(me))
}
