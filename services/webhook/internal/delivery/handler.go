package delivery

import (
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"
	"ccplatform/services/webhook/internal/subscription"

	"github.com/gin-gonic/gin"
)

// Handler serves a subscription's delivery log and redelivery.
type Handler struct {
	store *Store
	subs  *subscription.Store
	now   func() time.Time
}

// NewHandler serves the log of store; subs says whose subscription is whose.
func NewHandler(store *Store, subs *subscription.Store, now func() time.Time) *Handler {
	return &Handler{store: store, subs: subs, now: now}
}

// Routes registers the routes on r (which must already require the internal token).
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/webhook/:id/deliveries", web.Handle(h.log))
	r.POST("/v2/webhook/:id/redeliver/:eventId", h.redeliver)
}

func (h *Handler) log(c *gin.Context) (any, error) {
	sub, err := h.visible(c)
	if err != nil {
		return nil, err
	}
	fe := apperr.FieldErrors{}
	q := c.Request.URL.Query()
	page := listquery.ParsePage(q, fe)
	state := q.Get("state")
	if state != "" && state != "pending" && state != "delivered" && state != "failed" {
		fe.Add("state", "must be pending, delivered or failed")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	ds, total, err := h.store.Log(c.Request.Context(), sub, state, page.Offset, page.Limit)
	if err != nil {
		return nil, err
	}
	return listquery.ResultOf(ds, ViewOf, page, total), nil
}

// redeliver answers 202: the event is due again at once, the attempt follows.
func (h *Handler) redeliver(c *gin.Context) {
	sub, err := h.visible(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	eventID := c.Param("eventId")
	if len(eventID) == 0 || len(eventID) > 128 {
		web.Fail(c, apperr.Field("eventId", "must be an event id of at most 128 characters"))
		return
	}
	id, err := h.store.Redeliver(c.Request.Context(), sub, eventID, h.now())
	if err != nil {
		web.Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, web.Envelope{Success: true, Data: Redelivery{DeliveryID: id, EventID: eventID, State: "pending"}})
}

// Redelivery is the answer of a redelivery.
type Redelivery struct {
	DeliveryID int64  `json:"deliveryId"`
	EventID    string `json:"eventId"`
	State      string `json:"state"`
}

// visible is the subscription of the path, if the caller may see it (404 otherwise).
func (h *Handler) visible(c *gin.Context) (int64, error) {
	v, id, err := subscription.Target(c)
	if err != nil {
		return 0, err
	}
	if _, err := h.subs.Get(c.Request.Context(), v, id); err != nil {
		return 0, err
	}
	return id, nil
}
