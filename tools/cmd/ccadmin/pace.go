package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/telephony"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

// paceCommand plays an order's agents and a paced dialer against the real platform: the agents
// report their states on telephony.agents (available, on-call, wrap-up), the dialer asks
// POST /v2/dialer/lease without a limit every time the platform says to ask again and "dials" what
// it is given, and the simulated telephony connects each answered call to a free agent or abandons
// it after 2 s, reporting every call on telephony.calls. Time runs --speed times faster than the
// model (a quarter of the calls answered after 5 to 15 s, talks of about 3 minutes, 10 s of
// wrap-up). Each second it prints the dial level, the calls in flight, the agents by state and the
// order's abandon rate as GET /v2/dialer/pace/ reports it.
func paceCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("pace")
	orderID := fs.Int64("order", 0, "id of the order to dial (auto-dialing on, with agents)")
	duration := fs.Duration("duration", time.Minute, "how long to play")
	speed := fs.Float64("speed", 10, "how many times faster than the model time runs, 1..100")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *orderID <= 0:
		return cli.Usagef("pace: --order must be an order id > 0")
	case *duration <= 0:
		return cli.Usagef("pace: --duration must be > 0")
	case *speed < 1 || *speed > 100:
		return cli.Usagef("pace: --speed must be from 1 to 100")
	}
	if err := e.platformPlayable("pace"); err != nil {
		return err
	}
	users, err := e.users("pace")
	if err != nil {
		return err
	}
	admin, err := anAdmin(ctx, users)
	if err != nil {
		return err
	}
	o, err := fetchOrder(ctx, e.cfg.OrderURL, e.cfg.InternalToken, *orderID)
	if err != nil {
		return err
	}
	if len(o.AgentUserIDs) == 0 {
		return fmt.Errorf("pace: order %d names no agents (agentUserIds): nobody would take the calls", *orderID)
	}
	leads := svcclient.New("lead", e.cfg.LeadURL, e.cfg.InternalToken, serviceTimeout)
	defer leads.CloseIdleConnections()
	conn := mq.Dial(e.cfg.AMQPURL, "ccadmin-pace", zap.NewNop(), mq.WorkQueue(telephony.Queue), mq.WorkQueue(telephony.AgentsQueue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	ctx = svcclient.WithCaller(ctx, admin, string(access.Admin))

	endpoint := int64(1)
	if len(o.SipEndpointIDs) > 0 {
		endpoint = o.SipEndpointIDs[0]
	}
	p := &pacePlay{order: *orderID, endpoint: endpoint, speed: *speed, leads: leads, pub: pub,
		r: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)), states: map[int64]string{}}
	for _, id := range o.AgentUserIDs {
		if err := p.agentState(ctx, id, telephony.AgentAvailable, nil); err != nil {
			return err
		}
	}
	if err := p.run(ctx, *duration, func(line string) { fmt.Fprintln(e.stdout, line) }); err != nil {
		return err
	}
	if p.dialed == 0 {
		return e.explainNothingDue(ctx, leads, *orderID)
	}
	return nil
}

// pacePlay is the simulated call center of one pace run.
type pacePlay struct {
	order, endpoint int64
	speed           float64
	leads           *svcclient.Client
	pub             *mq.Publisher
	r               *rand.Rand
	states          map[int64]string // each agent's state
	waiting         []*paceCall      // answered calls no agent took yet
	events          []paceEvent
	dialLevel       float64
	inFlight        int
	dialed          int
}

type paceCall struct {
	lead             ccapi.LeasedLead
	started, answer  time.Time
	agent            int64
	abandoned, ended bool
}

type paceEvent struct {
	at time.Time
	do func(context.Context) error
}

// model is d seconds of the model, in play time.
func (p *pacePlay) model(seconds float64) time.Duration {
	return time.Duration(seconds / p.speed * float64(time.Second))
}

func (p *pacePlay) after(d time.Duration, do func(context.Context) error) {
	p.events = append(p.events, paceEvent{at: time.Now().Add(d), do: do})
}

