// Package notification holds the notifications users receive: their priority and level, the
// stored per-recipient records, and the inbox routes (a user's own list and marking one read).
package notification

import (
	"slices"
	"time"

	"ccplatform/pkg/apitime"
)

// Priority decides whether a notification opens by itself and whether channels set to "urgent
// only" carry it.
type Priority string

// The priorities of the contract.
const (
	PriorityDefault Priority = "default"
	PriorityUrgent  Priority = "urgent"
)

// Priorities lists the valid priorities in the contract's order.
func Priorities() []Priority { return []Priority{PriorityDefault, PriorityUrgent} }

// Valid reports whether p is one of the contract's priorities.
func (p Priority) Valid() bool { return slices.Contains(Priorities(), p) }

// Level is how the interface colours a notification.
type Level string

// The levels of the contract.
const (
	LevelDefault Level = "default"
	LevelSuccess Level = "success"
	LevelWarning Level = "warning"
	LevelDanger  Level = "danger"
)

// Levels lists the valid levels in the contract's order.
func Levels() []Level { return []Level{LevelDefault, LevelSuccess, LevelWarning, LevelDanger} }

// Valid reports whether l is one of the contract's levels.
func (l Level) Valid() bool { return slices.Contains(Levels(), l) }

// Content is what a sender writes: the same for every recipient of one command.
type Content struct {
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Priority Priority `json:"priority"`
	Level    Level    `json:"level"`
}

// Notification is one stored record: a command's content for one recipient.
type Notification struct {
	ID     int64
	UserID int64
	Content
	CreatedAt time.Time
	ReadAt    *time.Time
}

// View is a notification as the inbox and the live stream show it.
type View struct {
	ID        int64    `json:"id"`
	Title     string   `json:"title"`
	Text      string   `json:"text"`
	Priority  Priority `json:"priority"`
	Level     Level    `json:"level"`
	IsRead    bool     `json:"isRead"`
	ReadAt    *string  `json:"readAt"`
	CreatedAt string   `json:"createdAt"`
}

// ToView is n as the wire shows it.
func (n Notification) ToView() View {
	return View{ID: n.ID, Title: n.Title, Text: n.Text, Priority: n.Priority, Level: n.Level,
		IsRead: n.ReadAt != nil, ReadAt: apitime.StringOrNull(n.ReadAt), CreatedAt: apitime.String(n.CreatedAt)}
}

// OpensAutomatically is the contract's urgent rule: an urgent notification opens by itself in the
// interface of a user who is online.
func (n Notification) OpensAutomatically() bool { return n.Priority == PriorityUrgent }
