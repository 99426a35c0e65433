package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/telephony"
	"ccplatform/tools/internal/userdir"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

// maxSimulatedCalls bounds one run; more is a load test, which has its own tool.
const maxSimulatedCalls = 1000

// simLead is a lead as the lead service's internal list gives it. That list is an internal route,
// outside the public contract, so no generated type describes it.
type simLead struct {
	ID      int64  `json:"id"`
	Phone   string `json:"phone"`
	OrderID int64  `json:"orderId"`
}

// simulateCallsCommand publishes call events for an order's leads to telephony.calls, as the
// telephony platform does after each call, for demos and tests. It prints the platform call id of
// each event it got confirmed.
func simulateCallsCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("simulate-calls")
	orderID := fs.Int64("order", 0, "id of the order whose leads are called")
	count := fs.Int("count", 10, fmt.Sprintf("number of calls, 1..%d", maxSimulatedCalls))
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *orderID <= 0 {
		return cli.Usagef("simulate-calls: --order must be an order id > 0")
	}
	if *count < 1 || *count > maxSimulatedCalls {
		return cli.Usagef("simulate-calls: --count must be from 1 to %d", maxSimulatedCalls)
	}
	if err := e.platformPlayable("simulate-calls"); err != nil {
		return err
	}
	users, err := e.users("simulate-calls")
	if err != nil {
		return err
	}
	leads, err := orderLeads(ctx, e.cfg.LeadURL, e.cfg.InternalToken, *orderID, *count)
	if err != nil {
		return err
	}
	agents, err := callAgents(ctx, users)
	if err != nil {
		return err
	}
	endpoints, err := orderEndpoints(ctx, e.cfg.OrderURL, e.cfg.InternalToken, *orderID)
	if err != nil {
		return err
	}

	conn := mq.Dial(e.cfg.AMQPURL, "ccadmin-simulate-calls", zap.NewNop(), mq.WorkQueue(telephony.Queue))
	defer conn.Close()
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(*orderID)))
	now := time.Now().UTC()
	for i := range *count {
		ev := simulatedCall(r, now, leads[i%len(leads)], agents[r.IntN(len(agents))], endpoints[r.IntN(len(endpoints))])
		body, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode call event: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = pub.Publish(pctx, "", telephony.Queue, mq.Message{ID: ev.EventID, Type: telephony.EventType, Body: body})
		cancel()
		if err != nil {
			return fmt.Errorf("publish call event %d of %d: %w", i+1, *count, err)
		}
		fmt.Fprintln(e.stdout, ev.PlatformCallID)
	}
	fmt.Fprintf(e.stderr, "%d call events for order %d published to %s\n", *count, *orderID, telephony.Queue)
	return nil
}

// platformPlayable refuses to play the telephony platform without the lead service, whose leads
// it calls, or the broker, where it publishes the calls.
func (e *env) platformPlayable(command string) error {
	switch {
	case e.cfg.LeadURL == "":
		return errors.New(command + ": LEAD_URL is empty: the leads come from the lead service")
	case e.cfg.AMQPURL == "":
		return errors.New(command + ": AMQP_URL is empty: the calls are published to the broker")
	}
	return nil
}

// orderLeads asks the lead service for up to limit leads of the order.
func orderLeads(ctx context.Context, leadURL, token string, orderID int64, limit int) ([]simLead, error) {
	leads := svcclient.New("lead", leadURL, token, serviceTimeout)
	defer leads.CloseIdleConnections()
	var out struct {
		List []simLead `json:"list"`
	}
	path := fmt.Sprintf("/internal/leads?orderId=%d&limit=%d", orderID, limit)
	if err := leads.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, fmt.Errorf("leads of order %d: %w", orderID, err)
	}
	if len(out.List) == 0 {
		return nil, fmt.Errorf("order %d has no leads to call", orderID)
	}
	return out.List, nil
}

// callAgents are the active call-center users (the demo agents), or any active user when there
// are none.
func callAgents(ctx context.Context, users *userdir.Directory) ([]int64, error) {
	list, err := users.Active(ctx, access.CallCenter, access.CallCenterSenior)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		if list, err = users.Active(ctx); err != nil {
			return nil, err
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no active users to handle the calls (run user-admin seed)")
	}
	ids := make([]int64, len(list))
	for i, u := range list {
		ids[i] = int64(u.Id)
	}
	return ids, nil
}

// orderEndpoints are the order's virtual numbers, the lines the platform dials from; without an
// order service (or numbers), endpoint 1.
func orderEndpoints(ctx context.Context, orderURL, token string, orderID int64) ([]int64, error) {
	if orderURL == "" {
		return []int64{1}, nil
	}
	o, err := fetchOrder(ctx, orderURL, token, orderID)
	if err != nil {
		return nil, err
	}
	if len(o.SipEndpointIDs) == 0 {
		return []int64{1}, nil
	}
	return o.SipEndpointIDs, nil
}

