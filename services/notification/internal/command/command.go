// Package command is the sending side of notifications: the three send operations check their
// body at once and put a command on the notification.commands work queue, which the worker turns
// into one record per recipient and the deliveries.
package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"

	"github.com/google/uuid"
)

// Queue is the work queue commands travel on.
const Queue = "notification.commands"

// MessageType is the type property of a command message.
const MessageType = "notification.command"

// Command is the message body: who gets what (docs/architecture.md, messaging table).
type Command struct {
	CommandID string           `json:"commandId"`
	Target    recipient.Target `json:"target"`
	notification.Content
}

// Decode reads a command message body; anything that is not a whole, valid command is an error,
// since such a message can never be processed: the command id is a UUID as the send operations
// make it (the store's command_id column is a uuid), and title and text hold no U+0000.
func Decode(body []byte) (Command, error) {
	var c Command
	if err := json.Unmarshal(body, &c); err != nil {
		return Command{}, fmt.Errorf("decode command: %w", err)
	}
	switch {
	case c.CommandID == "":
		return Command{}, fmt.Errorf("decode command: no commandId")
	case !isUUID(c.CommandID):
		return Command{}, fmt.Errorf("decode command: commandId %q is not a UUID", c.CommandID)
	case !c.Target.Valid():
		return Command{}, fmt.Errorf("decode command %s: target must name one user, all users or one access group", c.CommandID)
	case !c.Priority.Valid() || !c.Level.Valid():
		return Command{}, fmt.Errorf("decode command %s: unknown priority or level", c.CommandID)
	case strings.ContainsRune(c.Title, 0) || strings.ContainsRune(c.Text, 0):
		// The send operations refuse it (web.Unmarshal); PostgreSQL text cannot hold it.
		return Command{}, fmt.Errorf("decode command %s: title or text holds U+0000", c.CommandID)
	}
	return c, nil
}

// isUUID reports whether s is a UUID in its 36-character form, as uuid.NewString writes it.
func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

// Bounds of a notification's content; a notification is a short message, not a document.
const (
	maxTitleLen = 255
	maxTextLen  = 10000
)

// Request is the body of the three send operations; each reads the fields it needs. Fields are
// optional.Value so that a missing field and a null one are reported alike and a wrong type names
// the field.
type Request struct {
	UserID   optional.Value[int64]  `json:"userId"`
	Group    optional.Value[string] `json:"group"`
	Title    optional.Value[string] `json:"title"`
	Text     optional.Value[string] `json:"text"`
	Priority optional.Value[string] `json:"priority"`
	Level    optional.Value[string] `json:"level"`
}

// Kind is which of the three operations a request is.
type Kind int

// The send operations: 20, 21 and 22 of the contract.
const (
	Private Kind = iota
	Public
	Group
)

// Validate checks the body for the operation kind, reporting every broken field at once, and
// returns the target and the content.
func (r Request) Validate(kind Kind) (recipient.Target, notification.Content, error) {
	fe := apperr.FieldErrors{}
	var t recipient.Target
	switch kind {
	case Private:
		switch {
		case !r.UserID.Present():
			fe.Add("userId", "is required")
		case r.UserID.V <= 0:
			fe.Add("userId", "must be an integer > 0")
		default:
			t.UserID = r.UserID.V
		}
	case Public:
		t.All = true
	case Group:
		switch {
		case !r.Group.Present():
			fe.Add("group", "is required")
		case !recipient.ValidGroup(r.Group.V):
			fe.Addf("group", "must be one of %s", strings.Join(recipient.AccessGroups(), ", "))
		default:
			t.Group = r.Group.V
		}
	}
	c := notification.Content{
		Title:    text(fe, "title", r.Title, maxTitleLen),
		Text:     text(fe, "text", r.Text, maxTextLen),
		Priority: notification.Priority(r.Priority.V),
		Level:    notification.Level(r.Level.V),
	}
	switch {
	case !r.Priority.Present():
		fe.Add("priority", "is required")
	case !c.Priority.Valid():
		fe.Addf("priority", "must be one of %s", join(notification.Priorities()))
	}
	switch {
	case !r.Level.Present():
		fe.Add("level", "is required")
	case !c.Level.Valid():
		fe.Addf("level", "must be one of %s", join(notification.Levels()))
	}
	if err := fe.Err(); err != nil {
		return recipient.Target{}, notification.Content{}, err
	}
	return t, c, nil
}

// text checks a required, non-empty string of at most max characters and returns it trimmed.
func text(fe apperr.FieldErrors, field string, v optional.Value[string], max int) string {
	s := strings.TrimSpace(v.V)
	switch {
	case !v.Present():
		fe.Add(field, "is required")
	case s == "":
		fe.Add(field, "must not be empty")
	case utf8.RuneCountInString(s) > max:
		fe.Addf(field, "must be at most %d characters", max)
	}
	return s
}

func join[T ~string](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}
