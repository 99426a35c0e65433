// Package recipient resolves who a notification goes to, by asking the user service (this service
// never reads the users schema), and carries each recipient's notification settings.
package recipient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// AccessGroups are the groups a notification may target (the contract's six).
func AccessGroups() []string {
	return []string{"client", "call-center", "call-center-senior", "arbitration", "moderator", "admin"}
}

// ValidGroup reports whether g is one of AccessGroups.
func ValidGroup(g string) bool { return slices.Contains(AccessGroups(), g) }

// Target names the recipients of a command: exactly one of one user, every active user, or the
// active users of an access group. Its JSON is both the command's target and the user service's
// recipients request.
type Target struct {
	UserID int64  `json:"userId,omitempty"`
	All    bool   `json:"all,omitempty"`
	Group  string `json:"group,omitempty"`
}

// Valid reports whether exactly one kind of target is set, and set to something valid (a
// negative user id is an invalid user, not "no user": the user service refuses it).
func (t Target) Valid() bool {
	n := 0
	if t.UserID < 0 {
		return false
	}
	if t.UserID > 0 {
		n++
	}
	if t.All {
		n++
	}
	if t.Group != "" {
		if !ValidGroup(t.Group) {
			return false
		}
		n++
	}
	return n == 1
}

// PriorityUrgent is the setting value that limits a channel to urgent notifications.
const PriorityUrgent = "urgent"

// User is a recipient as the user service describes it: who, whether active, and the
// notification settings of each channel.
type User struct {
	ID                             int64   `json:"id"`
	Email                          string  `json:"email"`
	IsActive                       bool    `json:"isActive"`
	AccessGroup                    string  `json:"accessGroup"`
	MessengerNotificationsEnabled  bool    `json:"messengerNotificationsEnabled"`
	MessengerChatID                ChatID  `json:"messengerChatId"`
	MessengerNotificationsPriority *string `json:"messengerNotificationsPriority"`
	EmailNotificationsEnabled      bool    `json:"emailNotificationsEnabled"`
	EmailNotificationsPriority     *string `json:"emailNotificationsPriority"`
}

// ChatID is a messenger chat id. The contract types it as a string or null; a number is read too,
// since messengers use numeric ids and a number on the wire must not fail a whole recipient list.
type ChatID string

// UnmarshalJSON reads a string, a number or null ("" = no chat).
func (c *ChatID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = ChatID(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("messengerChatId: %w", err)
		}
		if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
			return fmt.Errorf("messengerChatId: not an integer: %s", n)
		}
		*c = ChatID(n.String())
	}
	return nil
}

// Filter keeps the users a target really means: for "all" and a group only active users (of that
// group), whatever the directory sent; one named user is kept as is.
func Filter(t Target, users []User) []User {
	if t.UserID > 0 {
		return users
	}
	out := users[:0:0]
	for _, u := range users {
		if !u.IsActive || (t.Group != "" && u.AccessGroup != t.Group) {
			continue
		}
		out = append(out, u)
	}
	return out
}
