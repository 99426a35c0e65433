package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"syscall"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"go.uber.org/zap"
)

// reportOrders is how many orders the report phase's calls are spread over.
const reportOrders = 200

// loadCalls writes n calls over the year before now, round-robin over reportOrders orders (ids
// 1..200), straight into the call service's table, in chunks.
const loadCalls = `
INSERT INTO calls (platform_call_id, lead_id, order_id, user_id, sip_endpoint_id, status_id, direction, client_phone,
                   is_predictive, has_records, started_at, answered_at, ended_at, total_duration_seconds,
                   wait_time_duration_seconds, talk_time_duration_seconds, created_at, source_event_id, finished_published_at)
SELECT 'bench-' || g, 1 + g % 500000, 1 + g % 200, 1 + g % 300, 1, s, 'outgoing', '7915' || lpad((g % 10000000)::text, 7, '0'),
       false, s = 1, t, CASE WHEN s IN (1, 9) THEN t + interval '10 s' END, t + interval '10 s' + make_interval(secs => talk), 10 + talk,
       10, talk, t, 'bench-' || g, now()
FROM (SELECT g, CASE WHEN g % 20 < 9 THEN 1 ELSE 2 + g % 8 END AS s,
             now() - interval '365 days' * (g::float8 / $2) AS t
      FROM generate_series($1::bigint, $1::bigint + $3 - 1) AS g) AS c,
     LATERAL (SELECT CASE WHEN s = 1 THEN 20 + g % 580 WHEN s = 9 THEN 3 ELSE 0 END AS talk) AS d`

// aggregate is one table of the report aggregates, built from the loaded calls as report-worker
// would have from their call.finished (the property test holds the two equal): build adds to what
// it counted of the ingest rounds' calls. Each is built in bucket order, as the calls' events would
// have arrived over the year, so that a table's rows lie on disk in time order as they would in
// production (the rows of one order's month spread over the whole month's pages, the rows of one
// hour of every order together).
type aggregate struct{ table, at, build string }

var backfill = []aggregate{
	{"reports.order_buckets", "bucket", `INSERT INTO reports.order_buckets (order_id, bucket, calls, answered, handled, abandoned, talk_seconds)
	 SELECT order_id, to_timestamp(floor(extract(epoch FROM created_at) / 900) * 900), count(*),
	        count(*) FILTER (WHERE status_id IN (1, 9)), count(*) FILTER (WHERE status_id = 1),
	        count(*) FILTER (WHERE status_id = 9), sum(talk_time_duration_seconds)
	 FROM calls.calls WHERE platform_call_id LIKE 'bench-%' GROUP BY 1, 2 ORDER BY 2, 1
	 ON CONFLICT (order_id, bucket) DO UPDATE SET calls = order_buckets.calls + EXCLUDED.calls,
	    answered = order_buckets.answered + EXCLUDED.answered, handled = order_buckets.handled + EXCLUDED.handled,
	    abandoned = order_buckets.abandoned + EXCLUDED.abandoned, talk_seconds = order_buckets.talk_seconds + EXCLUDED.talk_seconds`},
	{"reports.lead_call_buckets", "bucket", `INSERT INTO reports.lead_call_buckets (order_id, bucket, lead_id)
	 SELECT DISTINCT order_id, to_timestamp(floor(extract(epoch FROM created_at) / 900) * 900) AS bucket, lead_id
	 FROM calls.calls WHERE platform_call_id LIKE 'bench-%' ORDER BY 2, 1, 3 ON CONFLICT DO NOTHING`},
	// The hourly roll-up (migration 00004), as report-worker keeps it beside the buckets.
	{"reports.order_hours", "hour", `INSERT INTO reports.order_hours (order_id, hour, calls, answered, handled, abandoned, talk_seconds)
	 SELECT order_id, date_trunc('hour', created_at, 'UTC'), count(*),
	        count(*) FILTER (WHERE status_id IN (1, 9)), count(*) FILTER (WHERE status_id = 1),
	        count(*) FILTER (WHERE status_id = 9), sum(talk_time_duration_seconds)
	 FROM calls.calls WHERE platform_call_id LIKE 'bench-%' GROUP BY 1, 2 ORDER BY 2, 1
	 ON CONFLICT (order_id, hour) DO UPDATE SET calls = order_hours.calls + EXCLUDED.calls,
	    answered = order_hours.answered + EXCLUDED.answered, handled = order_hours.handled + EXCLUDED.handled,
	    abandoned = order_hours.abandoned + EXCLUDED.abandoned, talk_seconds = order_hours.talk_seconds + EXCLUDED.talk_seconds`},
	{"reports.agent_call_buckets", "bucket", `INSERT INTO reports.agent_call_buckets (user_id, bucket, order_id, calls, handled, talk_seconds)
	 SELECT user_id, to_timestamp(floor(extract(epoch FROM created_at) / 900) * 900), order_id, count(*),
	        count(*) FILTER (WHERE status_id = 1), sum(talk_time_duration_seconds)
	 FROM calls.calls WHERE platform_call_id LIKE 'bench-%' GROUP BY 1, 2, 3 ORDER BY 2, 1, 3
	 ON CONFLICT (user_id, bucket, order_id) DO UPDATE SET calls = agent_call_buckets.calls + EXCLUDED.calls,
	    handled = agent_call_buckets.handled + EXCLUDED.handled, talk_seconds = agent_call_buckets.talk_seconds + EXCLUDED.talk_seconds`},
}

