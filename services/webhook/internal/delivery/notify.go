package delivery

import (
	"context"
	"encoding/json"
	"fmt"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/outbox"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// NotificationQueue is the notification service's command queue (docs/architecture.md,
// "Messaging"); a command goes to it through the default exchange.
const NotificationQueue = "notification.commands"

// command is a notification command as the notification service reads it.
type command struct {
	CommandID string `json:"commandId"`
	Target    struct {
		UserID int64 `json:"userId"`
	} `json:"target"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	Priority string `json:"priority"`
	Level    string `json:"level"`
}

// NotifyOwner is the Notify of the service: a warning to the subscription's owner, queued in the
// outbox of the transaction that disabled it, so it is sent if and only if the endpoint was
// disabled.
func NotifyOwner(ctx context.Context, tx *sqlx.Tx, sub int64) error {
	var owner int64
	var url string
	if err := tx.QueryRowxContext(ctx, `SELECT owner_user_id, url FROM subscriptions WHERE id = $1`, sub).Scan(&owner, &url); err != nil {
		return fmt.Errorf("owner of webhook %d: %w", sub, err)
	}
	c := command{CommandID: uuid.NewString(), Title: fmt.Sprintf("Webhook %d disabled", sub),
		Text: fmt.Sprintf("Every delivery to %s failed for %s, so webhook %d was disabled. Fix the endpoint, "+
			"then enable the webhook again (POST /v2/webhook/update/%d/ {\"enabled\": true}); undelivered "+
			"events can be sent again from its delivery log.", url, DisableAfter, sub, sub),
		Priority: "urgent", Level: "warning"}
	c.Target.UserID = owner
	body, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	return outbox.Add(ctx, tx, "", NotificationQueue, mq.Message{ID: c.CommandID, Type: "notification.command", Body: body})
}
