package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/bottest"
	"ccplatform/pkg/smtptest"

	"ccplatform/pkg/mq"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The notification worker delivers through two third parties the platform does not run: an SMTP
// server and a messenger's bot API. TestMain starts both in this process before the stack and
// points notification-worker at them (deliveryPeers.workerEnv); everything else is the real stack,
// recipients included: the users below are made with user-admin and resolved by the user service.

// peers are the SMTP server and bot API the stack's notification-worker delivers to.
var peers *deliveryPeers

const (
	botToken  = "4242:e2e-bot-token"
	mailFrom  = "noreply@callcenter.local"
	mailQuiet = time.Second // how long to wait for something that must not arrive
)

type deliveryPeers struct {
	mail *smtptest.Server
	bot  *bottest.API
}

func startDeliveryPeers() (*deliveryPeers, error) {
	m, err := smtptest.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &deliveryPeers{mail: m, bot: bottest.New(botToken)}, nil
}

// workerEnv configures notification-worker's e-mail and messenger channels on the peers, with
// retries fast enough for a test to see several.
func (p *deliveryPeers) workerEnv() []string {
	host, port, _ := net.SplitHostPort(p.mail.Addr())
	return []string{
		"SMTP_HOST=" + host, "SMTP_PORT=" + port, "SMTP_TLS=none", "SMTP_FROM=" + mailFrom,
		"MESSENGER_API_URL=" + p.bot.URL(), "MESSENGER_BOT_TOKEN=" + botToken,
		"DELIVERY_RETRY_BASE=100ms", "DELIVERY_RETRY_MAX=400ms", "DELIVERY_MAX_ATTEMPTS=100",
		"DELIVERY_POLL_INTERVAL=100ms",
		// A send to these local peers takes milliseconds; a short lease (2 × this) lets the fault
		// test see the deliveries of a killed worker sent again within seconds.
		"DELIVERY_SEND_TIMEOUT=3s",
	}
}

func (p *deliveryPeers) close() {
	p.mail.Stop()
	p.bot.Close()
}

// subjects are the subjects of the mail received for address.
func subjects(address string) []string {
	out := []string{}
	for _, m := range peers.mail.To(address) {
		out = append(out, m.Subject)
	}
	return out
}

// chatTitles are the titles (the first line, the urgent mark dropped) of the messages for chat.
func chatTitles(chat string) []string {
	out := []string{}
	for _, m := range peers.bot.To(chat) {
		out = append(out, strings.TrimPrefix(strings.SplitN(m.Text, "\n", 2)[0], "❗ "))
	}
	return out
}

// createUser makes a user with user-admin user create (flags as the command takes them) and returns
// its id.
func createUser(t *testing.T, email string, flags ...string) int64 {
	t.Helper()
	out, err := stack.UserAdmin(append([]string{"user", "create", "--email", email}, flags...)...)
	require.NoError(t, err)
	id, err := strconv.ParseInt(out, 10, 64)
	require.NoError(t, err, "user-admin user create prints the id: %q", out)
	return id
}

// keyFor issues an API key for a user, to call the gateway as that user.
func keyFor(t *testing.T, userID int64) string {
	t.Helper()
	key, err := stack.UserAdmin("apikey", "create", "--user", strconv.FormatInt(userID, 10), "--name", "e2e")
	require.NoError(t, err)
	return key
}

// notify sends a notification through the gateway as the demo admin.
func notify(t *testing.T, path string, body map[string]any) {
	t.Helper()
	r := stack.Call(t, http.MethodPost, path, body)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.True(t, r.Env.Success)
}

func private(userID int64, title, priority string) map[string]any {
	return map[string]any{"userId": userID, "title": title, "text": "Текст: " + title, "priority": priority, "level": "warning"}
}