// rawHourly and rawDaily are the same answers as the two reports by a plain GROUP BY over the calls.
const (
	rawHourly = `SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AS h, count(*), count(*) FILTER (WHERE status_id IN (1, 9)),
	        count(*) FILTER (WHERE status_id = 9), count(*) FILTER (WHERE status_id = 1), sum(talk_time_duration_seconds),
	        count(DISTINCT lead_id)
	 FROM calls WHERE order_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1`
	rawDaily = `SELECT order_id, count(*), count(*) FILTER (WHERE status_id IN (1, 9)),
	        count(*) FILTER (WHERE status_id = 9), count(*) FILTER (WHERE status_id = 1), sum(talk_time_duration_seconds),
	        count(DISTINCT lead_id)
	 FROM calls WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`
)

// reportStatements are the orders report's statements (services/report/internal/orders/store.go,
// Store.Read) with the arguments it gives them for intervals starts over the orders in scope (every
// order when all), on the grid it would choose: run directly on the database, they tell the
// report's time in SQL from the rest. Kept in step with the store by hand.
func reportStatements(starts []time.Time, all bool, orderIDs []int64) []namedQuery {
	orders, statuses, at := "order_buckets", "status_buckets", "bucket"
	if onHours(starts) {
		orders, statuses, at = "order_hours", "status_hours", "hour"
	}
	intervalOf := func(at string) string { return `width_bucket(` + at + `, $1::timestamptz[]) - 1` }
	interval := intervalOf(at)
	where := func(at string) string {
		return at + ` >= $2 AND ` + at + ` < $3 AND ($4 OR order_id = ANY($5::bigint[]))`
	}
	args := []any{pq.Array(starts), starts[0], starts[len(starts)-1], all, pq.Array(orderIDs)}
	sums := namedQuery{"call sums (" + at + ") and leads called (bucket)", `WITH c AS (
			SELECT order_id, ` + interval + ` AS i, sum(calls)::bigint AS calls, sum(answered)::bigint AS answered,
				sum(handled)::bigint AS handled, sum(abandoned)::bigint AS abandoned, sum(talk_seconds)::bigint AS talk_seconds
			FROM reports.` + orders + ` WHERE ` + where(at) + ` GROUP BY 1, 2),
		l AS (SELECT order_id, ` + intervalOf("bucket") + ` AS i, count(DISTINCT lead_id) AS leads_called
			FROM reports.lead_call_buckets WHERE ` + where("bucket") + ` GROUP BY 1, 2)
		SELECT c.*, coalesce(l.leads_called, 0) AS leads_called FROM c LEFT JOIN l USING (order_id, i)`, args}
	return []namedQuery{
		sums,
		{"status entries (" + at + ")", `SELECT order_id, ` + interval + ` AS i, status_id, sum(entered)::bigint AS entered
			FROM reports.` + statuses + ` WHERE ` + where(at) + ` GROUP BY 1, 2, 3`, args},
		{"agent time (bucket)", `SELECT order_id, width_bucket(bucket, $1::timestamptz[]) - 1 AS i, sum(ms)::bigint AS ms,
			coalesce(sum(ms) FILTER (WHERE state = 'wrap-up'), 0)::bigint AS wrap_up_ms
			FROM reports.agent_state_buckets WHERE ` + where("bucket") + ` AND order_id > 0 GROUP BY 1, 2`, args},
	}
}

