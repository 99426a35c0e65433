package dialer

import (
	"context"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/orders"
	"ccplatform/services/lead/internal/pacer"
)

// paceInputs is what one pacing decision read.
type paceInputs struct {
	agents   []agents.Agent
	inFlight []time.Time
	stats    Stats
}

// paceInputs reads what a decision needs but the calls in flight: the order's agents and its
// statistics.
func (s *Service) paceInputs(ctx context.Context, o orders.Order, now time.Time) (paceInputs, error) {
	var in paceInputs
	var err error
	if in.agents, err = s.agents.Eligible(ctx, o.AgentUserIDs, o.AgentGroupIDs); err != nil {
		return in, err
	}
	in.stats, err = s.store.Stats(ctx, o.ID, now)
	return in, err
}

// pace is the pacer's decision for order o at now on in, recorded in the metrics.
func (s *Service) pace(o orders.Order, now time.Time, in paceInputs) pacer.Decision {
	d := pacer.Decide(PacerInput(o, now, in.agents, in.inFlight, in.stats))
	s.metrics.observe(o, d, in)
	return d
}

// decide runs the pacer for order o at now on the order's agents, calls in flight and statistics
// (the pace route: a paced lease reads its calls in flight in its own transaction).
func (s *Service) decide(ctx context.Context, o orders.Order, now time.Time) (pacer.Decision, paceInputs, error) {
	in, err := s.paceInputs(ctx, o, now)
	if err != nil {
		return pacer.Decision{}, in, err
	}
	if in.inFlight, err = s.store.InFlight(ctx, o.ID, now); err != nil {
		return pacer.Decision{}, in, err
	}
	return s.pace(o, now, in), in, nil
}

// visibleOrder reads an order named in a path: outside the caller's scope or unknown, it is a 404
// (a client learns nothing of another client's orders).
func (s *Service) visibleOrder(ctx context.Context, caller identity.Caller, id int64) (orders.Order, error) {
	return s.orderIn(ctx, caller, id, apperr.NotFoundf("order %d does not exist", id))
}

// Pace is what GET /v2/dialer/pace/{orderId} answers.
type Pace struct {
	OrderID               int64            `json:"orderId"`
	Mode                  string           `json:"mode"`
	PredictiveModeEnabled bool             `json:"predictiveModeEnabled"`
	DialLevel             float64          `json:"dialLevel"`
	Dial                  int              `json:"dial"`
	RetryAfterMs          int64            `json:"retryAfterMs"`
	Agents                map[string]int64 `json:"agents"`
	CallsInFlight         int              `json:"callsInFlight"`
	AnswerRate            *float64         `json:"answerRate"`
	HandleTimeMeanSeconds *float64         `json:"handleTimeMeanSeconds"`
	HandleTimeP90Seconds  *float64         `json:"handleTimeP90Seconds"`
	Abandon24h            AbandonFigures   `json:"abandon24h"`
	Abandon30d            AbandonFigures   `json:"abandon30d"`
	AbandonWindow         string           `json:"abandonWindow"`
	MaxAbandonRatePercent float64          `json:"maxAbandonRatePercent"`
	PredictiveSuspended   bool             `json:"predictiveSuspended"`
	SuspendedReason       *string          `json:"suspendedReason"`
}

// AbandonFigures are the abandoned and live calls of a window and their rate in percent (null
// when no call was live).
type AbandonFigures struct {
	Abandoned   int64    `json:"abandoned"`
	Live        int64    `json:"live"`
	RatePercent *float64 `json:"ratePercent"`
}

func abandonFigures(abandoned, live int64) AbandonFigures {
	f := AbandonFigures{Abandoned: abandoned, Live: live}
	if r := Rate(abandoned, live); r != nil {
		p := *r * 100
		f.RatePercent = &p
	}
	return f
}

