package dialer

import (
	"context"
	"fmt"
	"math"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/services/lead/internal/agents"

	"github.com/jmoiron/sqlx"
)

// LiveWindow is the recent past of the live figures' answer and abandon rates.
const LiveWindow = 15 * time.Minute

// MaxLiveOrders bounds the orders one live question names.
const MaxLiveOrders = 1000

// LiveInput is the body of POST /internal/dialer/live: the orders whose dialing figures are asked.
type LiveInput struct {
	OrderIDs []int64 `json:"orderIds"`
}

// Check names the broken fields of in.
func (in LiveInput) Check(fe apperr.FieldErrors) []int64 {
	if len(in.OrderIDs) > MaxLiveOrders {
		fe.Addf("orderIds", "must name at most %d orders", MaxLiveOrders)
	}
	for _, id := range in.OrderIDs {
		if id <= 0 {
			fe.Add("orderIds", "must be integers > 0")
			break
		}
	}
	return in.OrderIDs
}

// Live is one order's dialing now, for the report service's live stream: its agents who are not
// offline, the calls in flight and the dial level as a paced lease would decide them now, and the
// answer and abandon rates over the last LiveWindow and over the order's abandon window
// (fractions, 0 when nothing counts).
type Live struct {
	OrderID           int64       `json:"orderId"`
	Agents            []LiveAgent `json:"agents"`
	CallsInFlight     int         `json:"callsInFlight"`
	DialLevel         float64     `json:"dialLevel"`
	AnswerRate15m     float64     `json:"answerRate15m"`
	AbandonRate15m    float64     `json:"abandonRate15m"`
	AbandonWindow     string      `json:"abandonWindow"`
	AbandonRateWindow float64     `json:"abandonRateWindow"`
	MaxAbandonRate    float64     `json:"maxAbandonRate"`
}

// LiveAgent is one of an order's agents in its current state (OrderID: the order the state
// names, if any; it may be another order's call).
type LiveAgent struct {
	UserID      int64     `json:"userId"`
	State       string    `json:"state"`
	Since       time.Time `json:"since"`
	PauseReason *string   `json:"pauseReason"`
	OrderID     *int64    `json:"orderId"`
}

// liveAgents are the agents of list who are not offline, in the order the user service gave them.
func liveAgents(list []agents.Agent) []LiveAgent {
	out := []LiveAgent{}
	for _, a := range list {
		if a.State == agents.StateOffline || a.Since == nil {
			continue
		}
		out = append(out, LiveAgent{UserID: a.UserID, State: a.State, Since: a.Since.UTC(), PauseReason: a.PauseReason, OrderID: a.OrderID})
	}
	return out
}

// Live reads the dialing figures of the orders named; an order that does not exist is left out.
// It answers the report service, which decides who sees which order.
func (s *Service) Live(ctx context.Context, ids []int64) ([]Live, error) {
	now := s.now().UTC().Truncate(time.Second)
	out := make([]Live, 0, len(ids))
	for _, id := range ids {
		o, err := s.orders.Get(ctx, id)
		if apperr.KindOf(err) == apperr.NotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		d, in, err := s.decide(ctx, o, now)
		if err != nil {
			return nil, err
		}
		recent, err := s.store.Recent(ctx, id, now, LiveWindow)
		if err != nil {
			return nil, err
		}
		l := Live{OrderID: id, Agents: liveAgents(in.agents), CallsInFlight: len(in.inFlight), DialLevel: d.DialLevel,
			AnswerRate15m: fraction(recent.Live, recent.Dialed), AbandonRate15m: fraction(recent.Abandoned, recent.Live),
			AbandonWindow: AbandonWindowOf(o), MaxAbandonRate: o.MaxAbandonRatePercent / 100}
		if l.MaxAbandonRate <= 0 {
			l.MaxAbandonRate = defaultMaxAbandonRatePercent / 100
		}
		if l.AbandonWindow == "24h" {
			l.AbandonRateWindow = fraction(in.stats.Abandoned24h, in.stats.Live24h)
		} else {
			l.AbandonRateWindow = fraction(in.stats.Abandoned30d, in.stats.Live30d)
		}
		out = append(out, l)
	}
	return out, nil
}

// fraction is n/of rounded to 4 places, 0 when of is (the reports' rule for rates).
func fraction(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*10000) / 10000
}

// RecentCalls are an order's outgoing calls ended over a recent window.
type RecentCalls struct {
	Dialed    int64 `db:"dialed"`
	Live      int64 `db:"live"`
	Abandoned int64 `db:"abandoned"`
}

// Recent sums the order's minute buckets of the window before now (the current minute included).
func (s *Store) Recent(ctx context.Context, order int64, now time.Time, window time.Duration) (RecentCalls, error) {
	const q = `
SELECT coalesce(sum(dialed), 0) AS dialed, coalesce(sum(live), 0) AS live, coalesce(sum(abandoned), 0) AS abandoned
FROM dial_stats_minute WHERE order_id = $1 AND bucket > $2::timestamptz - $3::interval AND bucket <= $2`
	var r RecentCalls
	if err := sqlx.GetContext(ctx, s.conn, &r, q, order, now, fmt.Sprintf("%d seconds", int(window/time.Second))); err != nil {
		return r, fmt.Errorf("read the recent calls of order %d: %w", order, err)
	}
	return r, nil
}