// onHours says whether every time of starts is a UTC hour (the report then reads its hourly roll-up).
func onHours(starts []time.Time) bool {
	for _, t := range starts {
		if t.Unix()%3600 != 0 {
			return false
		}
	}
	return true
}

// namedQuery is one statement and its arguments.
type namedQuery struct {
	name, sql string
	args      []any
}

// hours are the starts of the hours of UTC from from to to, and to.
func hours(from, to time.Time) []time.Time {
	var out []time.Time
	for t := from; !t.After(to); t = t.Add(time.Hour) {
		out = append(out, t)
	}
	return out
}

// reports is figures (10) and (11): the orders report through the gateway on ReportCalls calls over a
// year across 200 orders (one order's 31 days by hour; every order's one day), each beside the same
// answer by a plain GROUP BY over the calls; and (12) call-ingest's rate with report-worker
// consuming its call.finished against the same with report-worker stopped. Beside (10) and (11) it
// prints (no target) where the report's time goes: each of its statements run alone, the report
// service called directly (no gateway), and what is left outside SQL.
func (b *bench) reports(ctx context.Context) error {
	calls, err := db.Open(ctx, b.dbURL, "calls", 8)
	if err != nil {
		return err
	}
	defer calls.Close()
	if err := b.ingestCost(ctx, calls); err != nil {
		return err
	}
	n, err := b.loadReportCalls(ctx, calls)
	if err != nil {
		return err
	}

	today := time.Now().UTC().Truncate(24 * time.Hour)
	monthFrom, monthTo := today.AddDate(0, 0, -31), today
	q := url.Values{"orderIds[]": {"7"}, "from": {monthFrom.Format(time.RFC3339)}, "to": {monthTo.Format(time.RFC3339)}, "interval": {"hour"}}
	hourly := q.Encode()
	day := today.AddDate(0, -6, 0)
	q = url.Values{"from": {day.Format(time.RFC3339)}, "to": {day.AddDate(0, 0, 1).Format(time.RFC3339)}, "interval": {"day"}}
	daily := q.Encode()
	// The same two reports in a zone of half hours (Asia/Kolkata, +05:30, dates as from and to): the
	// same number of rows, read from the 15-minute buckets rather than the hourly roll-up; printed
	// beside the same GROUP BY, no target.
	q = url.Values{"orderIds[]": {"7"}, "from": {monthFrom.Format(time.DateOnly)}, "to": {monthTo.Format(time.DateOnly)},
		"interval": {"hour"}, "tz": {"Asia/Kolkata"}}
	hourlyHalf := q.Encode()
	q = url.Values{"from": {day.Format(time.DateOnly)}, "to": {day.AddDate(0, 0, 1).Format(time.DateOnly)}, "interval": {"day"}, "tz": {"Asia/Kolkata"}}
	dailyHalf := q.Encode()
	const kolkata = -(5*time.Hour + 30*time.Minute)
	rawMonth := func(int) error { return drain(calls.QueryContext(ctx, rawHourly, 7, monthFrom, monthTo)) }
	rawDay := func(int) error { return drain(calls.QueryContext(ctx, rawDaily, day, day.AddDate(0, 0, 1))) }
	service := b.leadAPI("report")
	for _, c := range []struct {
		name, query, target string
		limit               time.Duration
		raw                 func(int) error
		statements          []namedQuery
	}{
		{"(10) one order, 31 days hourly", hourly, "p99 < 50 ms", 50 * time.Millisecond, rawMonth,
			reportStatements(hours(monthFrom, monthTo), false, []int64{7})},
		{"(10) the same in Asia/Kolkata (15-minute buckets)", hourlyHalf, "", 0, rawMonth,
			reportStatements(hours(monthFrom.Add(kolkata), monthTo.Add(kolkata)), false, []int64{7})},
		{"(11) every order, one day", daily, "p99 < 200 ms", 200 * time.Millisecond, rawDay,
			reportStatements([]time.Time{day, day.AddDate(0, 0, 1)}, true, nil)},
		{"(11) the same in Asia/Kolkata (15-minute buckets)", dailyHalf, "", 0, rawDay,
			reportStatements([]time.Time{day.Add(kolkata), day.AddDate(0, 0, 1).Add(kolkata)}, true, nil)},
	} {
		path := "/v2/report/orders/?" + c.query
		var page struct {
			List []json.RawMessage `json:"list"`
		}
		if err := b.api.Do(ctx, "GET", path, nil, &page); err != nil {
			return err
		}
		fmt.Fprintf(b.out, "    GET %s → %d rows\n", path, len(page.List))
		get := func(int) error { return b.api.Do(ctx, "GET", path, nil, nil) }
		Load(1, 2*time.Second, 20, get)
		platform := Load(1, time.Minute, b.cfg.ListRequests, get)
		Load(1, 2*time.Second, 5, c.raw)
		baseline := Load(1, time.Minute, max(20, b.cfg.ListRequests/10), c.raw)
		p99 := platform.Percentile(0.99)
		ratio := loadtest.Millis(baseline.Percentile(0.99)) / loadtest.Millis(p99)
		if c.target != "" {
			b.rows = append(b.rows, row{name: fmt.Sprintf("%s p99 (%d calls)", c.name, n), platform: platform.Summary(),
				baseline: baseline.Summary() + " (GROUP BY)", ratio: ratio,
				target: c.target + ", ≥ 20×", pass: p99 < c.limit && ratio >= 20 && platform.Errors == 0})
		}
		fmt.Fprintf(b.out, "    %s: report through the gateway %s; GROUP BY over the calls %s; %.1f×\n", c.name, platform.Summary(), baseline.Summary(), ratio)

		direct := func(int) error { return service.Do(ctx, "GET", "/v2/report/orders?"+c.query, nil, nil) }
		Load(1, 2*time.Second, 20, direct)
		alone := Load(1, time.Minute, b.cfg.ListRequests, direct)
		fmt.Fprintf(b.out, "      report service alone (no gateway) %s\n", alone.Summary())
		var sqlP50 time.Duration
		for _, st := range c.statements {
			op := func(int) error { return drain(calls.QueryContext(ctx, st.sql, st.args...)) }
			Load(1, 2*time.Second, 5, op)
			res := Load(1, time.Minute, b.cfg.ListRequests/2, op)
			sqlP50 += res.Percentile(0.5)
			fmt.Fprintf(b.out, "      SQL alone: %-28s %s\n", st.name, res.Summary())
		}
		fmt.Fprintf(b.out, "      p50: statements %.2f ms; the service beyond them %.2f ms; the gateway hop %.2f ms; GROUP BY %.2f ms\n",
			loadtest.Millis(sqlP50), loadtest.Millis(alone.Percentile(0.5)-sqlP50),
			loadtest.Millis(platform.Percentile(0.5)-alone.Percentile(0.5)), loadtest.Millis(baseline.Percentile(0.5)))
	}
	return nil
}

