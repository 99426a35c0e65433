package user

import (
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"
	"ccplatform/services/user/internal/idcheck"

	"github.com/gin-gonic/gin"
)

// Handler serves the user routes.
type Handler struct {
	store             *Store
	avatarPlaceholder string
}

// NewHandler is a handler over store; avatarPlaceholder is the link shown for users without an
// avatar.
func NewHandler(store *Store, avatarPlaceholder string) *Handler {
	return &Handler{store: store, avatarPlaceholder: avatarPlaceholder}
}

// Routes registers listUsers and getUser and the routes other services call on r, which must
// already demand the internal token. The list answers at /v2/user too, the path the contract's
// sample call uses.
func (h *Handler) Routes(r gin.IRoutes) {
	r.GET("/v2/user/list", web.Handle(h.list))
	r.GET("/v2/user", web.Handle(h.list))
	r.GET("/v2/user/detail/:userId", web.Handle(h.detail))
	r.POST("/internal/users/check", idcheck.Handle(h.store.Missing))
	r.POST("/internal/users/recipients", web.Handle(h.recipients))
}

// SeesOnlySelf reports whether a caller of group g sees only their own user: partners and
// agents do not browse the staff (gateway/README.md, "Who may do what").
func SeesOnlySelf(g AccessGroup) bool { return g == GroupClient || g == GroupCallCenter }

// list is listUsers (GET /v2/user/list/).
func (h *Handler) list(c *gin.Context) (any, error) {
	f, page, err := ParseListQuery(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	if caller := identity.Of(c); SeesOnlySelf(AccessGroup(caller.AccessGroup)) {
		f.OnlyID = &caller.UserID
	}
	ctx := c.Request.Context()
	users, err := h.store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	total, err := h.store.Count(ctx, f)
	if err != nil {
		return nil, err
	}
	return listquery.NewResult(h.views(users), page, total), nil
}

// detail is getUser (GET /v2/user/detail/{userId}/).
func (h *Handler) detail(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "userId")
	if err != nil {
		return nil, err
	}
	if caller := identity.Of(c); SeesOnlySelf(AccessGroup(caller.AccessGroup)) && id != caller.UserID {
		// Exactly as if the user did not exist: nobody learns which ids are taken.
		return nil, notFound(id)
	}
	u, err := h.store.Get(c.Request.Context(), id)
	if err != nil {
		return nil, err
	}
	return ViewOf(u, h.avatarPlaceholder), nil
}

type recipientsResponse struct {
	List []View `json:"list"`
}

// recipients resolves who a notification goes to, with each user's notification settings: one user
// (whatever their state, so the caller can tell an inactive user from an unknown one), or every
// active user, or every active user of an access group.
func (h *Handler) recipients(c *gin.Context) (any, error) {
	var req RecipientsRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	target, err := req.Check()
	if err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	if target.UserID > 0 {
		u, err := h.store.Get(ctx, target.UserID)
		if err != nil {
			return nil, err
		}
		return recipientsResponse{List: []View{ViewOf(u, h.avatarPlaceholder)}}, nil
	}
	active := true
	f := Filter{IsActive: &active}
	if target.Group != GroupNone {
		f.AccessGroup = &target.Group
	}
	users, err := h.store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	return recipientsResponse{List: h.views(users)}, nil
}

func (h *Handler) views(users []User) []View {
	out := make([]View, len(users))
	for i, u := range users {
		out[i] = ViewOf(u, h.avatarPlaceholder)
	}
	return out
}
