package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/app"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/telephony"
	"ccplatform/tools/internal/userdir"

	"go.uber.org/zap"
)

// Bounds of one dial run.
const (
	maxDialers    = 32
	dialBatch     = 10
	dialLease     = 60 // seconds each lease holds its leads
	dialIdleWait  = 500 * time.Millisecond
	dialCallPause = 50 * time.Millisecond
)

// dialTally counts what the dialers did, for the progress lines and the summary.
type dialTally struct {
	mu       sync.Mutex
	leased   int
	called   int
	released int
	outcomes map[string]int
}

func (d *dialTally) add(f func(*dialTally)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

func (d *dialTally) line(elapsed time.Duration) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	codes := make([]string, 0, len(d.outcomes))
	for c := range d.outcomes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	var b strings.Builder
	fmt.Fprintf(&b, "%5.0fs leased=%d called=%d released=%d", elapsed.Seconds(), d.leased, d.called, d.released)
	for _, c := range codes {
		fmt.Fprintf(&b, " %s=%d", c, d.outcomes[c])
	}
	return b.String()
}

// dialCommand plays N dialers of the telephony platform for an order: each leases due leads
// (POST /v2/dialer/lease on lead-api, as the admin), "calls" them (publishes the telephony call
// event of each call, ending now, with the outcomes simulate-calls draws), and releases what it
// did not call when the time is up. lead-worker then moves each lead on (status, next call) and
// the call's event ends its lease. A progress line per second and a summary go to stdout.
func dialCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("dial")
	orderID := fs.Int64("order", 0, "id of the order whose due leads are dialed")
	dialers := fs.Int("dialers", 4, fmt.Sprintf("concurrent dialers, 1..%d", maxDialers))
	duration := fs.Duration("duration", 30*time.Second, "how long to dial")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *orderID <= 0:
		return cli.Usagef("dial: --order must be an order id > 0")
	case *dialers < 1 || *dialers > maxDialers:
		return cli.Usagef("dial: --dialers must be from 1 to %d", maxDialers)
	case *duration <= 0:
		return cli.Usagef("dial: --duration must be > 0")
	}
	if err := e.platformPlayable("dial"); err != nil {
		return err
	}
	users, err := e.users("dial")
	if err != nil {
		return err
	}
	agents, err := callAgents(ctx, users)
	if err != nil {
		return err
	}
	admin, err := anAdmin(ctx, users)
	if err != nil {
		return err
	}
	endpoints, err := orderEndpoints(ctx, e.cfg.OrderURL, e.cfg.InternalToken, *orderID)
	if err != nil {
		return err
	}
	leads := svcclient.New("lead", e.cfg.LeadURL, e.cfg.InternalToken, serviceTimeout)
	defer leads.CloseIdleConnections()
	conn := mq.Dial(e.cfg.AMQPURL, "ccadmin-dial", zap.NewNop(), mq.WorkQueue(telephony.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()

	// The leases act for the admin, as the platform's own dialers would with an admin's key.
	ctx = svcclient.WithCaller(ctx, admin, string(access.Admin))
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	tally := &dialTally{outcomes: map[string]int{}}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, *dialers)
	for i := range *dialers {
		wg.Go(func() {
			d := dialer{id: fmt.Sprintf("ccadmin-%d", i+1), order: *orderID, leads: leads, pub: pub, agents: agents,
				endpoints: endpoints, tally: tally, r: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))}
			if err := d.run(ctx, runCtx); err != nil {
				errs <- err
				cancel()
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-tick.C:
			fmt.Fprintln(e.stdout, tally.line(time.Since(start)))
		}
	}
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "summary:", strings.TrimSpace(tally.line(time.Since(start))))
	if tally.leased == 0 {
		return e.explainNothingDue(ctx, leads, *orderID)
	}
	return nil
}

// explainNothingDue tells, on stderr, why no lead of the order was due (GET /v2/dialer/explain).
func (e *env) explainNothingDue(ctx context.Context, leads *svcclient.Client, orderID int64) error {
	fmt.Fprintf(e.stderr, "no lead of order %d was due\n", orderID)
	var why ccapi.DialerExplainResult
	if err := leads.Do(ctx, http.MethodGet, fmt.Sprintf("/v2/dialer/explain/%d", orderID), nil, &why.Data); err != nil {
		return fmt.Errorf("explain order %d: %w", orderID, err)
	}
	fmt.Fprint(e.stderr, explanation(why))
	return nil
}