func (p *pacePlay) run(ctx context.Context, duration time.Duration, print func(string)) error {
	start := time.Now()
	nextLease, nextPrint := start, start.Add(time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Since(start) < duration {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		now := time.Now()
		var due []paceEvent
		rest := p.events[:0]
		for _, ev := range p.events {
			if ev.at.After(now) {
				rest = append(rest, ev)
			} else {
				due = append(due, ev)
			}
		}
		p.events = rest
		for _, ev := range due {
			if err := ev.do(ctx); err != nil {
				return err
			}
		}
		if !now.Before(nextLease) {
			wait, err := p.lease(ctx)
			if err != nil {
				return err
			}
			nextLease = now.Add(max(wait, 100*time.Millisecond))
		}
		if !now.Before(nextPrint) {
			line, err := p.line(ctx, now.Sub(start))
			if err != nil {
				return err
			}
			print(line)
			nextPrint = nextPrint.Add(time.Second)
		}
	}
	return nil
}

// lease asks for the paced lease and dials what it gives; it returns when to ask again.
func (p *pacePlay) lease(ctx context.Context) (time.Duration, error) {
	var out struct {
		List         []ccapi.LeasedLead `json:"list"`
		DialLevel    *float64           `json:"dialLevel"`
		RetryAfterMs *int64             `json:"retryAfterMs"`
	}
	body := map[string]any{"orderId": p.order, "dialerId": "ccadmin-pace", "leaseSeconds": 600}
	if err := p.leads.Do(ctx, http.MethodPost, "/v2/dialer/lease", body, &out); err != nil {
		return 0, fmt.Errorf("paced lease: %w", err)
	}
	if out.DialLevel != nil {
		p.dialLevel = *out.DialLevel
	}
	for _, l := range out.List {
		p.dial(l)
	}
	if out.RetryAfterMs == nil {
		return time.Second, nil
	}
	return time.Duration(*out.RetryAfterMs) * time.Millisecond, nil
}

// dial places one call: a quarter are answered after 5 to 15 s, the others end after 20 to 30 s.
func (p *pacePlay) dial(l ccapi.LeasedLead) {
	c := &paceCall{lead: l, started: time.Now().UTC()}
	p.inFlight++
	p.dialed++
	if p.r.Float64() < 0.25 {
		p.after(p.model(5+10*p.r.Float64()), func(ctx context.Context) error { return p.answered(ctx, c) })
		return
	}
	p.after(p.model(20+10*p.r.Float64()), func(ctx context.Context) error { return p.report(ctx, c, telephony.StatusNoAnswer) })
}

func (p *pacePlay) answered(ctx context.Context, c *paceCall) error {
	c.answer = time.Now().UTC()
	if a, ok := p.freeAgent(); ok {
		return p.connect(ctx, c, a)
	}
	p.waiting = append(p.waiting, c)
	p.after(2*time.Second/time.Duration(p.speed), func(ctx context.Context) error {
		if c.agent != 0 || c.ended {
			return nil
		}
		c.abandoned = true
		return p.report(ctx, c, telephony.StatusAnswered)
	})
	return nil
}

func (p *pacePlay) freeAgent() (int64, bool) {
	for id, s := range p.states {
		if s == telephony.AgentAvailable {
			return id, true
		}
	}
	return 0, false
}

// connect hands c to agent a: a talk of about 3 minutes (lognormal, σ 0.6), then 10 s of wrap-up.
func (p *pacePlay) connect(ctx context.Context, c *paceCall, a int64) error {
	c.agent = a
	if err := p.agentState(ctx, a, telephony.AgentOnCall, &p.order); err != nil {
		return err
	}
	talk := math.Exp(math.Log(180) - 0.18 + 0.6*p.r.NormFloat64())
	p.after(p.model(talk), func(ctx context.Context) error {
		if err := p.report(ctx, c, telephony.StatusAnswered); err != nil {
			return err
		}
		if err := p.agentState(ctx, a, telephony.AgentWrapUp, &p.order); err != nil {
			return err
		}
		p.after(p.model(10), func(ctx context.Context) error { return p.free(ctx, a) })
		return nil
	})
	return nil
}

// free makes agent a available, and gives it the oldest answered call still waiting.
func (p *pacePlay) free(ctx context.Context, a int64) error {
	if err := p.agentState(ctx, a, telephony.AgentAvailable, nil); err != nil {
		return err
	}
	for len(p.waiting) > 0 {
		c := p.waiting[0]
		p.waiting = p.waiting[1:]
		if !c.abandoned && !c.ended {
			return p.connect(ctx, c, a)
		}
	}
	return nil
}

// report publishes the call's event on telephony.calls: it has ended.
func (p *pacePlay) report(ctx context.Context, c *paceCall, status string) error {
	c.ended = true
	p.inFlight--
	now := time.Now().UTC()
	agent := c.agent
	if agent == 0 {
		for id := range p.states {
			agent = id // the platform names the agent the call was meant for
			break
		}
	}
	ev := telephony.CallEvent{EventID: uuid.NewString(), PlatformCallID: "ccadmin-pace-" + uuid.NewString(),
		LeadID: int64(c.lead.Id), OrderID: p.order, UserID: agent, SipEndpointID: p.endpoint,
		Direction: telephony.DirectionOutgoing, StatusCode: status, ClientPhone: c.lead.Phone,
		StartedAt: c.started, EndedAt: now}
	if !c.answer.IsZero() {
		a := c.answer
		ev.AnsweredAt = &a
		if c.agent != 0 && !c.abandoned {
			ev.AgentConnectedAt = &a
		}
	}
	return p.publish(ctx, telephony.Queue, telephony.EventType, ev.EventID, ev)
}

func (p *pacePlay) agentState(ctx context.Context, id int64, state string, order *int64) error {
	p.states[id] = state
	ev := telephony.AgentEvent{EventID: uuid.NewString(), UserID: id, At: time.Now().UTC(), State: state, OrderID: order}
	return p.publish(ctx, telephony.AgentsQueue, telephony.AgentEventType, ev.EventID, ev)
}

func (p *pacePlay) publish(ctx context.Context, queue, typ, id string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", typ, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.pub.Publish(pctx, "", queue, mq.Message{ID: id, Type: typ, Body: body}); err != nil {
		return fmt.Errorf("publish %s: %w", typ, err)
	}
	return nil
}

