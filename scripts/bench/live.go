// Figure (13): what the live stream costs (GET /v2/report/live/, services/report/README.md):
// liveSubscribers streams open through the gateway while agents change state, and the CPU the
// gateway and the report API spend on them, from /proc/<pid>/stat.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

const (
	liveSubscribers = 200
	liveOrders      = 10
	liveAgents      = 40
	// liveChurn is how often one agent changes state (round robin over the agents): 10 changes a
	// second, each agent every 4 s.
	liveChurn = 100 * time.Millisecond
	// liveBaseline is how long the same churn runs with no stream open, for the baseline.
	liveBaseline = 10 * time.Second
	// liveTarget is figure (13)'s target: % of one core for the gateway and the report API together.
	liveTarget = 5.0
)

// live is figure (13): liveOrders orders with 4 agents each, every agent on a call of its order
// (telephony.agents, as the platform reports states), then liveSubscribers staff streams through
// the gateway for LiveDuration while the agents go on call, to wrap-up, available and ringing
// again. The baseline is the same churn with no stream open.
func (b *bench) live(ctx context.Context) error {
	fmt.Fprintf(b.out, "== (13) live stream: %d subscribers through the gateway for %s, %d orders of %d agents, one state change every %s\n",
		liveSubscribers, b.cfg.LiveDuration, liveOrders, liveAgents/liveOrders, liveChurn)
	orderOf := map[int64]int64{}
	var agents []int64
	for o := range liveOrders {
		var team []int64
		for a := range liveAgents / liveOrders {
			out, err := b.stack.UserAdmin("user", "create", "--email", fmt.Sprintf("live.%d.%d@bench.local", o, a), "--access-group", "call-center")
			if err != nil {
				return fmt.Errorf("create agent: %w: %s", err, out)
			}
			var id int64
			if _, err := fmt.Sscan(strings.TrimSpace(out), &id); err != nil {
				return fmt.Errorf("create agent: %q: %w", out, err)
			}
			team = append(team, id)
		}
		body, _ := json.Marshal(map[string]any{"serviceTitle": "bench", "title": fmt.Sprintf("Live %d", o), "status": "success",
			"sipEndpointIds": []int{1}, "agentUserIds": team})
		var created struct {
			ID int64 `json:"id"`
		}
		if err := b.api.Do(ctx, "POST", "/v2/order/create/", body, &created); err != nil {
			return fmt.Errorf("create order: %w", err)
		}
		for _, id := range team {
			orderOf[id] = created.ID
		}
		agents = append(agents, team...)
	}

	conn := mq.Dial(b.amqpURL, "bench-agents", zap.NewNop(), mq.WorkQueue(telephony.AgentsQueue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	// Each agent goes round on-call → wrap-up → available → ringing; the calls name its order.
	cycle := []string{telephony.AgentOnCall, telephony.AgentWrapUp, telephony.AgentAvailable, telephony.AgentRinging}
	step := map[int64]int{}
	announce := func(ctx context.Context, agent int64) error {
		state := cycle[step[agent]%len(cycle)]
		step[agent]++
		ev := telephony.AgentEvent{EventID: uuid.NewString(), UserID: agent, At: time.Now().UTC(), State: state}
		if state != telephony.AgentAvailable {
			order := orderOf[agent]
			ev.OrderID = &order
		}
		body, _ := json.Marshal(ev)
		return pub.Publish(ctx, "", telephony.AgentsQueue, mq.Message{ID: ev.EventID, Type: telephony.AgentEventType, Body: body})
	}
	for _, a := range agents {
		if err := announce(ctx, a); err != nil {
			return fmt.Errorf("announce: %w", err)
		}
	}
	// churn changes one agent's state every liveChurn until ctx ends.
	churn := func(ctx context.Context) error {
		t := time.NewTicker(liveChurn)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			if err := announce(ctx, agents[i%len(agents)]); err != nil && ctx.Err() == nil {
				return fmt.Errorf("announce: %w", err)
			}
		}
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: liveSubscribers + 10}}
	var events, bytesRead atomic.Int64
	// subscribe opens one stream and counts its events until ctx ends; first gets the number of
	// orders of each event until it is closed by the caller's reading.
	subscribe := func(ctx context.Context, first chan<- int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.stack.BaseURL+"/v2/report/live/", nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Api-Key", b.stack.APIKey)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			return fmt.Errorf("GET /v2/report/live/: %s", res.Status)
		}
		go func() {
			defer res.Body.Close()
			r := bufio.NewReaderSize(res.Body, 64<<10)
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					return
				}
				bytesRead.Add(int64(len(line)))
				if data, ok := strings.CutPrefix(string(line), "data: "); ok {
					events.Add(1)
					if first != nil {
						var ev struct{ Orders []json.RawMessage }
						if json.Unmarshal([]byte(data), &ev) == nil {
							select {
							case first <- len(ev.Orders):
							default:
							}
						}
					}
				}
			}
		}()
		return nil
	}
	cpu := func() (gw, report, lead time.Duration, err error) {
		if gw, err = processCPU(b.stack.PID("gateway")); err != nil {
			return
		}
		if report, err = processCPU(b.stack.PID("report")); err != nil {
			return
		}
		lead, err = processCPU(b.stack.PID("lead-api"))
		return
	}
	pct := func(d, wall time.Duration) float64 { return 100 * d.Seconds() / wall.Seconds() }
	// measure runs the churn for d and returns the CPU of the gateway, the report API and lead-api
	// in % of one core over it.
	measure := func(d time.Duration) (gw, report, lead float64, err error) {
		g0, r0, l0, err := cpu()
		if err != nil {
			return 0, 0, 0, err
		}
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, d)
		err = churn(cctx)
		cancel()
		wall := time.Since(start)
		g1, r1, l1, cerr := cpu()
		if err == nil {
			err = cerr
		}
		return pct(g1-g0, wall), pct(r1-r0, wall), pct(l1-l0, wall), err
	}

	// Baseline: the churn alone (report-worker and lead-api at work, no stream open).
	bg, br, bl, err := measure(liveBaseline)
	if err != nil {
		return err
	}

	sctx, closeStreams := context.WithCancel(ctx)
	defer closeStreams()
	probe := make(chan int, 1)
	if err := subscribe(sctx, probe); err != nil {
		return err
	}
	// The stream shows every order once the agents' first states are counted.
	for deadline := time.After(30 * time.Second); ; {
		select {
		case n := <-probe:
			if n < liveOrders {
				continue
			}
		case <-deadline:
			return fmt.Errorf("the live stream does not show the %d orders within 30 s", liveOrders)
		}
		break
	}
	var wg sync.WaitGroup
	var openErr error
	var mu sync.Mutex
	for range liveSubscribers - 1 {
		wg.Go(func() {
			if err := subscribe(sctx, nil); err != nil {
				mu.Lock()
				openErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if openErr != nil {
		return openErr
	}
	before := events.Load()
	gw, rep, lead, err := measure(b.cfg.LiveDuration)
	if err != nil {
		return err
	}
	delivered := events.Load() - before
	closeStreams()

	total := gw + rep
	fmt.Fprintf(b.out, "    %d streams: gateway %.2f%%, report %.2f%% of one core (lead-api %.2f%%, answering the report once a second); %d events delivered (%.1f/s, %.2f per stream per second), %.1f MiB read in all\n",
		liveSubscribers, gw, rep, lead, delivered, float64(delivered)/b.cfg.LiveDuration.Seconds(),
		float64(delivered)/b.cfg.LiveDuration.Seconds()/liveSubscribers, mib(bytesRead.Load()))
	fmt.Fprintf(b.out, "    baseline, the same churn with no stream open (%s): gateway %.2f%%, report %.2f%%, lead-api %.2f%%\n",
		liveBaseline, bg, br, bl)
	b.rows = append(b.rows, row{
		name:     fmt.Sprintf("(13) live stream, %d subscribers", liveSubscribers),
		platform: fmt.Sprintf("gateway+report %.2f%% of a core", total),
		// The ratio is the share of the budget used: with no stream open the two use next to
		// nothing, which makes a ratio to the baseline meaningless.
		baseline: fmt.Sprintf("no stream open %.2f%% (ratio: of the budget)", bg+br),
		ratio:    total / liveTarget,
		target:   fmt.Sprintf("≤ %.0f%% core", liveTarget),
		pass:     total <= liveTarget,
	})
	return nil
}
