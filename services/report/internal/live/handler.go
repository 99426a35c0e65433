package live

import (
	"net/http"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
)

// Heartbeat is the longest a stream goes without an event (the current view is sent again), and
// Tick how often a snapshot is taken.
const (
	Heartbeat = 5 * time.Second
	Tick      = time.Second
)

// rescope is how often a stream asks again which orders its caller sees (an order assigned
// since shows up within it).
const rescope = time.Minute

// The parts of an event around its time and its orders, and the comment of a stream waiting for
// its first snapshot.
var (
	eventHead   = []byte("event: live\ndata: {\"at\":\"")
	eventMiddle = []byte("\",\"orders\":")
	eventTail   = []byte("}\n\n")
	waiting     = []byte(": waiting\n\n")
)

// Handler serves the live stream.
type Handler struct {
	hub       *Hub
	scopes    *visibleorders.Resolver
	heartbeat time.Duration
}

// NewHandler serves hub's snapshots, narrowed by the orders each caller may see (scopes), at
// least every heartbeat.
func NewHandler(hub *Hub, scopes *visibleorders.Resolver, heartbeat time.Duration) *Handler {
	return &Handler{hub: hub, scopes: scopes, heartbeat: heartbeat}
}

// Routes registers the stream on r, which must already require the internal token.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/v2/report/live", h.stream)
}

// viewOf is what caller may see: an agent itself, anyone else the orders it sees.
func (h *Handler) viewOf(c *gin.Context, caller identity.Caller) (View, error) {
	if access.Group(caller.AccessGroup) == access.CallCenter {
		return View{Self: true, Agent: caller.UserID}, nil
	}
	visible, err := h.scopes.Fresh(c.Request.Context(), caller)
	if err != nil {
		return View{}, err
	}
	v := View{All: visible.All, Orders: make(map[int64]bool, len(visible.OrderIDs))}
	for _, id := range visible.OrderIDs {
		v.Orders[id] = true
	}
	return v, nil
}

// stream sends a "live" event with the caller's view of the latest snapshot when it differs from
// the last one sent, and at least every heartbeat.
func (h *Handler) stream(c *gin.Context) {
	caller := identity.Of(c)
	view, err := h.viewOf(c, caller)
	if err != nil {
		web.Fail(c, err)
		return
	}
	leave := h.hub.Subscribe()
	defer leave()
	// The stream outlives the server's read and write timeouts, which every other route keeps.
	rc := http.NewResponseController(c.Writer)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	_ = rc.Flush()

	ctx := c.Request.Context()
	beat := time.NewTimer(h.heartbeat)
	defer beat.Stop()
	scoped := time.Now()
	force, sent := false, false
	// The stream keeps the checksum of what it last sent, and a buffer for its view only when it
	// is not staff's (which is the snapshot's own bytes): 200 streams cost little memory.
	var lastSum uint64
	var buf, at []byte
	for {
		snap, next := h.hub.Current()
		switch {
		case snap != nil:
			orders, sum := snap.Orders(buf, view)
			if !view.All {
				buf = orders
			}
			if !force && sent && sum == lastSum {
				break
			}
			at = snap.At.AppendFormat(at[:0], time.RFC3339Nano)
			if !h.send(c, rc, eventHead, at, eventMiddle, orders, eventTail) {
				return
			}
			sent, lastSum = true, sum
			beat.Reset(h.heartbeat)
		case force:
			// No snapshot yet (the lead service not answering): a comment keeps the stream open.
			if !h.send(c, rc, waiting) {
				return
			}
		}
		force = false
		select {
		case <-ctx.Done():
			return
		case <-h.hub.Done():
			return
		case <-next:
		case <-beat.C:
			force = true
			beat.Reset(h.heartbeat)
		}
		if !view.Self && time.Since(scoped) > rescope {
			if v, err := h.viewOf(c, caller); err == nil {
				view = v
			}
			scoped = time.Now()
		}
	}
}

// send writes parts and flushes them, reporting whether the client still reads.
func (h *Handler) send(c *gin.Context, rc *http.ResponseController, parts ...[]byte) bool {
	for _, p := range parts {
		if _, err := c.Writer.Write(p); err != nil {
			return false
		}
	}
	return rc.Flush() == nil
}