// Pace reads the order's pacing as a paced lease would decide it now, and the figures it reads.
func (s *Service) Pace(ctx context.Context, caller identity.Caller, orderID int64) (Pace, error) {
	o, err := s.visibleOrder(ctx, caller, orderID)
	if err != nil {
		return Pace{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	d, in, err := s.decide(ctx, o, now)
	if err != nil {
		return Pace{}, err
	}
	p := Pace{OrderID: o.ID, Mode: ModeOf(o), PredictiveModeEnabled: o.PredictiveModeEnabled, DialLevel: d.DialLevel,
		Dial: d.Dial, RetryAfterMs: d.RetryAfter.Milliseconds(), Agents: map[string]int64{},
		CallsInFlight: len(in.inFlight), AnswerRate: Rate(in.stats.RecentLive, in.stats.RecentDialed),
		Abandon24h: abandonFigures(in.stats.Abandoned24h, in.stats.Live24h), Abandon30d: abandonFigures(in.stats.Abandoned30d, in.stats.Live30d),
		AbandonWindow: AbandonWindowOf(o), MaxAbandonRatePercent: o.MaxAbandonRatePercent}
	if p.MaxAbandonRatePercent <= 0 {
		p.MaxAbandonRatePercent = defaultMaxAbandonRatePercent
	}
	for _, a := range in.agents {
		p.Agents[a.State]++
	}
	p.HandleTimeMeanSeconds, p.HandleTimeP90Seconds = HandleFigures(in.stats.HandleTimes)
	var reason string
	if p.PredictiveSuspended, reason = Suspension(o, d); reason != "" {
		p.SuspendedReason = &reason
	}
	return p, nil
}

// Explanation is what GET /v2/dialer/explain/{orderId} answers.
type Explanation struct {
	OrderID int64  `json:"orderId"`
	At      string `json:"at"`
	// Due counts the leads a lease would hand out now; NotDue the others, by reason.
	Due     int64         `json:"due"`
	NotDue  int64         `json:"notDue"`
	Reasons []ReasonCount `json:"reasons"`
}

// ReasonCount is the leads failing first on one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
	// NextWindowAt: for outsideWindow, when the first of those leads' windows opens.
	NextWindowAt *string `json:"nextWindowAt,omitempty"`
	// EarliestPlannedAt: for plannedLater, the earliest planned call.
	EarliestPlannedAt *string `json:"earliestPlannedAt,omitempty"`
}

// ExplainOrder is every reason in the order explain tries them.
var ExplainOrder = []string{ReasonAutoDialOff, ReasonOutsideWindow, ReasonHoliday, ReasonPlannedLater, ReasonFinal,
	ReasonNoNextCall, ReasonDNC, ReasonLeased, ReasonLockout, ReasonDailyLimit, ReasonNoAgent}

// Explain counts the order's leads that are not due now by the first rule each fails.
func (s *Service) Explain(ctx context.Context, caller identity.Caller, orderID int64) (Explanation, error) {
	o, err := s.visibleOrder(ctx, caller, orderID)
	if err != nil {
		return Explanation{}, err
	}
	rules, err := callresult.RulesOf(o)
	if err != nil {
		return Explanation{}, apperr.Wrap(apperr.Internal, err, "read the dialing rules of order %d", o.ID)
	}
	now := s.now().UTC().Truncate(time.Second)
	q := ExplainQuery{OrderID: o.ID, Now: now, AutoDial: o.AutoDialingEnabled, Zones: CallableZones(rules, now)}
	open := rules
	open.Holidays = nil
	q.Window = CallableZones(open, now)
	if q.LimitReached, err = s.limitReached(ctx, o, now); err != nil {
		return Explanation{}, err
	}
	list, err := s.agents.Eligible(ctx, o.AgentUserIDs, o.AgentGroupIDs)
	if err != nil {
		return Explanation{}, err
	}
	q.NoAgent = !AnyAvailable(PacerAgents(o, list))
	rows, err := s.store.Explain(ctx, q)
	if err != nil {
		return Explanation{}, err
	}
	return Explain(rules, now, o.ID, rows), nil
}

// AnyAvailable reports whether an agent can take a call now.
func AnyAvailable(list []pacer.Agent) bool {
	for _, a := range list {
		if a.State == agents.StateAvailable {
			return true
		}
	}
	return false
}

// Explain sums the groups of the explain statement into the answer: every reason in ExplainOrder,
// with when the first window opens for the leads outside theirs, and the earliest planned call of
// those planned later.
func Explain(rules callresult.Rules, now time.Time, orderID int64, rows []ExplainRow) Explanation {
	out := Explanation{OrderID: orderID, At: apitime.String(now), Reasons: make([]ReasonCount, len(ExplainOrder))}
	at := map[string]int{}
	for i, r := range ExplainOrder {
		out.Reasons[i] = ReasonCount{Reason: r}
		at[r] = i
	}
	var nextWindow, firstPlanned *time.Time
	for _, row := range rows {
		if row.Reason == ReasonDue {
			out.Due += row.Count
			continue
		}
		out.NotDue += row.Count
		i, ok := at[row.Reason]
		if !ok {
			continue
		}
		out.Reasons[i].Count += row.Count
		switch row.Reason {
		case ReasonOutsideWindow:
			if next, ok := rules.NextWorkingTime(now, rules.Zone(row.UTCOffset)); ok && (nextWindow == nil || next.Before(*nextWindow)) {
				nextWindow = &next
			}
		case ReasonPlannedLater:
			if row.FirstPlanned != nil && (firstPlanned == nil || row.FirstPlanned.Before(*firstPlanned)) {
				firstPlanned = row.FirstPlanned
			}
		}
	}
	out.Reasons[at[ReasonOutsideWindow]].NextWindowAt = apitime.StringOrNull(nextWindow)
	out.Reasons[at[ReasonPlannedLater]].EarliestPlannedAt = apitime.StringOrNull(firstPlanned)
	return out
}
