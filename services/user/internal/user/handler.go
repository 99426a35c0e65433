package user

import (
	"fmt"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// maxCheckIDs bounds one check request; an order names far fewer agents than this.
const maxCheckIDs = 10000

// Handler serves the user routes.
type Handler struct {
	store *Store
}

// NewHandler is a handler over store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// RegisterInternal adds the routes other services call; r must already demand the internal token.
func (h *Handler) RegisterInternal(r gin.IRoutes) {
	r.POST("/internal/users/check", web.Handle(h.check))
}

type checkRequest struct {
	IDs []int64 `json:"ids"`
}

type checkResponse struct {
	Missing []int64 `json:"missing"`
}

// check answers which of the given ids are not users; ids <= 0 are never users, so they are missing.
func (h *Handler) check(c *gin.Context) (any, error) {
	var req checkRequest
	if err := web.DecodeJSON(c, &req); err != nil {
		return nil, err
	}
	if len(req.IDs) > maxCheckIDs {
		return nil, apperr.Field("ids", fmt.Sprintf("must have at most %d elements", maxCheckIDs))
	}
	missing, err := h.store.Missing(c.Request.Context(), req.IDs)
	if err != nil {
		return nil, err
	}
	return checkResponse{Missing: missing}, nil
}
