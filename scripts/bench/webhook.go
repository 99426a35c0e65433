package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/pkg/db"
	"ccplatform/pkg/freeport"

	"github.com/lib/pq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Parameters of figure (7).
const (
	// hookEndpoints are the subscriptions of the throughput figure, all on one receiver, so that
	// the dispatcher's per-endpoint limit (16) does not cap it below its 128 workers.
	hookEndpoints = 16
	hookEvents    = 1_000 // per endpoint
	// lagRate and lagFor are the load of the lag figure: sync creates per second, for how long.
	lagRate = 500
	lagFor  = 10 * time.Second
)

// hookBody is an event as large as a lead.created payload.
var hookBody = []byte(`{"id":"%s","type":"order.updated","createdAt":"2026-11-26T10:00:00+00:00","data":{"id":1,` +
	`"phone":"+79161234567","orderId":1,"orderCode":"bench","name":"Bench lead","statusId":1,"leadType":"straight",` +
	`"createMethod":"api_v2","priority":0,"attempts":0,"customValues":[],"isSecondary":false,"doNotCall":false,` +
	`"createdAt":"2026-11-26T10:00:00+00:00","updatedAt":"2026-11-26T10:00:00+00:00"}}`)

// receiver is a partner's endpoint answering 204 at once; it counts what it got and, for the lag
// figure, when each lead's lead.created arrived.
type receiver struct {
	addr    string
	srv     *http.Server
	count   atomic.Int64
	mu      sync.Mutex
	arrived map[int64]time.Time
}

