package worker_test

import (
	"encoding/json"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worker's way with recipients (private, group and public targets, every channel preference,
// redelivered commands, a user deleted since) runs end to end against the real user service:
// gateway/e2e/notification_delivery_test.go. Here: what needs no recipients.

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "notification_worker", func(e *servicetest.Env) { env = e })
}

func TestUndecodableCommandIsDeadLetteredAtOnce(t *testing.T) {
	env.PurgeCommands(t)
	env.StartWorker(t, servicetest.WorkerOptions{})
	env.Publish(t, "garbage-1", []byte(`{"not":"a command"`))
	raw, ok := env.TakeCommand(t, command.Queue+mq.DeadLetterSuffix, 5*time.Second)
	require.True(t, ok, "an undecodable command is dead-lettered")
	assert.Equal(t, `{"not":"a command"`, string(raw))
}

// TestCommandWaitsWhileTheUserServiceIsDown: no user service runs in this package, so recipients
// cannot be resolved; the command is neither stored, nor dead-lettered, nor lost.
func TestCommandWaitsWhileTheUserServiceIsDown(t *testing.T) {
	env.PurgeCommands(t)
	cmd := command.Command{CommandID: uuid.NewString(), Target: recipient.Target{Group: "admin"},
		Content: notification.Content{Title: "wait", Text: "t", Priority: "default", Level: "default"}}
	raw, err := json.Marshal(cmd)
	require.NoError(t, err)

	t.Run("worker running", func(t *testing.T) {
		env.StartWorker(t, servicetest.WorkerOptions{})
		env.Publish(t, cmd.CommandID, raw)
		time.Sleep(time.Second) // several tries
		var stored int
		require.NoError(t, env.DB.Get(&stored, `SELECT count(*) FROM notifications WHERE command_id = $1`, cmd.CommandID))
		assert.Zero(t, stored)
		_, dead := env.TakeCommand(t, command.Queue+mq.DeadLetterSuffix, 100*time.Millisecond)
		assert.False(t, dead, "a user service outage is not the command's fault")
	}) // the worker stops here

	back, ok := env.TakeCommand(t, command.Queue, 5*time.Second)
	require.True(t, ok, "the command is back on the queue for the next worker")
	got, err := command.Decode(back)
	require.NoError(t, err)
	assert.Equal(t, cmd.CommandID, got.CommandID)
}