// explanation writes why an order's leads were not due, one line per reason that holds any.
func explanation(why ccapi.DialerExplainResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "leads not due: %d, due: %d\n", why.Data.NotDue, why.Data.Due)
	for _, r := range why.Data.Reasons {
		if r.Count == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %-14s %d", r.Reason, r.Count)
		if r.NextWindowAt != nil {
			fmt.Fprintf(&b, " (next window opens %s)", r.NextWindowAt.UTC().Format(time.RFC3339))
		}
		if r.EarliestPlannedAt != nil {
			fmt.Fprintf(&b, " (earliest planned %s)", r.EarliestPlannedAt.UTC().Format(time.RFC3339))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// anAdmin is an active admin's id: dial's leases and import's uploads act on their behalf.
func anAdmin(ctx context.Context, users *userdir.Directory) (int64, error) {
	admins, err := users.Active(ctx, access.Admin)
	if err != nil {
		return 0, err
	}
	if len(admins) == 0 {
		return 0, fmt.Errorf("no active admin to act for (run user-admin seed)")
	}
	return int64(admins[0].Id), nil
}

// dialer is one simulated dialer of the telephony platform.
type dialer struct {
	id        string
	order     int64
	leads     *svcclient.Client
	pub       *mq.Publisher
	agents    []int64
	endpoints []int64
	tally     *dialTally
	r         *rand.Rand
}

// run leases and calls until runCtx ends; ctx (which outlives runCtx) gives back what is left.
func (d *dialer) run(ctx, runCtx context.Context) error {
	for runCtx.Err() == nil {
		var lease ccapi.LeaseResult
		err := d.leads.Do(runCtx, http.MethodPost, "/v2/dialer/lease",
			ccapi.LeaseRequest{OrderId: int(d.order), Limit: new(dialBatch), LeaseSeconds: new(dialLease), DialerId: d.id}, &lease.Data)
		if runCtx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dialer %s: lease: %w", d.id, err)
		}
		if len(lease.Data.List) == 0 {
			app.Sleep(runCtx, dialIdleWait)
			continue
		}
		d.tally.add(func(t *dialTally) { t.leased += len(lease.Data.List) })
		called := 0
		for _, l := range lease.Data.List {
			if runCtx.Err() != nil {
				break
			}
			if err := d.call(ctx, l); err != nil {
				return err
			}
			called++
			app.Sleep(runCtx, dialCallPause)
		}
		if left := lease.Data.List[called:]; len(left) > 0 {
			ids := make([]int, len(left))
			for i, l := range left {
				ids[i] = l.Id
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			var out ccapi.ReleaseResult
			err := d.leads.Do(rctx, http.MethodPost, "/v2/dialer/release",
				ccapi.ReleaseRequest{LeaseId: *lease.Data.LeaseId, LeadIds: &ids}, &out.Data)
			cancel()
			if err != nil {
				return fmt.Errorf("dialer %s: release: %w", d.id, err)
			}
			d.tally.add(func(t *dialTally) { t.released += len(out.Data.LeadIds) })
		}
	}
	return nil
}

// call publishes the telephony event of one outgoing call of l that ends now.
func (d *dialer) call(ctx context.Context, l ccapi.LeasedLead) error {
	now := time.Now().UTC().Truncate(time.Second)
	ev := dialedCall(d.r, now, simLead{ID: int64(l.Id), Phone: l.Phone, OrderID: d.order},
		d.agents[d.r.IntN(len(d.agents))], d.endpoints[d.r.IntN(len(d.endpoints))])
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode call event: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.pub.Publish(pctx, "", telephony.Queue, mq.Message{ID: ev.EventID, Type: telephony.EventType, Body: body}); err != nil {
		return fmt.Errorf("dialer %s: publish call event: %w", d.id, err)
	}
	d.tally.add(func(t *dialTally) { t.called++; t.outcomes[ev.StatusCode]++ })
	return nil
}

// dialedCall is simulatedCall placed by a dialer: outgoing, and ending at now.
func dialedCall(r *rand.Rand, now time.Time, lead simLead, agentID, endpointID int64) telephony.CallEvent {
	ev := simulatedCall(r, now, lead, agentID, endpointID)
	shift := now.Sub(ev.EndedAt)
	ev.StartedAt, ev.EndedAt = ev.StartedAt.Add(shift), now
	if ev.AnsweredAt != nil {
		a := ev.AnsweredAt.Add(shift)
		ev.AnsweredAt = &a
	}
	if ev.AgentConnectedAt != nil {
		a := ev.AgentConnectedAt.Add(shift)
		ev.AgentConnectedAt = &a
	}
	ev.Direction = telephony.DirectionOutgoing
	return ev
}