// notificationsDB reads the notification service's schema, to see what it stored for users who
// have no key (inactive ones) and how a delivery is going.
func notificationsDB(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := sql.Open("postgres", stack.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// recipientsOf is the users who got a record titled title, waiting (bounded) until there are some:
// the worker stores every record of a command in one transaction.
func recipientsOf(t *testing.T, conn *sql.DB, title string) []int64 {
	t.Helper()
	var ids []int64
	require.Eventually(t, func() bool {
		rows, err := conn.Query(`SELECT user_id FROM notifications.notifications WHERE title = $1 ORDER BY user_id`, title)
		require.NoError(t, err)
		defer rows.Close()
		ids = ids[:0]
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		require.NoError(t, rows.Err())
		return len(ids) > 0
	}, 10*time.Second, 50*time.Millisecond, "records of %q", title)
	return ids
}

func TestPrivateNotificationIsMailedWithItsCyrillicSubject(t *testing.T) {
	address := uniqueEmail("mail.cyrillic")
	id := createUser(t, address, "--access-group", "call-center", "--email-notifications=true", "--email-priority=none")

	title := "Срочно: перезвоните клиенту №42"
	notify(t, "/v2/notification/private/", map[string]any{
		"userId": id, "title": title, "text": "Клиент ждёт звонка до 18:00.", "priority": "default", "level": "danger"})
	require.Eventually(t, func() bool { return len(peers.mail.To(address)) > 0 }, 5*time.Second, 20*time.Millisecond,
		"the SMTP server receives the e-mail")
	m := peers.mail.To(address)[0]
	assert.Equal(t, title, m.Subject, "the MIME-encoded subject decodes to the title")
	assert.NotEqual(t, title, m.Header.Get("Subject"), "non-ASCII is encoded on the wire")
	assert.Contains(t, m.Body, "Клиент ждёт звонка до 18:00.")
	assert.Equal(t, mailFrom, m.From)
	assert.Empty(t, m.Header.Get("Importance"), "a default notification is not marked")

	time.Sleep(mailQuiet)
	assert.Len(t, peers.mail.To(address), 1, "mailed once")
}

func TestPrivateNotificationReachesTheUsersMessengerChat(t *testing.T) {
	chat := "-100" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	address := uniqueEmail("messenger")
	id := createUser(t, address, "--email-notifications=false", "--messenger-notifications=true", "--messenger-chat-id", chat)

	notify(t, "/v2/notification/private", map[string]any{"userId": id, "title": "Новый лид", "text": "Заказ 7", "priority": "urgent", "level": "success"})
	require.Eventually(t, func() bool { return len(peers.bot.To(chat)) > 0 }, 5*time.Second, 20*time.Millisecond,
		"the bot API receives the message")
	assert.Equal(t, "❗ Новый лид\n\nЗаказ 7", peers.bot.To(chat)[0].Text, "title, blank line, text; urgent ones marked")

	time.Sleep(mailQuiet)
	assert.Len(t, peers.bot.To(chat), 1, "sent once")
	assert.Empty(t, peers.mail.To(address), "e-mail is off for this user")
}

func TestPrivateNotificationReachesTheUsersStreamWithinASecond(t *testing.T) {
	id := createUser(t, uniqueEmail("stream"), "--access-group", "call-center", "--email-notifications=false")
	mine := openStreamAs(t, keyFor(t, id))
	admins := openStreamAs(t, stack.APIKey)

	start := time.Now()
	notify(t, "/v2/notification/private/", map[string]any{"userId": id, "title": "Перезвоните", "text": "Клиент на линии", "priority": "urgent", "level": "danger"})
	ev, ok := nextEvent(mine, "notification", time.Second)
	require.True(t, ok, "the notification arrives within a second of the POST")
	t.Logf("live after %s", time.Since(start))
	var n notificationView
	require.NoError(t, json.Unmarshal([]byte(ev.data), &n))
	assert.Equal(t, "Перезвоните", n.Title)
	assert.Equal(t, "Клиент на линии", n.Text)
	assert.Equal(t, "urgent", n.Priority)
	assert.Equal(t, "danger", n.Level)
	assert.True(t, n.OpenAutomatically)
	assert.False(t, n.IsRead)

	_, ok = nextEvent(admins, "notification", mailQuiet)
	assert.False(t, ok, "another user's stream gets nothing")
}

// TestEveryPreferenceCombinationIsHonoured gives each channel of a user one of the four settings
// (off, off but urgent-only, on, on for urgent only), independently: sixteen users. Each gets a
// default and an urgent notification; each channel must carry exactly what its setting allows.
func TestEveryPreferenceCombinationIsHonoured(t *testing.T) {
	type setting struct {
		enabled  bool
		priority string // "none" (null) or "urgent"
	}
	settings := []setting{{false, "none"}, {false, "urgent"}, {true, "none"}, {true, "urgent"}}
	allows := func(s setting, priority string) bool {
		return s.enabled && (s.priority == "none" || priority == "urgent")
	}

	type recipient struct {
		email, messenger setting
		id               int64
		address, chat    string
	}
	var users []*recipient
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i, es := range settings {
		for j, ms := range settings {
			u := &recipient{email: es, messenger: ms,
				address: uniqueEmail(fmt.Sprintf("combo%d%d", i, j)), chat: fmt.Sprintf("combo-%s-%d%d", run, i, j)}
			u.id = createUser(t, u.address, "--access-group", "call-center",
				"--email-notifications="+strconv.FormatBool(es.enabled), "--email-priority="+es.priority,
				"--messenger-notifications="+strconv.FormatBool(ms.enabled), "--messenger-priority="+ms.priority,
				"--messenger-chat-id", u.chat)
			users = append(users, u)
		}
	}
	title := func(priority string) string { return "combo " + run + " " + priority }
	for _, u := range users {
		for _, p := range []string{"default", "urgent"} {
			notify(t, "/v2/notification/private/", private(u.id, title(p), p))
		}
	}

	want := func(s setting) []string {
		out := []string{}
		for _, p := range []string{"default", "urgent"} {
			if allows(s, p) {
				out = append(out, title(p))
			}
		}
		return out
	}
	arrived := func() bool {
		for _, u := range users {
			if len(subjects(u.address)) < len(want(u.email)) || len(chatTitles(u.chat)) < len(want(u.messenger)) {
				return false
			}
		}
		return true
	}
	require.Eventually(t, arrived, 10*time.Second, 50*time.Millisecond, "every allowed message arrives")
	time.Sleep(mailQuiet) // anything not allowed would have come by now
	for _, u := range users {
		name := fmt.Sprintf("e-mail %+v, messenger %+v", u.email, u.messenger)
		t.Run(name, func(t *testing.T) {
			assert.ElementsMatch(t, want(u.email), subjects(u.address), "e-mail")
			assert.ElementsMatch(t, want(u.messenger), chatTitles(u.chat), "messenger")
			for _, m := range peers.mail.To(u.address) {
				if m.Subject == title("urgent") {
					assert.Equal(t, "urgent", m.Header.Get("Importance"), "urgent mail is marked")
				}
			}
		})
	}
}

func TestGroupNotificationReachesExactlyTheActiveUsersOfTheGroup(t *testing.T) {
	conn := notificationsDB(t)
	a1, a2, gone, other := uniqueEmail("arb.a"), uniqueEmail("arb.b"), uniqueEmail("arb.gone"), uniqueEmail("mod")
	idA1 := createUser(t, a1, "--access-group", "arbitration")
	idA2 := createUser(t, a2, "--access-group", "arbitration")
	idGone := createUser(t, gone, "--access-group", "arbitration", "--active=false")
	idOther := createUser(t, other, "--access-group", "moderator")

	title := "Арбитраж " + strconv.FormatInt(time.Now().UnixNano(), 36)
	notify(t, "/v2/notification/group/", map[string]any{"group": "arbitration", "title": title, "text": "Разбор спорных лидов", "priority": "default", "level": "default"})

	want := idsOf(listUsers(t, "/v2/user/list/?accessGroup=arbitration&isActive=1&limit=100").List)
	require.Contains(t, want, idA1)
	require.Contains(t, want, idA2)
	assert.Equal(t, want, recipientsOf(t, conn, title), "one record for each active user of the group, no one else")

	require.Eventually(t, func() bool { return len(peers.mail.To(a1)) > 0 && len(peers.mail.To(a2)) > 0 }, 5*time.Second, 20*time.Millisecond)
	time.Sleep(mailQuiet)
	assert.Equal(t, []string{title}, subjects(a1))
	assert.Equal(t, []string{title}, subjects(a2))
	assert.Empty(t, peers.mail.To(gone), "an inactive user of the group is not notified")
	assert.Empty(t, peers.mail.To(other), "a user of another group is not notified")

	// The member finds it in the inbox through the gateway.
	r := stack.Call(t, http.MethodGet, "/v2/notification/?unread=1", nil, WithKey(keyFor(t, idA1)))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Env.Data), title)

	// Public: every active user, whatever the group; never the inactive one.
	public := "Для всех " + strconv.FormatInt(time.Now().UnixNano(), 36)
	notify(t, "/v2/notification/public/", map[string]any{"title": public, "text": "Общее собрание", "priority": "default", "level": "success"})
	everyone := idsOf(listUsers(t, "/v2/user/list/?isActive=1&limit=100").List)
	got := recipientsOf(t, conn, public)
	assert.Equal(t, everyone, got)
	assert.Contains(t, got, idOther)
	assert.NotContains(t, got, idGone)
}