func startReceiver() (*receiver, error) {
	addr, err := freeport.Addr()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &receiver{addr: addr, arrived: map[int64]time.Time{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.count.Add(1)
	if strings.HasPrefix(req.URL.Path, "/lag") {
		var ev struct {
			Data struct {
				ID int64 `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &ev) == nil {
			r.mu.Lock()
			if _, seen := r.arrived[ev.Data.ID]; !seen {
				r.arrived[ev.Data.ID] = time.Now()
			}
			r.mu.Unlock()
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) close() { _ = r.srv.Close() }

// subscribe creates an admin subscription of url to events and returns its id and secret.
func (b *bench) subscribe(ctx context.Context, url string, events ...string) (int64, string, error) {
	body, _ := json.Marshal(map[string]any{"url": url, "events": events})
	var out struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
	if err := b.api.Do(ctx, "POST", "/v2/webhook/create/", body, &out); err != nil {
		return 0, "", fmt.Errorf("subscribe: %w", err)
	}
	return out.ID, out.Secret, nil
}

// webhooks is figure (7): deliveries per second of a backlog to 16 endpoints of a receiver that
// answers at once, beside a bare loop of signed POSTs (the Standard Webhooks library signing) to
// the same receiver from 64 goroutines; and (7a) the lag from a sync create's answer
// to its lead.created webhook at 500 creates/s.
func (b *bench) webhooks(ctx context.Context) error {
	fmt.Fprintf(b.out, "(7) webhook deliveries/s: %d events to %d endpoints vs a bare loop of signed POSTs\n", hookEvents, hookEndpoints)
	recv, err := startReceiver()
	if err != nil {
		return err
	}
	defer recv.close()
	hooks, err := db.Open(ctx, b.dbURL, "webhooks", 8)
	if err != nil {
		return err
	}
	defer hooks.Close()
	var secret string
	subs := make([]int64, hookEndpoints)
	for i := range subs {
		if subs[i], secret, err = b.subscribe(ctx, fmt.Sprintf("http://%s/t/%d", recv.addr, i), "order.updated"); err != nil {
			return err
		}
	}
	// The backlog is written while the endpoints are disabled, then released at once.
	const backlog = `
WITH s AS (UPDATE subscriptions SET enabled = false WHERE id = ANY($1) RETURNING id),
e AS (INSERT INTO events (id, type, body, received_at)
      SELECT 'bench-' || g, 'order.updated', convert_to(replace($2, '%s', 'bench-' || g), 'UTF8'), now()
      FROM generate_series(1, $3) AS g RETURNING id)
INSERT INTO deliveries (subscription_id, event_id, next_attempt_at, created_at)
SELECT s.id, e.id, now(), now() FROM s, e`
	if _, err := hooks.ExecContext(ctx, backlog, subsArray(subs), string(hookBody), hookEvents); err != nil {
		return fmt.Errorf("backlog: %w", err)
	}
	want := int64(hookEndpoints * hookEvents)
	start := time.Now()
	if _, err := hooks.ExecContext(ctx, `UPDATE subscriptions SET enabled = true WHERE id = ANY($1)`, subsArray(subs)); err != nil {
		return err
	}
	for recv.count.Load() < want {
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("webhooks: %d of %d delivered in 5 min", recv.count.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	platform := Result{OK: int(want), Elapsed: time.Since(start)}

	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 10 * time.Second}
	before := recv.count.Load()
	baseline := Load(64, 10*time.Minute, int(want), func(i int) error {
		id := "bare-" + strconv.Itoa(i)
		body := []byte(strings.Replace(string(hookBody), "%s", id, 1))
		now := time.Now()
		sig, err := wh.Sign(id, now, body)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://%s/t/%d", recv.addr, i%hookEndpoints), strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Webhook-Id", id)
		req.Header.Set("Webhook-Timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("Webhook-Signature", sig)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	})
	if baseline.Errors > 0 {
		return fmt.Errorf("bare loop: %d errors, first: %w", baseline.Errors, baseline.FirstErr)
	}
	if got := recv.count.Load() - before; got != want {
		return fmt.Errorf("bare loop: receiver got %d of %d", got, want)
	}
	b.add(fmt.Sprintf("(7) webhook deliveries/s ×%d", hookEndpoints), platform, baseline, platform.Rate()/baseline.Rate(), "≥ 0.60", 0.60)
	if _, err := hooks.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = ANY($1)`, subsArray(subs)); err != nil {
		return err
	}
	return b.webhookLag(ctx, recv)
}

// webhookLag is figure (7a): sync creates at lagRate per second for lagFor, each one's answer time
// kept; the lag of a lead is the arrival of its lead.created at the receiver after that answer.
func (b *bench) webhookLag(ctx context.Context, recv *receiver) error {
	fmt.Fprintf(b.out, "(7a) lead.created lag: sync creates at %d/s for %s, answer → webhook arrival\n", lagRate, lagFor)
	sub, _, err := b.subscribe(ctx, fmt.Sprintf("http://%s/lag", recv.addr), "lead.created")
	if err != nil {
		return err
	}
	defer func() { _ = b.api.Do(ctx, "POST", fmt.Sprintf("/v2/webhook/delete/%d/", sub), nil, nil) }()
	total := int(lagFor.Seconds()) * lagRate
	answered := make(map[int64]time.Time, total)
	var mu sync.Mutex
	var failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	start := time.Now()
	for i := range total {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / lagRate)))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var created struct {
				ID int64 `json:"id"`
			}
			if err := b.api.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), &created); err != nil {
				failed.Add(1)
				return
			}
			at := time.Now()
			mu.Lock()
			answered[created.ID] = at
			mu.Unlock()
		})
	}
	wg.Wait()
	sent := time.Since(start)
	deadline := time.Now().Add(time.Minute)
	var lags Result
	for {
		lags = Result{}
		recv.mu.Lock()
		for id, at := range answered {
			if got, ok := recv.arrived[id]; ok {
				lags.OK++
				lags.latencies = append(lags.latencies, max(got.Sub(at), 0))
			}
		}
		recv.mu.Unlock()
		if lags.OK == len(answered) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	lags.Elapsed = sent
	lags.Errors = int(failed.Load()) + len(answered) - lags.OK
	p99 := lags.Percentile(0.99)
	fmt.Fprintf(b.out, "    %d creates in %s (%.0f/s), %d webhooks: lag p50 %.0fms p99 %.0fms max %.0fms\n",
		len(answered), sent.Round(time.Millisecond), float64(len(answered))/sent.Seconds(), lags.OK,
		loadtest.Millis(lags.Percentile(0.5)), loadtest.Millis(p99), loadtest.Millis(lags.Percentile(1)))
	b.rows = append(b.rows, row{name: fmt.Sprintf("(7a) lead.created lag p99 at %d/s", lagRate),
		platform: fmt.Sprintf("p50 %.0fms p99 %.0fms", loadtest.Millis(lags.Percentile(0.5)), loadtest.Millis(p99)), baseline: "-",
		ratio: p99.Seconds(), target: "< 500 ms", pass: p99 < 500*time.Millisecond && lags.Errors == 0})
	return nil
}

func subsArray(ids []int64) pq.Int64Array { return pq.Int64Array(ids) }