// loadReportCalls loads ReportCalls calls and builds their aggregates, unless the database (one of
// -report-reuse) holds them already: then it only builds the aggregates still empty (a table a
// later migration added), and returns the calls found.
func (b *bench) loadReportCalls(ctx context.Context, calls *sqlx.DB) (int, error) {
	var n int
	if err := calls.GetContext(ctx, &n, `SELECT count(*) FROM calls WHERE platform_call_id LIKE 'bench-%'`); err != nil {
		return 0, fmt.Errorf("count loaded calls: %w", err)
	}
	if n > 0 {
		fmt.Fprintf(b.out, "(10, 11) reports: %d calls over a year across %d orders already loaded (-report-reuse)\n", n, reportOrders)
	} else {
		n = b.cfg.ReportCalls
		fmt.Fprintf(b.out, "(10, 11) reports: loading %d calls over a year across %d orders\n", n, reportOrders)
		start := time.Now()
		const chunk = 1_000_000
		for from := 1; from <= n; from += chunk {
			size := min(chunk, n-from+1)
			if _, err := calls.ExecContext(ctx, loadCalls, from, n, size); err != nil {
				return 0, fmt.Errorf("load calls: %w", err)
			}
		}
		if _, err := calls.ExecContext(ctx, `VACUUM ANALYZE calls`); err != nil {
			return 0, fmt.Errorf("vacuum calls: %w", err)
		}
		fmt.Fprintf(b.out, "    calls loaded in %.1fs\n", time.Since(start).Seconds())
	}
	for _, a := range backfill {
		// The ingest rounds' calls are a minute old: rows a day old are the loaded year's.
		var built bool
		if err := calls.GetContext(ctx, &built, `SELECT EXISTS (SELECT 1 FROM `+a.table+` WHERE `+a.at+` < now() - interval '1 day')`); err != nil {
			return 0, fmt.Errorf("look into %s: %w", a.table, err)
		}
		if built {
			continue
		}
		start := time.Now()
		if _, err := calls.ExecContext(ctx, a.build); err != nil {
			return 0, fmt.Errorf("build %s: %w", a.table, err)
		}
		if _, err := calls.ExecContext(ctx, `VACUUM ANALYZE `+a.table); err != nil {
			return 0, fmt.Errorf("vacuum %s: %w", a.table, err)
		}
		fmt.Fprintf(b.out, "    %s built in bucket order and vacuumed in %.1fs\n", a.table, time.Since(start).Seconds())
	}
	return n, nil
}

