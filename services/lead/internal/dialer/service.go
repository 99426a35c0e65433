package dialer

import (
	"context"
	"slices"
	"strconv"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/services/lead/internal/agents"
	"ccplatform/services/lead/internal/callresult"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/orders"

	"github.com/google/uuid"
)

// Service checks a lease against its order and the caller, and runs it.
type Service struct {
	store    *Store
	orders   *orders.Directory
	agents   *agents.Directory
	statuses *catalog.Store
	now      func() time.Time
	metrics  *Metrics
}

// WithMetrics records every pacing decision in m.
func (s *Service) WithMetrics(m *Metrics) *Service {
	s.metrics = m
	return s
}

// NewService leases through store, reads orders (with their rules and scopes) through dir, the
// orders' agents and their states through staff, and the status categories from statuses; now is
// the queue's clock (time.Now but in tests).
func NewService(store *Store, dir *orders.Directory, staff *agents.Directory, statuses *catalog.Store, now func() time.Time) *Service {
	return &Service{store: store, orders: dir, agents: staff, statuses: statuses, now: now}
}

// Lease is what a lease call answers: the lease (empty when nothing was due) and its leads.
type Lease struct {
	ID        *string      `json:"leaseId"`
	ExpiresAt *string      `json:"leaseExpiresAt"`
	List      []LeasedView `json:"list"`
	// DialLevel and RetryAfterMs answer a paced lease (null for an explicit limit): the pacer's
	// level and when to ask again.
	DialLevel    *float64 `json:"dialLevel"`
	RetryAfterMs *int64   `json:"retryAfterMs"`
}

// LeasedView is a leased lead on the wire.
type LeasedView struct {
	LeaseID              string            `json:"leaseId"`
	LeaseExpiresAt       string            `json:"leaseExpiresAt"`
	ID                   int64             `json:"id"`
	Phone                string            `json:"phone"`
	Name                 *string           `json:"name"`
	UTCOffset            *int64            `json:"utcOffset"`
	Priority             int64             `json:"priority"`
	Attempts             int64             `json:"attempts"`
	StatusID             int64             `json:"statusId"`
	PlanningCallDateTime *string           `json:"planningCallDateTime"`
	CustomValues         lead.CustomValues `json:"customValues"`
}

// orderOf reads the order a caller names: outside the caller's scope or unknown, it is the field
// error of a missing order (as a lead create answers).
func (s *Service) orderOf(ctx context.Context, caller identity.Caller, id int64) (orders.Order, error) {
	return s.orderIn(ctx, caller, id, apperr.Field("orderId", "no order has id "+strconv.FormatInt(id, 10)))
}

// orderIn reads order id if caller may see it; outside the caller's scope or unknown, it is
// missing.
func (s *Service) orderIn(ctx context.Context, caller identity.Caller, id int64, missing error) (orders.Order, error) {
	_, ok, err := s.orders.CheckScope(ctx, caller, id)
	if err != nil {
		return orders.Order{}, err
	}
	if !ok {
		return orders.Order{}, missing
	}
	o, err := s.orders.Get(ctx, id)
	if apperr.KindOf(err) == apperr.NotFound {
		return orders.Order{}, missing
	}
	return o, err
}

