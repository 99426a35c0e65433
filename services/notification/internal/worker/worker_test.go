package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/servicetest"
	"ccplatform/services/notification/internal/worker"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "notification_worker", func(e *servicetest.Env) { env = e })
}

// send publishes a command to target and returns its id.
func send(t *testing.T, target recipient.Target, c notification.Content) string {
	t.Helper()
	cmd := command.Command{CommandID: uuid.NewString(), Target: target, Content: c}
	raw, err := json.Marshal(cmd)
	require.NoError(t, err)
	env.Publish(t, cmd.CommandID, raw)
	return cmd.CommandID
}

func content(title string, p notification.Priority) notification.Content {
	return notification.Content{Title: title, Text: "Текст уведомления: " + title, Priority: p, Level: notification.LevelWarning}
}

// records is how many records a command made, by user.
func records(t *testing.T, commandID string) map[int64]int {
	t.Helper()
	var rows []struct {
		UserID int64 `db:"user_id"`
		N      int   `db:"n"`
	}
	require.NoError(t, env.DB.Select(&rows, `SELECT user_id, count(*) AS n FROM notifications WHERE command_id = $1 GROUP BY user_id`, commandID))
	out := map[int64]int{}
	for _, r := range rows {
		out[r.UserID] = r.N
	}
	return out
}

type deliveryRow struct {
	Channel   string  `db:"channel"`
	Status    string  `db:"status"`
	Attempts  int     `db:"attempts"`
	LastError *string `db:"last_error"`
}

// deliveries of the command's record for user, by channel.
func deliveries(t *testing.T, commandID string, user int64) map[string]deliveryRow {
	t.Helper()
	var rows []deliveryRow
	require.NoError(t, env.DB.Select(&rows, `
SELECT d.channel, d.status, d.attempts, d.last_error FROM deliveries d JOIN notifications n ON n.id = d.notification_id
WHERE n.command_id = $1 AND n.user_id = $2`, commandID, user))
	out := map[string]deliveryRow{}
	for _, r := range rows {
		out[r.Channel] = r
	}
	return out
}

// settled waits until no delivery of the command is pending.
func settled(t *testing.T, commandID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var stored, pending int
		require.NoError(t, env.DB.Get(&stored, `SELECT count(*) FROM notifications WHERE command_id = $1`, commandID))
		require.NoError(t, env.DB.Get(&pending, `
SELECT count(*) FROM deliveries d JOIN notifications n ON n.id = d.notification_id
WHERE n.command_id = $1 AND d.status = 'pending'`, commandID))
		return stored > 0 && pending == 0
	}, 10*time.Second, 20*time.Millisecond)
}

func TestEmailKeepsACyrillicSubject(t *testing.T) {
	smtp := servicetest.StartSMTP(t, "127.0.0.1:0")
	env.Users.Put(recipient.User{ID: 11, IsActive: true, Email: "operator11@example.com", EmailNotificationsEnabled: true})
	env.StartWorker(t, servicetest.WorkerOptions{SMTPAddr: smtp.Addr})

	c := notification.Content{Title: "Срочно: перезвоните клиенту №42", Text: "Клиент ждёт звонка до 18:00.", Priority: "default", Level: "danger"}
	id := send(t, recipient.Target{UserID: 11}, c)
	require.Eventually(t, func() bool { return len(smtp.To("operator11@example.com")) == 1 }, 5*time.Second, 20*time.Millisecond)
	m := smtp.To("operator11@example.com")[0]
	assert.Equal(t, c.Title, m.Subject, "the MIME-encoded subject decodes to the title")
	assert.NotEqual(t, c.Title, m.Header.Get("Subject"), "non-ASCII is encoded on the wire")
	assert.Contains(t, m.Body, c.Text)
	assert.Equal(t, "noreply@callcenter.local", m.From)
	settled(t, id)
	assert.Equal(t, "sent", deliveries(t, id, 11)["email"].Status)
}

func TestMessengerGetsTheUsersChat(t *testing.T) {
	env.Users.Put(recipient.User{ID: 12, IsActive: true, MessengerNotificationsEnabled: true, MessengerChatID: "-100777"})
	env.StartWorker(t, servicetest.WorkerOptions{Messenger: true})

	id := send(t, recipient.Target{UserID: 12}, notification.Content{Title: "Новый лид", Text: "Заказ 7", Priority: "urgent", Level: "success"})
	require.Eventually(t, func() bool { return len(env.Bot.To("-100777")) == 1 }, 5*time.Second, 20*time.Millisecond)
	m := env.Bot.To("-100777")[0]
	assert.Contains(t, m.Text, "Новый лид")
	assert.Contains(t, m.Text, "Заказ 7")
	settled(t, id)
	d := deliveries(t, id, 12)
	assert.Equal(t, "sent", d["messenger"].Status)
	assert.Equal(t, "sent", d["live"].Status)
	assert.NotContains(t, d, "email", "e-mail is not configured for this worker")
}

