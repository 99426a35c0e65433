package dnc

import (
	"context"
	"strconv"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/phone"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/orders"

	"github.com/gin-gonic/gin"
)

// Handler serves the do-not-call routes. Who may call them is the gateway's policy (staff and
// clients); which entries a caller manages is decided here: staff every entry, a client those of
// its own orders (pkg/visibleorders), never the every-order entries.
type Handler struct {
	store  *Store
	orders *orders.Directory
	phones *phone.Normalizer
	now    func() time.Time
}

// NewHandler serves store; orders are checked and scoped through dir, phones read with phones,
// expiry judged at now().
func NewHandler(store *Store, dir *orders.Directory, phones *phone.Normalizer, now func() time.Time) *Handler {
	return &Handler{store: store, orders: dir, phones: phones, now: now}
}

// Routes registers the routes on r, which must already require the internal token; idempotent
// guards the create.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/dnc/create", idempotent, web.Handle(h.create))
	r.POST("/v2/dnc/delete", web.Handle(h.delete))
	r.GET("/v2/dnc", web.Handle(h.list))
	r.GET("/v2/dnc/check", web.Handle(h.check))
}

// body decodes and checks a create or delete and the caller's right to its order.
func (h *Handler) body(c *gin.Context, mode Mode) (Change, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return Change{}, err
	}
	fe := apperr.FieldErrors{}
	ch := in.Check(mode, h.phones, h.now(), fe)
	if err := fe.Err(); err != nil {
		return Change{}, err
	}
	ctx := c.Request.Context()
	if ch.OrderID == nil {
		// Staff see every order whatever is cached: no question to the order service.
		scope, err := h.orders.ScopeFor(ctx, web.CallerOf(c))
		if err != nil {
			return Change{}, err
		}
		if !scope.All {
			return Change{}, apperr.New(apperr.Forbidden, "only staff manage the every-order do-not-call list: name an orderId of your own")
		}
		return ch, nil
	}
	return ch, h.checkOrder(ctx, web.CallerOf(c), *ch.OrderID)
}

// checkOrder refuses an order that does not exist or lies outside caller's scope, with the same
// answer.
func (h *Handler) checkOrder(ctx context.Context, caller web.Caller, id int64) error {
	_, ok, err := h.orders.CheckScope(ctx, caller, id)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.Field("orderId", "no order has id "+strconv.FormatInt(id, 10))
	}
	_, err = h.orders.Get(ctx, id)
	if apperr.KindOf(err) == apperr.NotFound {
		return apperr.Field("orderId", "no order has id "+strconv.FormatInt(id, 10))
	}
	return err
}

// create puts phones on the list; sending a listed phone again replaces its reason and expiry.
func (h *Handler) create(c *gin.Context) (any, error) {
	ch, err := h.body(c, ForCreate)
	if err != nil {
		return nil, err
	}
	return h.store.Add(c.Request.Context(), ch, web.CallerOf(c).Ref())
}

// delete takes phones off the list of exactly the named order (none: the every-order entries).
func (h *Handler) delete(c *gin.Context) (any, error) {
	ch, err := h.body(c, ForDelete)
	if err != nil {
		return nil, err
	}
	n, err := h.store.Remove(c.Request.Context(), ch)
	if err != nil {
		return nil, err
	}
	return gin.H{"deleted": n}, nil
}

// query reads the phone and orderId parameters of the list and the check.
func (h *Handler) query(c *gin.Context, fe apperr.FieldErrors) (phone string, orderID *int64) {
	if raw, ok := c.GetQuery("phone"); ok {
		p, valid := h.phones.Normalize(raw)
		if !valid {
			fe.Add("phone", rulePhone)
		}
		phone = p
	}
	if raw, ok := c.GetQuery("orderId"); ok {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			fe.Add("orderId", "must be an integer > 0")
		} else {
			orderID = &n
		}
	}
	return phone, orderID
}

// list is a page of entries, newest first, filtered by phone and order; a client sees the
// entries of its own orders only.
func (h *Handler) list(c *gin.Context) (any, error) {
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(c.Request.URL.Query(), fe)
	phone, orderID := h.query(c, fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	scope, err := h.orders.FreshScope(ctx, web.CallerOf(c))
	if err != nil {
		return nil, err
	}
	f := Filter{Phone: phone}
	if orderID != nil {
		f.OrderIDs = []int64{*orderID}
	}
	if !scope.All {
		var none bool
		if f.OrderIDs, none = scope.Narrow(f.OrderIDs); none {
			return listquery.NewResult([]View{}, page, 0), nil
		}
		f.Restricted = true
	}
	entries, total, err := h.store.List(ctx, f, page)
	if err != nil {
		return nil, err
	}
	now := h.now()
	return listquery.ResultOf(entries, func(e Entry) View { return ViewOf(e, now) }, page, total), nil
}

// CheckResult is the data of the check.
type CheckResult struct {
	Phone   string `json:"phone"`
	OrderID *int64 `json:"orderId"`
	// DoNotCall: an active entry stops calls to the phone in the order (or, without an order, in
	// every order).
	DoNotCall bool `json:"doNotCall"`
}

// check tells whether a phone may be called in an order.
func (h *Handler) check(c *gin.Context) (any, error) {
	fe := apperr.FieldErrors{}
	phone, orderID := h.query(c, fe)
	if _, sent := c.GetQuery("phone"); !sent {
		fe.Add("phone", "is required")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	scope, err := h.orders.ScopeFor(ctx, web.CallerOf(c))
	if err != nil {
		return nil, err
	}
	// The every-order entries are staff's: a client's list hides them, so its check must not
	// reveal them either; it checks its own order's entries only.
	everyOrder := scope.All
	if orderID == nil && !everyOrder {
		return nil, apperr.Field("orderId", "is required: a client checks the entries of its own orders (the every-order list is staff's)")
	}
	if orderID != nil {
		if err := h.checkOrder(ctx, web.CallerOf(c), *orderID); err != nil {
			return nil, err
		}
	}
	listed, err := h.store.Listed(ctx, phone, orderID, everyOrder, h.now())
	if err != nil {
		return nil, err
	}
	return CheckResult{Phone: phone, OrderID: orderID, DoNotCall: listed}, nil
}