// Lease hands the caller the due leads of r's order (services/lead/README.md, "The dialing queue").
func (s *Service) Lease(ctx context.Context, caller identity.Caller, r LeaseRequest) (Lease, error) {
	empty := Lease{List: []LeasedView{}}
	o, err := s.orderOf(ctx, caller, r.OrderID)
	if err != nil {
		return Lease{}, err
	}
	if r.Paced {
		// Nothing to pace: ask again after the pacer's usual interval.
		level, retry := 0.0, int64(time.Second/time.Millisecond)
		empty.DialLevel, empty.RetryAfterMs = &level, &retry
	}
	if !o.AutoDialingEnabled {
		return empty, nil
	}
	rules, err := callresult.RulesOf(o)
	if err != nil {
		return Lease{}, apperr.Wrap(apperr.Internal, err, "read the dialing rules of order %d", o.ID)
	}
	now := s.now().UTC().Truncate(time.Second)
	zones := CallableZones(rules, now)
	if zones.None() {
		return empty, nil
	}
	if reached, err := s.limitReached(ctx, o, now); err != nil || reached {
		return empty, err
	}
	id := uuid.NewString()
	until := now.Add(r.Lease)
	q := LeaseQuery{OrderID: o.ID, Now: now, Zones: zones, Limit: r.Limit, LeaseID: id, Until: until,
		DialerID: r.DialerID, By: caller.Ref()}
	if r.Paced {
		in, err := s.paceInputs(ctx, o, now)
		if err != nil {
			return Lease{}, err
		}
		q.Pace = func(inFlight []time.Time) int {
			in.inFlight = inFlight
			d := s.pace(o, now, in)
			retry := d.RetryAfter.Milliseconds()
			empty.DialLevel, empty.RetryAfterMs = &d.DialLevel, &retry
			return d.Dial
		}
	}
	leads, err := s.store.Lease(ctx, q)
	if err != nil || len(leads) == 0 {
		return empty, err
	}
	expires := apitime.String(until)
	out := Lease{ID: &id, ExpiresAt: &expires, List: make([]LeasedView, len(leads)),
		DialLevel: empty.DialLevel, RetryAfterMs: empty.RetryAfterMs}
	for i, l := range leads {
		out.List[i] = LeasedView{LeaseID: id, LeaseExpiresAt: expires, ID: l.ID, Phone: l.Phone, Name: l.Name,
			UTCOffset: l.UTCOffset, Priority: l.Priority, Attempts: l.Attempts, StatusID: l.StatusID,
			CustomValues: l.CustomValues, PlanningCallDateTime: apitime.StringOrNull(l.PlanningCallAt)}
		if out.List[i].CustomValues == nil {
			out.List[i].CustomValues = lead.CustomValues{}
		}
	}
	return out, nil
}

// limitReached reports whether order o has qualified its qualifiedLeadsPerDayLimit today.
func (s *Service) limitReached(ctx context.Context, o orders.Order, now time.Time) (bool, error) {
	if o.QualifiedLeadsPerDayLimit == nil {
		return false, nil
	}
	success, err := s.successStatuses(ctx)
	if err != nil {
		return false, err
	}
	from, to := Day(now)
	n, err := s.store.QualifiedOn(ctx, o.ID, success, from, to)
	if err != nil {
		return false, err
	}
	return LimitReached(o.QualifiedLeadsPerDayLimit, n), nil
}

// successStatuses are the ids of the statuses that count as qualified (category success).
func (s *Service) successStatuses(ctx context.Context) ([]int64, error) {
	all, err := s.statuses.Statuses(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for id, st := range all {
		if st.Category == catalog.CategorySuccess {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// checkLease refuses a lease that does not exist or whose order the caller may not see, with the
// same answer for both.
func (s *Service) checkLease(ctx context.Context, caller identity.Caller, id string) error {
	order, err := s.store.LeaseOrder(ctx, id)
	if err != nil {
		return err
	}
	_, ok, err := s.orders.CheckScope(ctx, caller, order)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.NotFoundf("lease %s does not exist", id)
	}
	return nil
}

// Released is what a release answers.
type Released struct {
	LeaseID string  `json:"leaseId"`
	LeadIDs []int64 `json:"leadIds"`
}

// Release gives back the leads of r's lease that it still holds (all, or those named).
func (s *Service) Release(ctx context.Context, caller identity.Caller, r ReleaseRequest) (Released, error) {
	if err := s.checkLease(ctx, caller, r.LeaseID); err != nil {
		return Released{}, err
	}
	ids, err := s.store.Release(ctx, r.LeaseID, r.LeadIDs)
	if err != nil {
		return Released{}, err
	}
	return Released{LeaseID: r.LeaseID, LeadIDs: ids}, nil
}

// Extended is what an extend answers.
type Extended struct {
	LeaseID        string  `json:"leaseId"`
	LeaseExpiresAt string  `json:"leaseExpiresAt"`
	LeadIDs        []int64 `json:"leadIds"`
}

// Extend holds the leads r's lease still holds for r.Lease from now. Leads whose lease has expired
// are not taken back (another dialer may have them by now): they are missing from LeadIDs.
func (s *Service) Extend(ctx context.Context, caller identity.Caller, r ExtendRequest) (Extended, error) {
	if err := s.checkLease(ctx, caller, r.LeaseID); err != nil {
		return Extended{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	until := now.Add(r.Lease)
	ids, err := s.store.Extend(ctx, r.LeaseID, now, until)
	if err != nil {
		return Extended{}, err
	}
	return Extended{LeaseID: r.LeaseID, LeaseExpiresAt: apitime.String(until), LeadIDs: ids}, nil
}
