package lead

import (
	"context"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/phone"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/orders"
)

// Service holds the lead rules that need the outside (the order service and the catalogs) and
// writes leads. The sync routes of both versions and the worker share it.
type Service struct {
	store   *Store
	orders  *orders.Directory
	catalog *catalog.Store
	rules   Rules
	now     func() time.Time
}

// NewService wires the rules to the store, the order directory and the catalogs.
func NewService(store *Store, dir *orders.Directory, cat *catalog.Store, rules Rules) *Service {
	return &Service{store: store, orders: dir, catalog: cat, rules: rules, now: time.Now}
}

// Phones reads phone numbers as the lead rules do (the do-not-call list shares them).
func (s *Service) Phones() *phone.Normalizer { return s.rules.Phones }

// CheckBody applies the rules that need only the body (the shape check of the async routes and
// the first step of every other write).
func (s *Service) CheckBody(in Input, mode Mode) (Changes, error) {
	fe := apperr.FieldErrors{}
	ch := in.Check(mode, s.rules, s.now(), fe)
	return ch, fe.Err()
}

// Pending is a create whose body passed CheckBody.
type Pending struct {
	Changes Changes
	Meta    Meta
}

// Prepared is a pending create after the reference checks: either a lead ready to store, or Err,
// which is a validation error (the create can never succeed) or Unavailable (try again later).
type Prepared struct {
	Lead Lead
	Err  error
}

// Prepare checks the references of creates: each order with the order service (cached), the
// status category and custom values against the catalogs, read once for all. The error is for
// faults that concern every create (the database is unreachable).
func (s *Service) Prepare(ctx context.Context, pending []Pending) ([]Prepared, error) {
	chs := make([]Changes, len(pending))
	for i, p := range pending {
		chs[i] = p.Changes
	}
	refs, err := s.references(ctx, chs...)
	if err != nil {
		return nil, err
	}
	out := make([]Prepared, len(pending))
	for i, p := range pending {
		ch := p.Changes
		fe := apperr.FieldErrors{}
		ch.CheckReferences(ForCreate, refs, fe)
		_, oerr := s.orders.Check(ctx, ch.OrderID.V, ch.OrderCode.V)
		if oerr != nil {
			if e, ok := apperr.As(oerr); ok && len(e.Fields) > 0 {
				for f, r := range e.Fields {
					fe.Add(f, r)
				}
			} else if len(fe) == 0 {
				// Unavailable: only when the body has no other mistake, which would be the
				// caller's to fix whatever the order service says.
				out[i] = Prepared{Err: oerr}
				continue
			}
		}
		if err := fe.Err(); err != nil {
			out[i] = Prepared{Err: err}
			continue
		}
		out[i] = Prepared{Lead: New(ch, p.Meta)}
	}
	return out, nil
}

func (s *Service) references(ctx context.Context, chs ...Changes) (References, error) {
	statuses, err := s.catalog.Statuses(ctx)
	if err != nil {
		return References{}, err
	}
	fields, err := s.catalog.ByIDs(ctx, FieldIDs(chs...))
	if err != nil {
		return References{}, err
	}
	return References{Statuses: statuses, Fields: fields}, nil
}

// Create is a synchronous create (createLead, createLeadV1) of a body that passed CheckBody.
func (s *Service) Create(ctx context.Context, ch Changes, meta Meta) (int64, error) {
	prepared, err := s.Prepare(ctx, []Pending{{Changes: ch, Meta: meta}})
	if err != nil {
		return 0, err
	}
	if prepared[0].Err != nil {
		return 0, prepared[0].Err
	}
	l, err := s.store.Create(ctx, prepared[0].Lead)
	if err != nil {
		return 0, err
	}
	return l.ID, nil
}

// Update is a partial update (updateLead, updateLeadV1) of a body that passed CheckBody. The
// secondary-lead links stay as they were made at create, even when the phone changes: they record
// which leads repeated which when they came in.
func (s *Service) Update(ctx context.Context, id int64, ch Changes, by *int64) error {
	refs, err := s.references(ctx, ch)
	if err != nil {
		return err
	}
	fe := apperr.FieldErrors{}
	ch.CheckReferences(ForUpdate, refs, fe)
	if err := fe.Err(); err != nil {
		// An unknown lead is a 404 whatever the body says.
		if _, gerr := s.store.Get(ctx, id); apperr.KindOf(gerr) == apperr.NotFound {
			return gerr
		}
		return err
	}
	return s.store.Update(ctx, id, by, func(l *Lead) error {
		ch.ApplyTo(l)
		return nil
	})
}

// KnownOrder is id when the order service knows an order with it, else 0, also when it cannot be
// asked now: an event of no order reaches only the user whose request caused it, the cautious
// side for one that would otherwise go to the order's audience.
func (s *Service) KnownOrder(ctx context.Context, id int64) int64 {
	if id <= 0 {
		return 0
	}
	if _, err := s.orders.Get(ctx, id); err != nil {
		return 0
	}
	return id
}

// Get reads a lead (the caller's access is CheckVisible's).
func (s *Service) Get(ctx context.Context, id int64) (Lead, error) { return s.store.Get(ctx, id) }

// List is a page of the leads f selects, with their number.
func (s *Service) List(ctx context.Context, f Filter, page listquery.Page) ([]Lead, int, error) {
	return s.store.List(ctx, f, page)
}

// Briefs are up to limit leads of an order (0: any) as the internal route lists them.
func (s *Service) Briefs(ctx context.Context, orderID int64, limit int) ([]Brief, error) {
	return s.store.Briefs(ctx, orderID, limit)
}