// TestEveryPreferenceCombination sends a default and an urgent notification to users with each
// combination of enabled × priority setting, on both channels, and counts what arrived.
func TestEveryPreferenceCombination(t *testing.T) {
	smtp := servicetest.StartSMTP(t, "127.0.0.1:0")
	env.StartWorker(t, servicetest.WorkerOptions{SMTPAddr: smtp.Addr, Messenger: true})
	urgent := "urgent"
	type combo struct {
		enabled bool
		setting *string
	}
	combos := []combo{{false, nil}, {false, &urgent}, {true, nil}, {true, &urgent}}
	for i, cb := range combos {
		id := int64(200 + i)
		env.Users.Put(recipient.User{ID: id, IsActive: true, Email: addr(id),
			EmailNotificationsEnabled: cb.enabled, EmailNotificationsPriority: cb.setting,
			MessengerNotificationsEnabled: cb.enabled, MessengerNotificationsPriority: cb.setting, MessengerChatID: recipient.ChatID(chat(id))})
	}
	var ids []string
	for i := range combos {
		for _, p := range []notification.Priority{notification.PriorityDefault, notification.PriorityUrgent} {
			ids = append(ids, send(t, recipient.Target{UserID: int64(200 + i)}, content("combo "+string(p), p)))
		}
	}
	for _, id := range ids {
		settled(t, id)
	}
	for i, cb := range combos {
		id := int64(200 + i)
		var want []string
		if cb.enabled {
			want = append(want, "combo urgent")
			if cb.setting == nil {
				want = append(want, "combo default")
			}
		}
		var gotMail, gotChat []string
		for _, m := range smtp.To(addr(id)) {
			gotMail = append(gotMail, m.Subject)
		}
		for _, m := range env.Bot.To(chat(id)) {
			gotChat = append(gotChat, strings.SplitN(strings.TrimPrefix(m.Text, "❗ "), "\n", 2)[0])
		}
		assert.ElementsMatch(t, want, gotMail, "e-mail, enabled=%t urgentOnly=%t", cb.enabled, cb.setting != nil)
		assert.ElementsMatch(t, want, gotChat, "messenger, enabled=%t urgentOnly=%t", cb.enabled, cb.setting != nil)
	}
}

func addr(id int64) string { return "user" + itoa(id) + "@example.com" }
func chat(id int64) string { return "chat-" + itoa(id) }
func itoa(n int64) string  { b, _ := json.Marshal(n); return string(b) }

func TestGroupReachesExactlyItsActiveUsers(t *testing.T) {
	env.Users.Put(
		recipient.User{ID: 301, IsActive: true, AccessGroup: "arbitration"},
		recipient.User{ID: 302, IsActive: true, AccessGroup: "arbitration"},
		recipient.User{ID: 303, IsActive: false, AccessGroup: "arbitration"},
		recipient.User{ID: 304, IsActive: true, AccessGroup: "moderator"},
		recipient.User{ID: 305, IsActive: true, AccessGroup: ""},
	)
	env.StartWorker(t, servicetest.WorkerOptions{})
	id := send(t, recipient.Target{Group: "arbitration"}, content("group", notification.PriorityDefault))
	settled(t, id)
	assert.Equal(t, map[int64]int{301: 1, 302: 1}, records(t, id))

	all := send(t, recipient.Target{All: true}, content("all", notification.PriorityDefault))
	settled(t, all)
	got := records(t, all)
	assert.NotContains(t, got, int64(303), "inactive users are not notified")
	for _, u := range []int64{301, 302, 304, 305} {
		assert.Equal(t, 1, got[u], "user %d", u)
	}
}

func TestFailingChannelRetriesWithoutBlockingTheOthers(t *testing.T) {
	down := servicetest.ClosedAddr(t)
	env.Users.Put(recipient.User{ID: 401, IsActive: true, Email: "u401@example.com", EmailNotificationsEnabled: true,
		MessengerNotificationsEnabled: true, MessengerChatID: "chat-401"})
	env.StartWorker(t, servicetest.WorkerOptions{SMTPAddr: down, Messenger: true})

	start := time.Now()
	id := send(t, recipient.Target{UserID: 401}, content("retry", notification.PriorityUrgent))
	require.Eventually(t, func() bool { return len(env.Bot.To("chat-401")) == 1 }, 3*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(start), 2*time.Second, "the messenger does not wait for e-mail")
	assert.Equal(t, map[int64]int{401: 1}, records(t, id), "the record is stored whatever the channels do")

	require.Eventually(t, func() bool {
		d := deliveries(t, id, 401)["email"]
		return d.Attempts >= 3 && d.Status == "pending" && d.LastError != nil
	}, 5*time.Second, 20*time.Millisecond, "e-mail is retried")
	d := deliveries(t, id, 401)
	assert.Equal(t, "sent", d["messenger"].Status)
	assert.Equal(t, "sent", d["live"].Status)

	// The SMTP server comes up: the next retry goes through.
	smtp := servicetest.StartSMTP(t, down)
	require.Eventually(t, func() bool { return len(smtp.To("u401@example.com")) == 1 }, 5*time.Second, 20*time.Millisecond)
	settled(t, id)
	assert.Equal(t, "sent", deliveries(t, id, 401)["email"].Status)
	assert.Len(t, env.Bot.To("chat-401"), 1, "the messenger got it once")
}

