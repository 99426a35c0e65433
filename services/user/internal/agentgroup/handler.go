package agentgroup

import (
	"context"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"
	"ccplatform/services/user/internal/idcheck"
	"ccplatform/services/user/internal/user"

	"github.com/gin-gonic/gin"
)

// Handler serves the agent group routes.
type Handler struct {
	groups *Store
	users  *user.Store
}

// NewHandler is a handler over groups, checking agents with users.
func NewHandler(groups *Store, users *user.Store) *Handler {
	return &Handler{groups: groups, users: users}
}

// Routes registers createAgentGroup, updateAgentGroup and listAgentGroups and the check other
// services call on r, which must already demand the internal token; idempotent guards the create
// route.
func (h *Handler) Routes(r gin.IRoutes, idempotent gin.HandlerFunc) {
	r.POST("/v2/agent-group/create", idempotent, web.Handle(h.create))
	r.POST("/v2/agent-group/update/:id", web.Handle(h.update))
	r.GET("/v2/agent-group", web.Handle(h.list))
	r.POST("/internal/agent-groups/check", idcheck.Handle(h.groups.Missing))
}

// create is createAgentGroup (POST /v2/agent-group/create/): returns the new group's id.
func (h *Handler) create(c *gin.Context) (any, error) {
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := in.CheckCreate()
	if err != nil {
		return nil, err
	}
	ch.By = identity.Of(c).Ref()
	ctx := c.Request.Context()
	if err := h.checkAgents(ctx, ch); err != nil {
		return nil, err
	}
	id, err := h.groups.Create(ctx, ch)
	if err != nil {
		return nil, err
	}
	return web.ID{ID: id}, nil
}

// update is updateAgentGroup (POST /v2/agent-group/update/{id}/): data `[]`.
func (h *Handler) update(c *gin.Context) (any, error) {
	id, err := web.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	var in Input
	if err := web.DecodeJSON(c, &in); err != nil {
		return nil, err
	}
	ch, err := in.CheckUpdate()
	if err != nil {
		return nil, err
	}
	ch.By = identity.Of(c).Ref()
	ctx := c.Request.Context()
	if err := h.checkAgents(ctx, ch); err != nil {
		return nil, err
	}
	return nil, h.groups.Update(ctx, id, ch)
}

// list is listAgentGroups. An agent (call-center) sees only the groups they are in: an agentId
// naming someone else matches nothing for them.
func (h *Handler) list(c *gin.Context) (any, error) {
	f, page, err := ParseListQuery(c.Request.URL.Query())
	if err != nil {
		return nil, err
	}
	if caller := identity.Of(c); access.Group(caller.AccessGroup) == access.CallCenter {
		if f.AgentID != nil && *f.AgentID != caller.UserID {
			return listquery.NewResult([]View{}, page, 0), nil
		}
		f.AgentID = &caller.UserID
	}
	ctx := c.Request.Context()
	groups, err := h.groups.List(ctx, f)
	if err != nil {
		return nil, err
	}
	total, err := h.groups.Count(ctx, f)
	if err != nil {
		return nil, err
	}
	return listquery.ResultOf(groups, ViewOf, page, total), nil
}

// checkAgents refuses agents that are not users, naming them.
func (h *Handler) checkAgents(ctx context.Context, ch Changes) error {
	if ch.AgentIDs == nil || len(*ch.AgentIDs) == 0 {
		return nil
	}
	missing, err := h.users.Missing(ctx, *ch.AgentIDs)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return apperr.Field("agentIds", "unknown user ids: "+joinIDs(missing))
	}
	return nil
}