func TestFailingMailServerIsRetriedWithoutHoldingBackTheOthers(t *testing.T) {
	conn := notificationsDB(t)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	address, chat, title := uniqueEmail("outage"), "outage-"+run, "Сбой почты "+run
	id := createUser(t, address, "--email-notifications=true", "--messenger-notifications=true", "--messenger-chat-id", chat)
	stream := openStreamAs(t, keyFor(t, id))

	peers.mail.Stop()
	t.Cleanup(func() {
		if !peers.mail.Running() {
			assert.NoError(t, peers.mail.Restart())
		}
	})
	start := time.Now()
	notify(t, "/v2/notification/private/", private(id, title, "urgent"))

	_, ok := nextEvent(stream, "notification", time.Second)
	assert.True(t, ok, "the live stream does not wait for e-mail")
	require.Eventually(t, func() bool { return len(peers.bot.To(chat)) == 1 }, 3*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(start), 2*time.Second, "the messenger does not wait for e-mail")
	assert.Equal(t, []int64{id}, recipientsOf(t, conn, title), "the record is stored whatever the channels do")

	var attempts int
	var status string
	var lastError sql.NullString
	emailDelivery := func() {
		require.NoError(t, conn.QueryRow(`SELECT d.status, d.attempts, d.last_error
			FROM notifications.deliveries d JOIN notifications.notifications n ON n.id = d.notification_id
			WHERE n.user_id = $1 AND d.channel = 'email'`, id).Scan(&status, &attempts, &lastError))
	}
	require.Eventually(t, func() bool { emailDelivery(); return attempts >= 3 }, 5*time.Second, 50*time.Millisecond, "e-mail is retried")
	assert.Equal(t, "pending", status)
	assert.True(t, lastError.Valid && lastError.String != "", "the last error is kept")
	assert.Empty(t, peers.mail.To(address))

	// The mail server comes back: the next retry goes through, with no new request.
	require.NoError(t, peers.mail.Restart())
	require.Eventually(t, func() bool { return len(peers.mail.To(address)) == 1 }, 5*time.Second, 20*time.Millisecond)
	assert.Equal(t, title, peers.mail.To(address)[0].Subject)
	require.Eventually(t, func() bool { emailDelivery(); return status == "sent" }, 5*time.Second, 50*time.Millisecond)
	time.Sleep(mailQuiet)
	assert.Len(t, peers.mail.To(address), 1, "mailed once")
	assert.Len(t, peers.bot.To(chat), 1, "the messenger got it once")

	r := stack.Call(t, http.MethodGet, "/v2/notification/", nil, WithKey(keyFor(t, id)))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Env.Data), title, "the record is in the user's inbox")
}