func drain(rows interface {
	Next() bool
	Err() error
	Close() error
}, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// ingestCost is figure (12): rounds of IngestCalls platform events through call-ingest, alternately
// with report-worker consuming every call.finished and with it stopped, the rate of each kind of
// round from the first publish to the last call stored.
func (b *bench) ingestCost(ctx context.Context, calls interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}) error {
	fmt.Fprintf(b.out, "(12) ingest with the report aggregates vs without: rounds of %d platform events\n", b.cfg.IngestCalls)
	conn := mq.Dial(b.amqpURL, "bench-telephony", zap.NewNop(), mq.WorkQueue(telephony.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	round := func(tag string) (Result, error) {
		n := b.cfg.IngestCalls
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					at := time.Now().Add(-time.Minute)
					ev := telephony.CallEvent{EventID: uuid.NewString(), PlatformCallID: fmt.Sprintf("ingest-%s-%07d", tag, i),
						LeadID: int64(1 + i%1000), OrderID: int64(1 + i%reportOrders), UserID: 1, SipEndpointID: 1,
						Direction: "outgoing", StatusCode: "no_answer", ClientPhone: "79150000000", StartedAt: at, EndedAt: at.Add(20 * time.Second)}
					body, _ := json.Marshal(ev)
					if err := pub.Publish(ctx, "", telephony.Queue, mq.Message{ID: ev.EventID, Type: telephony.EventType, Body: body}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return Result{}, err
		}
		for {
			var stored int
			if err := calls.GetContext(ctx, &stored, `SELECT count(*) FROM calls WHERE platform_call_id >= $1 AND platform_call_id < $2`,
				"ingest-"+tag+"-", "ingest-"+tag+"."); err != nil {
				return Result{}, err
			}
			if stored >= n {
				return Result{OK: n, Elapsed: time.Since(start)}, nil
			}
			if time.Since(start) > 5*time.Minute {
				return Result{}, fmt.Errorf("ingest round %s: %d of %d stored after 5 minutes", tag, stored, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, err := round("warm"); err != nil {
		return err
	}
	var with, without Result
	for i := range 3 {
		r, err := round(fmt.Sprintf("with%d", i))
		if err != nil {
			return err
		}
		with = with.Merge(r)
		b.stack.Stop("report-worker", syscall.SIGTERM)
		r, err = round(fmt.Sprintf("without%d", i))
		if err != nil {
			return err
		}
		without = without.Merge(r)
		if err := b.stack.Start("report-worker"); err != nil {
			return err
		}
		// The events of the round without it are drained before the next round with it.
		if err := b.waitQueueEmpty(ctx, "report.events"); err != nil {
			return err
		}
	}
	b.add(fmt.Sprintf("(12) ingest with/without reports (%d/round)", b.cfg.IngestCalls), with, without, with.Rate()/without.Rate(), "≥ 0.80", 0.80)
	return nil
}

// waitQueueEmpty waits until queue holds no message.
func (b *bench) waitQueueEmpty(ctx context.Context, queue string) error {
	conn := mq.Dial(b.amqpURL, "bench-queue-watch", zap.NewNop())
	defer conn.Close()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		_, messages, err := conn.QueueConsumers(ctx, queue)
		if err == nil && messages == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not drained in 5 minutes (%d left, %v)", queue, messages, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
