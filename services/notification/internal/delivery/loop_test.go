package delivery_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The delivery loop against the third parties it sends to: a real SMTP server and a bot API on
// local ports. The records and deliveries are the service's own rows, written as the worker writes
// them; who gets what (the recipients and their preferences) is tested end to end with the real
// user service in gateway/e2e/notification_delivery_test.go.

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "notification_delivery", func(e *servicetest.Env) { env = e })
}

// plan stores a record of c for user with a delivery on each channel (channel → destination), in
// one transaction as the worker does, and returns the record.
func plan(t *testing.T, user int64, c notification.Content, channels map[delivery.Channel]string) notification.Notification {
	t.Helper()
	var n notification.Notification
	require.NoError(t, db.InTx(context.Background(), env.DB, func(tx *sqlx.Tx) error {
		created, err := notification.InsertForRecipients(context.Background(), tx, uuid.NewString(), c, []int64{user})
		if err != nil {
			return err
		}
		n = created[0]
		var planned []delivery.Planned
		for ch, dest := range channels {
			planned = append(planned, delivery.Planned{NotificationID: n.ID, Channel: ch, Destination: dest})
		}
		return delivery.Insert(context.Background(), tx, planned)
	}))
	return n
}

// unique is a destination no other test (or run of this one) uses.
func unique(prefix string) string { return prefix + "-" + uuid.NewString()[:8] }

type deliveryRow struct {
	Status    string  `db:"status"`
	Attempts  int     `db:"attempts"`
	LastError *string `db:"last_error"`
}

func deliveryOf(t *testing.T, n notification.Notification, ch delivery.Channel) deliveryRow {
	t.Helper()
	var r deliveryRow
	require.NoError(t, env.DB.Get(&r, `SELECT status, attempts, last_error FROM deliveries WHERE notification_id = $1 AND channel = $2`, n.ID, string(ch)))
	return r
}

func recordExists(t *testing.T, n notification.Notification) bool {
	t.Helper()
	var count int
	require.NoError(t, env.DB.Get(&count, `SELECT count(*) FROM notifications WHERE id = $1`, n.ID))
	return count == 1
}

func TestEmailKeepsACyrillicSubject(t *testing.T) {
	smtp := servicetest.StartSMTP(t, "127.0.0.1:0")
	loop := env.StartLoop(t, servicetest.WorkerOptions{SMTPAddr: smtp.Addr()})

	to := unique("operator") + "@example.com"
	c := notification.Content{Title: "Срочно: перезвоните клиенту №42", Text: "Клиент ждёт звонка до 18:00.", Priority: "urgent", Level: "danger"}
	n := plan(t, 11, c, map[delivery.Channel]string{delivery.Email: to})
	loop.Kick()
	require.Eventually(t, func() bool { return len(smtp.To(to)) == 1 }, 5*time.Second, 20*time.Millisecond)
	m := smtp.To(to)[0]
	assert.Equal(t, c.Title, m.Subject, "the MIME-encoded subject decodes to the title")
	assert.NotEqual(t, c.Title, m.Header.Get("Subject"), "non-ASCII is encoded on the wire")
	assert.Contains(t, m.Body, c.Text)
	assert.Equal(t, servicetest.MailFrom, m.From)
	assert.Equal(t, "urgent", m.Header.Get("Importance"))
	require.Eventually(t, func() bool { return deliveryOf(t, n, delivery.Email).Status == "sent" }, 5*time.Second, 20*time.Millisecond)
}

func TestMessengerGetsTheChat(t *testing.T) {
	loop := env.StartLoop(t, servicetest.WorkerOptions{Messenger: true})
	chat := unique("-100")
	n := plan(t, 12, notification.Content{Title: "Новый лид", Text: "Заказ 7", Priority: "urgent", Level: "success"},
		map[delivery.Channel]string{delivery.Messenger: chat})
	loop.Kick()
	require.Eventually(t, func() bool { return len(env.Bot.To(chat)) == 1 }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, "❗ Новый лид\n\nЗаказ 7", env.Bot.To(chat)[0].Text)
	require.Eventually(t, func() bool { return deliveryOf(t, n, delivery.Messenger).Status == "sent" }, 5*time.Second, 20*time.Millisecond)
}

func TestFailingChannelRetriesWithoutBlockingTheOthers(t *testing.T) {
	down := servicetest.ClosedAddr(t)
	loop := env.StartLoop(t, servicetest.WorkerOptions{SMTPAddr: down, Messenger: true})

	to, chat := unique("u401")+"@example.com", unique("chat-401")
	start := time.Now()
	n := plan(t, 401, notification.Content{Title: "retry", Text: "t", Priority: "urgent", Level: "default"},
		map[delivery.Channel]string{delivery.Live: "", delivery.Email: to, delivery.Messenger: chat})
	loop.Kick()
	require.Eventually(t, func() bool { return len(env.Bot.To(chat)) == 1 }, 3*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(start), 2*time.Second, "the messenger does not wait for e-mail")

	require.Eventually(t, func() bool {
		d := deliveryOf(t, n, delivery.Email)
		return d.Attempts >= 3 && d.Status == "pending" && d.LastError != nil
	}, 5*time.Second, 20*time.Millisecond, "e-mail is retried")
	assert.Equal(t, "sent", deliveryOf(t, n, delivery.Messenger).Status)
	assert.Equal(t, "sent", deliveryOf(t, n, delivery.Live).Status)
	assert.True(t, recordExists(t, n), "the record is kept whatever the channels do")

	// The SMTP server comes up: the next retry goes through.
	smtp := servicetest.StartSMTP(t, down)
	require.Eventually(t, func() bool { return len(smtp.To(to)) == 1 }, 5*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return deliveryOf(t, n, delivery.Email).Status == "sent" }, 5*time.Second, 20*time.Millisecond)
	assert.Len(t, env.Bot.To(chat), 1, "the messenger got it once")
}

func TestRetriesAreBounded(t *testing.T) {
	loop := env.StartLoop(t, servicetest.WorkerOptions{SMTPAddr: servicetest.ClosedAddr(t),
		Retry: delivery.RetryPolicy{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond, MaxAttempts: 3}})
	n := plan(t, 402, notification.Content{Title: "bounded", Text: "t", Priority: "default", Level: "default"},
		map[delivery.Channel]string{delivery.Email: "u402@example.com"})
	loop.Kick()
	require.Eventually(t, func() bool { return deliveryOf(t, n, delivery.Email).Status == "failed" }, 5*time.Second, 20*time.Millisecond)
	d := deliveryOf(t, n, delivery.Email)
	assert.Equal(t, 3, d.Attempts)
	require.NotNil(t, d.LastError)
	assert.NotEmpty(t, *d.LastError)
	assert.True(t, recordExists(t, n), "a failed channel keeps the record")
}

func TestBotRefusalIsNotRetried(t *testing.T) {
	loop := env.StartLoop(t, servicetest.WorkerOptions{Messenger: true})
	n := plan(t, 403, notification.Content{Title: "refused", Text: "t", Priority: "default", Level: "default"},
		map[delivery.Channel]string{delivery.Messenger: ""}) // the bot API answers 400: chat not found
	loop.Kick()
	require.Eventually(t, func() bool { return deliveryOf(t, n, delivery.Messenger).Status == "failed" }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, 1, deliveryOf(t, n, delivery.Messenger).Attempts, "a 4xx refusal is permanent")
}
