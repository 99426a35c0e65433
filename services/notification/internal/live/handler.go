package live

import (
	"io"
	"net/http"
	"time"

	"ccplatform/pkg/web"
	"ccplatform/services/notification/internal/notification"

	"github.com/gin-gonic/gin"
)

// Handler serves the live stream.
type Handler struct {
	hub *Hub
	// heartbeat is how often an idle stream sends a comment, so proxies keep it open and a gone
	// client is noticed.
	heartbeat time.Duration
}

// NewHandler serves the streams of hub.
func NewHandler(hub *Hub, heartbeat time.Duration) *Handler {
	return &Handler{hub: hub, heartbeat: heartbeat}
}

// Routes registers the stream route on r (which must already require the internal token).
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/notification/stream", h.stream)
}

// stream is the calling user's event stream: a "ready" event at once, then a "notification" event
// per notification while the stream is open, and a comment line every heartbeat.
func (h *Handler) stream(c *gin.Context) {
	userID, err := notification.CallerID(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	// The stream outlives the server's read and write timeouts, which every other route keeps.
	rc := http.NewResponseController(c.Writer)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})

	sub := h.hub.Subscribe(userID)
	defer sub.Close()
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	c.SSEvent("ready", gin.H{"userId": userID})
	c.Writer.Flush()

	beat := time.NewTicker(h.heartbeat)
	defer beat.Stop()
	c.Stream(func(w io.Writer) bool {
		select {
		case <-c.Request.Context().Done():
			return false
		case <-sub.Done():
			return false
		case m := <-sub.Messages():
			c.SSEvent("notification", m)
		case <-beat.C:
			_, _ = io.WriteString(w, ": ping\n\n")
		}
		return true
	})
}
