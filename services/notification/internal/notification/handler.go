package notification

import (
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Handler serves the calling user's inbox.
type Handler struct {
	store *Store
}

// NewHandler serves store.
func NewHandler(store *Store) *Handler { return &Handler{store: store} }

// Routes registers the inbox routes on r (which must already require the internal token).
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/notification", web.Handle(h.list))
	r.POST("/v2/notification/read/:id", web.Handle(h.read))
}

// list is the caller's notifications, newest first: {list, next, total}; unread=1 keeps the
// unread ones only.
func (h *Handler) list(c *gin.Context) (any, error) {
	userID, err := CallerID(c)
	if err != nil {
		return nil, err
	}
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(c.Request.URL.Query(), fe)
	unread := ParseUnread(c.Query("unread"), fe)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	items, total, err := h.store.List(c.Request.Context(), Filter{UserID: userID, UnreadOnly: unread, Offset: page.Offset, Limit: page.Limit})
	if err != nil {
		return nil, err
	}
	return listquery.ResultOf(items, Notification.ToView, page, total), nil
}

// read marks one of the caller's notifications read; data is [].
func (h *Handler) read(c *gin.Context) (any, error) {
	userID, err := CallerID(c)
	if err != nil {
		return nil, err
	}
	id, err := web.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	return nil, h.store.MarkRead(c.Request.Context(), userID, id)
}

// CallerID is the verified user the gateway forwarded; the inbox and the stream are always some
// user's own, so a request without one is refused.
func CallerID(c *gin.Context) (int64, error) {
	id := identity.Of(c).UserID
	if id <= 0 {
		return 0, apperr.New(apperr.Unauthorized, "%s: missing, the caller is unknown", identity.HeaderUserID)
	}
	return id, nil
}

// ParseUnread reads the unread filter: 1/true keeps unread notifications only, 0/false or absent
// keeps all.
func ParseUnread(raw string, fe apperr.FieldErrors) bool {
	switch raw {
	case "", "0", "false":
		return false
	case "1", "true":
		return true
	}
	fe.Add("unread", "must be 0 or 1")
	return false
}
