// Package delivery sends stored notifications out on each recipient's channels (live stream,
// e-mail, messenger). Which channels a recipient gets is a plain rule over the user's settings;
// each planned delivery is a row that a per-channel loop sends, retrying with exponential backoff
// up to a bound, so a failing channel never blocks another and never loses the record.
package delivery

import (
	"errors"
	"time"

	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"
)

// Channel is a way a notification reaches a user.
type Channel string

// The channels.
const (
	Live      Channel = "live"
	Email     Channel = "email"
	Messenger Channel = "messenger"
)

// Channels lists every channel.
func Channels() []Channel { return []Channel{Live, Email, Messenger} }

// Planned is one delivery to store: a channel and where on it (an address, a chat id; empty for
// the live stream, which reaches the user wherever a stream is open).
type Planned struct {
	NotificationID int64
	Channel        Channel
	Destination    string
}

// Plan is the contract's channel rule for one recipient of n: the live stream always (it reaches
// the user only while online); e-mail and messenger when enabled, with somewhere to send to,
// the user active, and the channel's priority setting letting n through ("urgent" = urgent only).
// Channels missing from configured are skipped.
func Plan(u recipient.User, n notification.Notification, configured func(Channel) bool) []Planned {
	var out []Planned
	add := func(ch Channel, dest string) {
		if configured(ch) {
			out = append(out, Planned{NotificationID: n.ID, Channel: ch, Destination: dest})
		}
	}
	add(Live, "")
	if u.IsActive && u.EmailNotificationsEnabled && u.Email != "" && allows(u.EmailNotificationsPriority, n.Priority) {
		add(Email, u.Email)
	}
	if u.IsActive && u.MessengerNotificationsEnabled && u.MessengerChatID != "" && allows(u.MessengerNotificationsPriority, n.Priority) {
		add(Messenger, string(u.MessengerChatID))
	}
	return out
}

// allows reports whether a channel whose priority setting is setting carries a notification of
// priority p: null (or any value but "urgent") carries all, "urgent" only urgent ones.
func allows(setting *string, p notification.Priority) bool {
	return setting == nil || *setting != recipient.PriorityUrgent || p == notification.PriorityUrgent
}

// Delivery is a claimed delivery: the notification and where to send it.
type Delivery struct {
	notification.Notification
	Channel     Channel
	Destination string
	// Attempt counts this try: 1 for the first.
	Attempt int
}

// RetryPolicy bounds the retries of a failing delivery.
type RetryPolicy struct {
	// Base is the wait after the first failure; it doubles after each one, up to Max.
	Base time.Duration
	Max  time.Duration
	// MaxAttempts is how many tries a delivery gets before it is marked failed.
	MaxAttempts int
}

// DefaultRetryPolicy retries for about an hour: 2 s, 4 s, 8 s … capped at 10 min, 10 tries.
var DefaultRetryPolicy = RetryPolicy{Base: 2 * time.Second, Max: 10 * time.Minute, MaxAttempts: 10}

// Delay is the wait after failed attempt number attempt (1-based).
func (p RetryPolicy) Delay(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// GiveUp reports whether a delivery whose attempt number attempt failed with err is done for good.
func (p RetryPolicy) GiveUp(attempt int, err error) bool {
	return attempt >= p.MaxAttempts || IsPermanent(err)
}

// permanent marks a failure that retrying cannot fix (the messenger says the chat does not exist).
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that the delivery is marked failed at once.
func Permanent(err error) error { return permanent{err} }

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}
