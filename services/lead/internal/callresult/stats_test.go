package callresult_test

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/orders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialed is a call.finished of an outgoing call as call-ingest sends it, with its answer and talk.
func dialed(lead int64, o orders.Order, outcome string, ended time.Time, answered bool, talk int) map[string]any {
	ev := finished(lead, o, outcome, ended)
	if answered {
		ev["answeredAt"] = ended.Add(-time.Duration(talk) * time.Second).Format(time.RFC3339)
	}
	ev["data"] = map[string]any{"direction": "outgoing", "talkTimeDurationSeconds": talk}
	return ev
}

type stats struct {
	Dialed        int   `db:"dialed"`
	Live          int   `db:"live"`
	Abandoned     int   `db:"abandoned"`
	Handled       int   `db:"handled"`
	HandleSeconds int64 `db:"handle_seconds"`
}

func statsOf(t *testing.T, table string, o orders.Order) stats {
	t.Helper()
	var s stats
	require.NoError(t, env.DB.Get(&s, `SELECT coalesce(sum(dialed), 0) AS dialed, coalesce(sum(live), 0) AS live,
		coalesce(sum(abandoned), 0) AS abandoned, coalesce(sum(handled), 0) AS handled,
		coalesce(sum(handle_seconds), 0) AS handle_seconds FROM `+table+` WHERE order_id = $1`, o.ID))
	return s
}

// Each call counts once in its order's statistics, however often call.finished is delivered, in
// one batch or in the next.
func TestDialingStatisticsCountEachCallOnce(t *testing.T) {
	o := newOrder(t)
	a, b, c := newLead(t, o, 3), newLead(t, o, 3), newLead(t, o, 3)
	talked := dialed(a, o, callresult.OutcomeAnswered, utc(23, 10, 0), true, 90)
	dropped := dialed(b, o, callresult.OutcomeAbandoned, utc(23, 10, 1), true, 4)
	rang := dialed(c, o, callresult.OutcomeNoAnswer, utc(23, 10, 2), false, 0)
	incoming := finished(c, o, callresult.OutcomeAnswered, utc(23, 10, 3))
	incoming["answeredAt"] = utc(23, 10, 2).Format(time.RFC3339)
	incoming["data"] = map[string]any{"direction": "incoming", "talkTimeDurationSeconds": 60}
	again := map[string]any{}
	for k, v := range talked {
		again[k] = v
	}

	res := consumer().Handle(context.Background(), deliveries(t, talked, dropped, rang, incoming, again))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack, mq.Ack, mq.Ack, mq.Ack}, outcomes(res))
	res = consumer().Handle(context.Background(), deliveries(t, talked, dropped))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(res))

	want := stats{Dialed: 3, Live: 2, Abandoned: 1, Handled: 1, HandleSeconds: 90}
	assert.Equal(t, want, statsOf(t, "dial_stats_minute", o), "an incoming call is not dialed; a copy adds nothing")
	assert.Equal(t, want, statsOf(t, "dial_stats_hour", o))
	var handles []int64
	require.NoError(t, env.DB.Select(&handles, `SELECT seconds FROM dial_handle_times WHERE order_id = $1`, o.ID))
	assert.Equal(t, []int64{90}, handles)
}

// An abandoned call keeps its lead's number out of the queue for the order's dropLockoutHours
// after it ended; another outcome sets no lockout, and a shorter lockout never shortens one set.
func TestAnAbandonedCallLocksItsLeadOut(t *testing.T) {
	o := newOrder(t)
	o.DropLockoutHours = 72
	env.Orders.Remember(o)
	dropped, answered := newLead(t, o, 3), newLead(t, o, 3)
	res := consumer().Handle(context.Background(), deliveries(t,
		dialed(dropped, o, callresult.OutcomeAbandoned, utc(23, 10, 0), true, 3),
		dialed(answered, o, callresult.OutcomeAnswered, utc(23, 10, 0), true, 30)))
	assert.Equal(t, []mq.Outcome{mq.Ack, mq.Ack}, outcomes(res))
	assert.Equal(t, ptr(utc(26, 10, 0)), lockoutOf(t, dropped))
	assert.Nil(t, lockoutOf(t, answered))

	o.DropLockoutHours = 1
	env.Orders.Remember(o)
	res = consumer().Handle(context.Background(), deliveries(t, dialed(dropped, o, callresult.OutcomeAbandoned, utc(23, 11, 0), true, 3)))
	assert.Equal(t, []mq.Outcome{mq.Ack}, outcomes(res))
	assert.Equal(t, ptr(utc(26, 10, 0)), lockoutOf(t, dropped), "the later lockout stays")
}