// orderFacts are the fields of an order ccadmin reads from the order service's internal route,
// which the public contract does not describe.
type orderFacts struct {
	Code           string  `json:"code"`
	SipEndpointIDs []int64 `json:"sipEndpointIds"`
	AgentUserIDs   []int64 `json:"agentUserIds"`
}

// fetchOrder reads an order from the order service's internal route.
func fetchOrder(ctx context.Context, orderURL, token string, orderID int64) (orderFacts, error) {
	orders := svcclient.New("order", orderURL, token, serviceTimeout)
	defer orders.CloseIdleConnections()
	var o orderFacts
	if err := orders.Do(ctx, http.MethodGet, fmt.Sprintf("/internal/orders/%d", orderID), nil, &o); err != nil {
		return orderFacts{}, fmt.Errorf("order %d: %w", orderID, err)
	}
	return o, nil
}

// outcome is one way a call ends, with how often it happens in a typical outbound campaign.
type outcome struct {
	code     string
	weight   int
	answered bool
	// finishedBy is who hangs up; "" means agent or client at random, "-" means nobody (null).
	finishedBy string
	// ring is how long the line rings (or fails) before the outcome, in seconds.
	ringMin, ringMax int
}

var outcomes = []outcome{
	{telephony.StatusAnswered, 45, true, "", 3, 25},
	{telephony.StatusNoAnswer, 20, false, telephony.FinishedBySystem, 25, 45},
	{telephony.StatusBusy, 9, false, telephony.FinishedBySystem, 1, 5},
	{telephony.StatusVoicemail, 8, false, telephony.FinishedBySystem, 10, 30},
	{telephony.StatusRejected, 6, false, telephony.FinishedByClient, 2, 15},
	{telephony.StatusFailed, 4, false, "-", 0, 3},
	{telephony.StatusCancelled, 4, false, telephony.FinishedByAgent, 2, 20},
	{telephony.StatusInvalidNumber, 2, false, telephony.FinishedBySystem, 0, 2},
	{telephony.StatusAbandoned, 2, true, telephony.FinishedBySystem, 3, 15},
}

func pickOutcome(r *rand.Rand) outcome {
	total := 0
	for _, o := range outcomes {
		total += o.weight
	}
	n := r.IntN(total)
	for _, o := range outcomes {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return outcomes[0]
}

func between(r *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo+r.IntN(hi-lo+1)) * time.Second
}

// simulatedCall is one realistic call of lead that ended before now: mostly outgoing (some of them
// predictive), now and then the client calling back; answered calls talk and are recorded.
func simulatedCall(r *rand.Rand, now time.Time, lead simLead, agentID, endpointID int64) telephony.CallEvent {
	o := pickOutcome(r)
	direction := telephony.DirectionOutgoing
	if r.IntN(10) == 0 {
		direction = telephony.DirectionIncoming
	}
	ring := between(r, o.ringMin, o.ringMax)
	var talk time.Duration
	if o.code == telephony.StatusAnswered {
		talk = between(r, 20, 600)
	} else if o.answered {
		talk = between(r, 1, 5) // abandoned: the client hears the hold message and hangs up
	}
	ended := now.Add(-between(r, 60, 6*3600)).Truncate(time.Second)
	started := ended.Add(-ring - talk)
	ev := telephony.CallEvent{
		EventID:        uuid.NewString(),
		PlatformCallID: "sim-" + uuid.NewString(),
		LeadID:         lead.ID,
		OrderID:        lead.OrderID,
		UserID:         agentID,
		SipEndpointID:  endpointID,
		Direction:      direction,
		StatusCode:     o.code,
		ClientPhone:    lead.Phone,
		StartedAt:      started,
		EndedAt:        ended,
		HasRecords:     o.code == telephony.StatusAnswered,
		IsPredictive:   direction == telephony.DirectionOutgoing && r.IntN(5) < 2,
	}
	if o.answered {
		answered := started.Add(ring)
		ev.AnsweredAt = &answered
		if o.code == telephony.StatusAnswered {
			// An agent is put through at once; an abandoned call is one no agent took.
			ev.AgentConnectedAt = &answered
		}
	}
	switch o.finishedBy {
	case "-":
	case "":
		by := telephony.FinishedByAgent
		if r.IntN(5) < 2 {
			by = telephony.FinishedByClient
		}
		ev.FinishInitiator = &by
	default:
		by := o.finishedBy
		ev.FinishInitiator = &by
	}
	return ev
}
