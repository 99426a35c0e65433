package subscription_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dispatcher records a batch's results on its deliveries, then on their subscriptions
// (failing_since). A delete arriving between the two must wait for that transaction, not deadlock
// with it: before, the delete locked the subscription, cascaded into the held delivery, and one of
// the two was aborted with 40P01 (the delete answered 500).
func TestDeleteWaitsForTheDispatcherInsteadOfDeadlocking(t *testing.T) {
	ctx := context.Background()
	client := env.As("601", "client")
	created := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": "http://127.0.0.1:9/hooks", "events": []string{"lead.created"}}))
	var delivery int64
	_, err := env.DB.ExecContext(ctx, `INSERT INTO events (id, type, body, received_at) VALUES ('ev-delete-race', 'lead.created', '{}', now())`)
	require.NoError(t, err)
	require.NoError(t, env.DB.GetContext(ctx, &delivery, `INSERT INTO deliveries (subscription_id, event_id, next_attempt_at, created_at)
VALUES ($1, 'ev-delete-race', now(), now()) RETURNING id`, created.ID))

	// The dispatcher's record transaction, first half: the delivery's result.
	tx, err := env.DB.BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `UPDATE deliveries SET attempts = 1 WHERE id = $1`, delivery)
	require.NoError(t, err)

	deleted := make(chan int, 1)
	go func() {
		deleted <- client.Do(t, http.MethodPost, "/v2/webhook/delete/"+itoa(created.ID), nil).Status
	}()
	// Wait until the delete is blocked on a lock the transaction holds.
	require.Eventually(t, func() bool {
		var waiting int
		_ = env.DB.GetContext(ctx, &waiting, `SELECT count(*) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`)
		return waiting > 0
	}, 10*time.Second, 10*time.Millisecond)

	// Second half: the endpoint's health, on the subscription row.
	_, err = tx.ExecContext(ctx, `UPDATE subscriptions SET failing_since = NULL WHERE id = $1`, created.ID)
	require.NoError(t, err, "the dispatcher's transaction goes on")
	require.NoError(t, tx.Commit())

	select {
	case status := <-deleted:
		assert.Equal(t, http.StatusOK, status, "the delete waited and then went through")
	case <-time.After(10 * time.Second):
		t.Fatal("the delete did not finish")
	}
	var left int
	require.NoError(t, env.DB.GetContext(ctx, &left, `SELECT count(*) FROM deliveries WHERE subscription_id = $1`, created.ID))
	assert.Zero(t, left)
}
