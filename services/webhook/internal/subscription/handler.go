package subscription

import (
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"
	"ccplatform/services/webhook/internal/signature"
	"ccplatform/services/webhook/internal/urlguard"

	"github.com/gin-gonic/gin"
)

// SecretOverlap is how long a rotated-out secret keeps signing beside the new one, so receivers
// can switch without losing a delivery.
const SecretOverlap = 24 * time.Hour

// ReplayMessage is the message of a create replayed for its Idempotency-Key: the answer without
// the secret, which is shown once.
const ReplayMessage = "the secret was shown once, in the first answer, and cannot be shown again: rotate it (rotate-secret) if it was lost"

// Handler serves the subscription routes.
type Handler struct {
	store  *Store
	guard  urlguard.Policy
	limits Limits
	now    func() time.Time
}

// NewHandler serves store, checking URLs with guard and counts against limits; now is the clock.
func NewHandler(store *Store, guard urlguard.Policy, limits Limits, now func() time.Time) *Handler {
	return &Handler{store: store, guard: guard, limits: limits, now: now}
}

// Routes registers the routes on r (which must already require the internal token).
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/webhook/create", idempotent, web.Handle(h.create))
	r.POST("/v2/webhook/update/:id", web.Handle(h.update))
	r.POST("/v2/webhook/delete/:id", web.Handle(h.delete))
	r.POST("/v2/webhook/rotate-secret/:id", web.Handle(h.rotate))
	r.GET("/v2/webhook", web.Handle(h.list))
	r.GET("/v2/webhook/detail/:id", web.Handle(h.detail))
}

// ViewerOf is whose subscriptions the caller sees; a request without a user is refused, since a
// subscription always belongs to someone.
func ViewerOf(c *gin.Context) (Viewer, Owner, error) {
	caller := identity.Of(c)
	if caller.UserID <= 0 {
		return Viewer{}, Owner{}, apperr.New(apperr.Unauthorized, "%s: missing, the caller is unknown", identity.HeaderUserID)
	}
	g := access.Group(caller.AccessGroup)
	return Viewer{UserID: caller.UserID, All: SeesAll(g)}, Owner{UserID: caller.UserID, Group: caller.AccessGroup, Scopes: caller.Scopes}, nil
}

// Target is the caller's view and the subscription id of the path.
func Target(c *gin.Context) (Viewer, int64, error) {
	v, _, err := ViewerOf(c)
	if err != nil {
		return Viewer{}, 0, err
	}
	id, err := web.PathID(c, "id")
	if err != nil {
		return Viewer{}, 0, err
	}
	return v, id, nil
}

func (h *Handler) create(c *gin.Context) (any, error) {
	_, owner, err := ViewerOf(c)
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	f, err := CheckCreate(c.Request.Context(), h.guard, in)
	if err != nil {
		return nil, err
	}
	if err := CheckEventScopes(f.Events, owner.Scopes); err != nil {
		return nil, err
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return nil, err
	}
	s, err := h.store.Create(c.Request.Context(), owner, f, secret, h.now(), h.limits)
	if err != nil {
		return nil, err
	}
	// A retry with the same Idempotency-Key answers the subscription, never its secret.
	idempotency.ReplayAs(c, ReplayMessage, ViewOf(s))
	return WithSecret(s), nil
}

func (h *Handler) update(c *gin.Context) (any, error) {
	v, id, err := Target(c)
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	cur, err := h.store.Get(c.Request.Context(), v, id)
	if err != nil {
		return nil, err
	}
	f, err := CheckUpdate(c.Request.Context(), h.guard, in, cur.Fields())
	if err != nil {
		return nil, err
	}
	// The subscription takes the updating key's scopes, so they must cover every event it keeps.
	scopes := identity.Of(c).Scopes
	if err := CheckEventScopes(f.Events, scopes); err != nil {
		return nil, err
	}
	s, err := h.store.Update(c.Request.Context(), v, cur, f, scopes, h.now(), h.limits)
	if err != nil {
		return nil, err
	}
	return ViewOf(s), nil
}

func (h *Handler) delete(c *gin.Context) (any, error) {
	v, id, err := Target(c)
	if err != nil {
		return nil, err
	}
	if err := h.store.Delete(c.Request.Context(), v, id); err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

func (h *Handler) rotate(c *gin.Context) (any, error) {
	v, id, err := Target(c)
	if err != nil {
		return nil, err
	}
	secret, err := signature.NewSecret()
	if err != nil {
		return nil, err
	}
	now := h.now()
	s, err := h.store.Rotate(c.Request.Context(), v, id, secret, now, now.Add(SecretOverlap))
	if err != nil {
		return nil, err
	}
	return WithSecret(s), nil
}

func (h *Handler) list(c *gin.Context) (any, error) {
	v, _, err := ViewerOf(c)
	if err != nil {
		return nil, err
	}
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(c.Request.URL.Query(), fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	subs, total, err := h.store.List(c.Request.Context(), v, page.Offset, page.Limit)
	if err != nil {
		return nil, err
	}
	return listquery.ResultOf(subs, ViewOf, page, total), nil
}

func (h *Handler) detail(c *gin.Context) (any, error) {
	v, id, err := Target(c)
	if err != nil {
		return nil, err
	}
	s, err := h.store.Get(c.Request.Context(), v, id)
	if err != nil {
		return nil, err
	}
	return ViewOf(s), nil
}