func TestRetriesAreBounded(t *testing.T) {
	env.Users.Put(recipient.User{ID: 402, IsActive: true, Email: "u402@example.com", EmailNotificationsEnabled: true})
	env.StartWorker(t, servicetest.WorkerOptions{SMTPAddr: servicetest.ClosedAddr(t),
		Retry: delivery.RetryPolicy{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond, MaxAttempts: 3}})
	id := send(t, recipient.Target{UserID: 402}, content("bounded", notification.PriorityDefault))
	settled(t, id)
	d := deliveries(t, id, 402)["email"]
	assert.Equal(t, "failed", d.Status)
	assert.Equal(t, 3, d.Attempts)
	require.NotNil(t, d.LastError)
	assert.NotEmpty(t, *d.LastError)
	assert.Equal(t, map[int64]int{402: 1}, records(t, id), "a failed channel keeps the record")
}

func TestRedeliveredCommandStoresNothingTwice(t *testing.T) {
	env.Users.Put(
		recipient.User{ID: 501, IsActive: true, AccessGroup: "client", MessengerNotificationsEnabled: true, MessengerChatID: "chat-501"},
		recipient.User{ID: 502, IsActive: true, AccessGroup: "client", MessengerNotificationsEnabled: true, MessengerChatID: "chat-502"},
	)
	env.StartWorker(t, servicetest.WorkerOptions{Messenger: true})
	cmd := command.Command{CommandID: uuid.NewString(), Target: recipient.Target{Group: "client"}, Content: content("twice", notification.PriorityDefault)}
	raw, err := json.Marshal(cmd)
	require.NoError(t, err)
	env.Publish(t, cmd.CommandID, raw)
	settled(t, cmd.CommandID)
	env.Publish(t, cmd.CommandID, raw) // the broker hands the same command again
	env.Publish(t, cmd.CommandID, raw)
	// A later command to the same users shows the duplicates were processed before it.
	after := send(t, recipient.Target{UserID: 501}, content("after", notification.PriorityDefault))
	settled(t, after)

	assert.Equal(t, map[int64]int{501: 1, 502: 1}, records(t, cmd.CommandID))
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM deliveries d JOIN notifications x ON x.id = d.notification_id WHERE x.command_id = $1`, cmd.CommandID))
	assert.Equal(t, 4, n, "live and messenger, once per user")
	twice := 0
	for _, m := range env.Bot.To("chat-501") {
		if strings.HasPrefix(m.Text, "twice") {
			twice++
		}
	}
	assert.Equal(t, 1, twice, "sent once")
}

func TestStoreIsIdempotentPerCommandAndUser(t *testing.T) {
	env.Users.Put(recipient.User{ID: 601, IsActive: true})
	conn := env.Dial(t, "test-store")
	loop := delivery.NewLoop(delivery.NewStore(env.DB), map[delivery.Channel]delivery.Sender{}, delivery.LoopConfig{}, env.Log)
	w := worker.New(worker.Deps{DB: env.DB, Conn: conn, Recipients: env.Directory(), Loop: loop, Log: env.Log})
	cmd := command.Command{CommandID: uuid.NewString(), Target: recipient.Target{UserID: 601}, Content: content("once", notification.PriorityDefault)}
	n, err := w.Store(context.Background(), cmd)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = w.Store(context.Background(), cmd)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}

func TestBadCommandsNeverBlockTheQueue(t *testing.T) {
	env.StartWorker(t, servicetest.WorkerOptions{})
	env.Publish(t, "garbage-1", []byte(`{"not":"a command"`))
	raw, ok := env.TakeCommand(t, command.Queue+mq.DeadLetterSuffix, 5*time.Second)
	require.True(t, ok, "an undecodable command is dead-lettered")
	assert.Equal(t, `{"not":"a command"`, string(raw))

	gone := send(t, recipient.Target{UserID: 999999}, content("nobody", notification.PriorityDefault))
	env.Users.Put(recipient.User{ID: 602, IsActive: true})
	next := send(t, recipient.Target{UserID: 602}, content("next", notification.PriorityDefault))
	settled(t, next)
	assert.Empty(t, records(t, gone), "a command for a user who no longer exists is dropped")
}