// The purge keeps what the reads need: a day of minute buckets, 31 days of hour buckets, a week
// of handle times.
func TestThePurgeKeepsWhatThePaceReads(t *testing.T) {
	o := newOrder(t)
	now := utc(30, 12, 0)
	for _, r := range []struct {
		table, column string
		at            time.Time
	}{
		{"dial_stats_minute", "bucket", now.Add(-25 * time.Hour)}, {"dial_stats_minute", "bucket", now.Add(-23 * time.Hour)},
		{"dial_stats_hour", "bucket", now.Add(-32 * 24 * time.Hour)}, {"dial_stats_hour", "bucket", now.Add(-30 * 24 * time.Hour)},
		{"dial_handle_times", "ended_at", now.Add(-8 * 24 * time.Hour)}, {"dial_handle_times", "ended_at", now.Add(-6 * 24 * time.Hour)},
	} {
		q := `INSERT INTO ` + r.table + ` (order_id, ` + r.column + `) VALUES ($1, $2)`
		if r.table == "dial_handle_times" {
			q = `INSERT INTO dial_handle_times (order_id, ended_at, seconds) VALUES ($1, $2, 30)`
		}
		_, err := env.DB.Exec(q, o.ID, r.at)
		require.NoError(t, err)
	}
	_, err := callresult.NewStore(env.DB, env.Catalog).PurgeStats(context.Background(), now)
	require.NoError(t, err)
	for table, column := range map[string]string{"dial_stats_minute": "bucket", "dial_stats_hour": "bucket", "dial_handle_times": "ended_at"} {
		var n int
		require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM `+table+` WHERE order_id = $1`, o.ID))
		assert.Equal(t, 1, n, "%s keeps its recent row by %s", table, column)
	}
}

func lockoutOf(t *testing.T, lead int64) *time.Time {
	t.Helper()
	var until *time.Time
	require.NoError(t, env.DB.Get(&until, `SELECT lockout_until FROM leads WHERE id = $1`, lead))
	if until != nil {
		u := until.UTC()
		until = &u
	}
	return until
}

func TestTallyOf(t *testing.T) {
	out := callresult.Finished{Outgoing: true}
	for name, tc := range map[string]struct {
		ev   callresult.Finished
		want callresult.Tally
		ok   bool
	}{
		"incoming":  {callresult.Finished{Outcome: callresult.OutcomeAnswered, Answered: true, TalkSeconds: 5}, callresult.Tally{}, false},
		"no answer": {with(out, callresult.OutcomeNoAnswer, false, 0), callresult.Tally{Dialed: 1}, true},
		"voicemail": {with(out, callresult.OutcomeVoicemail, true, 20), callresult.Tally{Dialed: 1}, true},
		"abandoned": {with(out, callresult.OutcomeAbandoned, true, 3), callresult.Tally{Dialed: 1, Live: 1, Abandoned: 1}, true},
		"answered":  {with(out, callresult.OutcomeAnswered, true, 70), callresult.Tally{Dialed: 1, Live: 1, Handled: 1, HandleSeconds: 70}, true},
	} {
		got, ok := callresult.TallyOf(tc.ev)
		assert.Equal(t, tc.ok, ok, name)
		assert.Equal(t, tc.want, got, name)
	}
}

func with(ev callresult.Finished, outcome string, answered bool, talk int64) callresult.Finished {
	ev.Outcome, ev.Answered, ev.TalkSeconds = outcome, answered, talk
	return ev
}