// line is one progress line: the dialer's view and the platform's.
func (p *pacePlay) line(ctx context.Context, elapsed time.Duration) (string, error) {
	var pace struct {
		Abandon struct {
			Abandoned int64    `json:"abandoned"`
			Live      int64    `json:"live"`
			Rate      *float64 `json:"ratePercent"`
		} `json:"abandon24h"`
		Suspended bool    `json:"predictiveSuspended"`
		Reason    *string `json:"suspendedReason"`
	}
	if err := p.leads.Do(ctx, http.MethodGet, fmt.Sprintf("/v2/dialer/pace/%d", p.order), nil, &pace); err != nil {
		return "", fmt.Errorf("pace: %w", err)
	}
	by := map[string]int{}
	for _, s := range p.states {
		by[s]++
	}
	rate := "-"
	if pace.Abandon.Rate != nil {
		rate = fmt.Sprintf("%.1f%%", *pace.Abandon.Rate)
	}
	line := fmt.Sprintf("%5.0fs dialLevel=%.2f inFlight=%d agents available=%d on-call=%d wrap-up=%d abandoned=%d/%d (%s)",
		elapsed.Seconds(), p.dialLevel, p.inFlight, by[telephony.AgentAvailable], by[telephony.AgentOnCall],
		by[telephony.AgentWrapUp], pace.Abandon.Abandoned, pace.Abandon.Live, rate)
	if pace.Suspended && pace.Reason != nil {
		line += " predictive suspended: " + *pace.Reason
	}
	return line, nil
}
