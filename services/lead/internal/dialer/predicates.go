package dialer

import "strings"

// A lead of the order is due now when it passes every predicate of duePredicates. The lease's
// statement (leaseDue) requires them all; explain (explainDue) names the first one each lead
// fails. Both statements are built from this one list, so they cannot drift apart. Every
// predicate reads the lead as l and the same parameters: $1 the order, $2 now, $3 the offsets
// whose calling window is open now and $4 whether leads of unknown offset are callable
// (CallableZones).
type predicate struct {
	// Reason is explain's name for a lead that fails it.
	Reason string
	SQL    string
}

// Explain's reasons (services/lead/README.md, "Why nothing is due"), in the order explain tries
// them. The order-level ones (autoDialOff, dailyLimit, noAgent) are decided once for the order.
const (
	ReasonAutoDialOff   = "autoDialOff"
	ReasonOutsideWindow = "outsideWindow"
	ReasonHoliday       = "holiday"
	ReasonPlannedLater  = "plannedLater"
	ReasonFinal         = "finalStatus"
	ReasonNoNextCall    = "noNextCall"
	ReasonDNC           = "doNotCall"
	ReasonLeased        = "leased"
	ReasonLockout       = "dropLockout"
	ReasonDailyLimit    = "dailyLimit"
	ReasonNoAgent       = "noAgent"
)

// inZone is the lead's zone among those open now: the calling window and the holidays both.
const inZone = `(l.utc_offset = ANY($3::int[]) OR (l.utc_offset IS NULL AND $4))`

// duePredicates are the lead-level rules of the queue, in explain's order. lead_dialable and the
// "no next call" rule are the predicate of the leads_dial_queue index, written as the index
// writes them so that the planner uses it.
var duePredicates = []predicate{
	{ReasonHoliday, inZone},
	{ReasonPlannedLater, `(l.planning_call_at IS NULL OR l.planning_call_at <= $2)`},
	{ReasonFinal, `lead_dialable(l.status_id)`},
	{ReasonNoNextCall, `(l.planning_call_at IS NOT NULL OR l.last_call_ended_at IS NULL)`},
	{ReasonDNC, `NOT EXISTS (SELECT 1 FROM dnc_entries d WHERE d.phone = l.phone
          AND coalesce(d.order_id, l.order_id) = l.order_id AND (d.expires_at IS NULL OR d.expires_at > $2))`},
	{ReasonLeased, `(l.leased_until IS NULL OR l.leased_until <= $2)`},
	{ReasonLockout, `(l.lockout_until IS NULL OR l.lockout_until <= $2)`},
}

// dueWhere is every predicate joined with AND.
func dueWhere() string {
	parts := make([]string, len(duePredicates))
	for i, p := range duePredicates {
		parts[i] = p.SQL
	}
	return strings.Join(parts, "\n      AND ")
}