// TestRedeliveredCommandsAreStoredAndSentOnce hands notification-worker the same command three
// times, as the broker may after a lost ack, and a command for a user who no longer exists.
func TestRedeliveredCommandsAreStoredAndSentOnce(t *testing.T) {
	conn := notificationsDB(t)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	chat := "twice-" + run
	id := createUser(t, uniqueEmail("twice"), "--email-notifications=false", "--messenger-notifications=true", "--messenger-chat-id", chat)

	broker := mq.Dial(stack.AMQPURL, "e2e-notification-commands", zap.NewNop(), mq.WorkQueue(notificationCommands))
	pub := mq.NewPublisher(broker)
	t.Cleanup(func() { pub.Close(); broker.Close() })
	publish := func(commandID string, target map[string]any, title string) {
		body, err := json.Marshal(map[string]any{"commandId": commandID, "target": target,
			"title": title, "text": "t", "priority": "default", "level": "default"})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.NoError(t, pub.Publish(ctx, "", notificationCommands, mq.Message{ID: commandID, Type: "notification.command", Body: body}))
	}

	twice := uuid.NewString()
	for range 3 {
		publish(twice, map[string]any{"userId": id}, "twice "+run)
	}
	publish(uuid.NewString(), map[string]any{"userId": 987654321}, "nobody "+run)
	publish(uuid.NewString(), map[string]any{"userId": id}, "after "+run)

	require.Eventually(t, func() bool { return len(peers.bot.To(chat)) >= 2 }, 10*time.Second, 20*time.Millisecond)
	time.Sleep(mailQuiet)
	assert.ElementsMatch(t, []string{"twice " + run, "after " + run}, chatTitles(chat), "each command sent once")
	assert.Equal(t, []int64{id}, recipientsOf(t, conn, "twice "+run), "one record however often the command came")
	var gone int
	require.NoError(t, conn.QueryRow(`SELECT count(*) FROM notifications.notifications WHERE title = $1`, "nobody "+run).Scan(&gone))
	assert.Zero(t, gone, "a command for a user who no longer exists stores nothing")
}

// notificationCommands is the queue notification-api publishes commands to.
const notificationCommands = "notification.commands"
