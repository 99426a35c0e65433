package apikey

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Owners tells the handler who a key would belong to: the user's group decides which scopes the
// key may carry.
type Owners interface {
	// Owner is the access group and activity of user id; an unknown user is NotFound.
	Owner(ctx context.Context, id int64) (group access.Group, active bool, err error)
}

// Handler serves key verification to the gateway and the self-service key routes to integrators.
type Handler struct {
	store     *Store
	owners    Owners
	maxActive int
	now       func() time.Time
}

// NewHandler is a handler over store; owners answers who a new key's user is; a user may have at
// most maxActive active keys made through the API (0: no cap).
func NewHandler(store *Store, owners Owners, maxActive int) *Handler {
	return &Handler{store: store, owners: owners, maxActive: maxActive, now: time.Now}
}

// Routes registers the key check the gateway calls and the self-service key routes (through the
// gateway, which allows them only to keys without scopes: a narrowed key cannot mint keys) on r,
// which must already demand the internal token; idempotent guards the create route.
func (h *Handler) Routes(r gin.IRoutes, idempotent gin.HandlerFunc) {
	r.POST("/internal/auth/verify", web.Handle(h.verify))
	r.POST("/v2/api-key/create", idempotent, web.Handle(h.create))
	r.GET("/v2/api-key", web.Handle(h.list))
	r.POST("/v2/api-key/revoke/:id", web.Handle(h.revoke))
}

type verifyRequest struct {
	Key string `json:"key"`
}

// verify answers who a key speaks for, or 401 when it speaks for no one (an empty key included).
func (h *Handler) verify(c *gin.Context) (any, error) {
	var req verifyRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	return h.store.Verify(c.Request.Context(), req.Key)
}

// maxNameLen bounds a key's label.
const maxNameLen = 100

// CreateRequest is the body of POST /v2/api-key/create.
type CreateRequest struct {
	Name      optional.Value[string]    `json:"name"`
	Scopes    optional.Value[[]string]  `json:"scopes"`
	ExpiresAt optional.Value[time.Time] `json:"expiresAt"`
	UserID    optional.Value[int64]     `json:"userId"`
}

// View is a key as the API shows it: never the secret, only its prefix (and the key itself once,
// in the answer of its creation).
type View struct {
	ID         int64    `json:"id"`
	Key        string   `json:"key,omitempty"`
	Prefix     string   `json:"prefix"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	ExpiresAt  *string  `json:"expiresAt"`
	UserID     int64    `json:"userId"`
	CreatedAt  string   `json:"createdAt"`
	LastUsedAt *string  `json:"lastUsedAt"`
	RevokedAt  *string  `json:"revokedAt"`
}

// ViewOf is k as the API shows it.
func ViewOf(k Key) View {
	return View{ID: k.ID, Prefix: k.Prefix + "...", Name: k.Name, Scopes: listquery.List([]string(k.Scopes)), ExpiresAt: apitime.StringOrNull(k.ExpiresAt), UserID: k.UserID,
		CreatedAt: apitime.String(k.CreatedAt), LastUsedAt: apitime.StringOrNull(k.LastUsedAt), RevokedAt: apitime.StringOrNull(k.RevokedAt)}
}

// ReplayMessage is the message of a create replayed for its Idempotency-Key: the answer without
// the key, which is shown once.
const ReplayMessage = "the key was shown once, in the first answer, and cannot be shown again: revoke it and create another if it was lost"

// create makes a key for the caller (admin: for any active user with userId) with scopes within
// that user's rights.
func (h *Handler) create(c *gin.Context) (any, error) {
	var req CreateRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	fe := apperr.FieldErrors{}
	owner := caller.UserID
	if req.UserID.Present() && req.UserID.V != caller.UserID {
		if access.Group(caller.AccessGroup) != access.Admin {
			return nil, apperr.New(apperr.Forbidden, "userId: only an admin may create keys for another user")
		}
		owner = req.UserID.V
	}
	n := New{}
	if req.Name.Present() {
		n.Name = strings.TrimSpace(req.Name.V)
		if utf8.RuneCountInString(n.Name) > maxNameLen {
			fe.Addf("name", "must be at most %d characters", maxNameLen)
		}
	}
	if req.ExpiresAt.Present() {
		switch {
		case !apitime.InRange(req.ExpiresAt.V):
			fe.Add("expiresAt", apitime.RangeRule)
		case !req.ExpiresAt.V.After(h.now()):
			fe.Add("expiresAt", "must be in the future")
		}
		t := req.ExpiresAt.V.UTC()
		n.ExpiresAt = &t
	}
	group, active, err := h.owners.Owner(c.Request.Context(), owner)
	switch {
	case apperr.KindOf(err) == apperr.NotFound || (err == nil && !active):
		fe.Add("userId", "must be an active user")
	case err != nil:
		return nil, err
	}
	if req.Scopes.Present() && err == nil {
		if n.Scopes, err = CheckScopes(req.Scopes.V, group); err != nil {
			fe.Add("scopes", err.Error())
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	k, plain, err := h.store.CreateWithin(c.Request.Context(), owner, n, h.maxActive)
	if err != nil {
		return nil, err
	}
	// A retry with the same Idempotency-Key answers the key's id and the rest, never the key.
	idempotency.ReplayAs(c, ReplayMessage, ViewOf(k))
	v := ViewOf(k)
	v.Key = plain
	return v, nil
}

// list is the caller's keys; an admin may name another user with ?userId=.
func (h *Handler) list(c *gin.Context) (any, error) {
	caller := identity.Of(c)
	q := c.Request.URL.Query()
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(q, fe)
	owner := caller.UserID
	if raw := q.Get("userId"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		switch {
		case err != nil || id <= 0:
			fe.Add("userId", "must be an integer > 0")
		case id != caller.UserID && access.Group(caller.AccessGroup) != access.Admin:
			return nil, apperr.New(apperr.Forbidden, "userId: only an admin may list another user's keys")
		default:
			owner = id
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	keys, err := h.store.List(c.Request.Context(), []int64{owner})
	if err != nil {
		return nil, err
	}
	views := make([]View, 0, len(keys))
	for _, k := range keys {
		views = append(views, ViewOf(k))
	}
	from := min(page.Offset, len(views))
	to := min(from+page.Limit, len(views))
	return listquery.NewResult(views[from:to], page, len(views)), nil
}

// revoke stops one of the caller's keys (an admin: anyone's); another's key is a 404.
func (h *Handler) revoke(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	caller := identity.Of(c)
	owner := caller.UserID
	if access.Group(caller.AccessGroup) == access.Admin {
		owner = 0
	}
	return nil, h.store.RevokeOwned(c.Request.Context(), id, owner)
}
