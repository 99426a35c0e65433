package command

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// ConfirmTimeout is how long a send operation waits for the broker's confirm before answering 503.
const ConfirmTimeout = 10 * time.Second

// Users answers whether a user exists and is active (the user service).
type Users interface {
	Lookup(ctx context.Context, id int64) (found, active bool, err error)
}

// Handler serves the three send operations.
type Handler struct {
	users     Users
	publisher *mq.Publisher
	// confirmTimeout bounds the wait for the broker's confirm.
	confirmTimeout time.Duration
}

// NewHandler checks private targets with users and publishes through publisher, waiting at most
// confirmTimeout for each confirm.
func NewHandler(users Users, publisher *mq.Publisher, confirmTimeout time.Duration) *Handler {
	return &Handler{users: users, publisher: publisher, confirmTimeout: confirmTimeout}
}

// Routes registers the send routes on r (which must already require the internal token);
// idempotent guards each of them.
func (h *Handler) Routes(r gin.IRouter, idempotent gin.HandlerFunc) {
	r.POST("/v2/notification/private", idempotent, web.Handle(h.send(Private)))
	r.POST("/v2/notification/public", idempotent, web.Handle(h.send(Public)))
	r.POST("/v2/notification/group", idempotent, web.Handle(h.send(Group)))
}

// send is notifyUser, notifyAll and notifyGroup: data is [] once the broker has the command.
func (h *Handler) send(kind Kind) func(c *gin.Context) (any, error) {
	return func(c *gin.Context) (any, error) {
		var req Request
		if err := web.DecodeJSON(c, &req); err != nil {
			return nil, err
		}
		target, content, err := req.Validate(kind)
		if err != nil {
			return nil, err
		}
		ctx := c.Request.Context()
		if target.UserID > 0 {
			found, active, err := h.users.Lookup(ctx, target.UserID)
			switch {
			case err != nil:
				return nil, err
			case !found:
				return nil, apperr.Field("userId", fmt.Sprintf("user %d does not exist", target.UserID))
			case !active:
				// An inactive user is never notified (public and group sends skip them): storing a
				// private one would be a notification nobody receives.
				return nil, apperr.Field("userId", fmt.Sprintf("user %d is not active", target.UserID))
			}
		}
		return nil, h.publish(ctx, Command{CommandID: uuid.NewString(), Target: target, Content: content})
	}
}

// publish puts cmd on the queue and returns once the broker confirmed it.
func (h *Handler) publish(ctx context.Context, cmd Command) error {
	body, err := json.Marshal(cmd)
	if err != nil {
		return fmt.Errorf("encode command: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, h.confirmTimeout)
	defer cancel()
	if err := h.publisher.Publish(pctx, "", Queue, mq.Message{ID: cmd.CommandID, Type: MessageType, Body: body}); err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "notification was not accepted: the message broker is unavailable, retry later")
	}
	return nil
}
