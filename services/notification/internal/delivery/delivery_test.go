package delivery

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"

	"github.com/stretchr/testify/assert"
)

func all(Channel) bool { return true }

func channelsOf(p []Planned) []Channel {
	var out []Channel
	for _, x := range p {
		out = append(out, x.Channel)
	}
	return out
}

// TestPlanHonoursEveryPreference walks enabled/disabled × setting null/urgent × notification
// default/urgent for both external channels.
func TestPlanHonoursEveryPreference(t *testing.T) {
	urgent := "urgent"
	for _, enabled := range []bool{false, true} {
		for _, setting := range []*string{nil, &urgent} {
			for _, prio := range []notification.Priority{notification.PriorityDefault, notification.PriorityUrgent} {
				name := fmt.Sprintf("enabled=%t setting=%v priority=%s", enabled, setting != nil, prio)
				want := enabled && (setting == nil || prio == notification.PriorityUrgent)
				n := notification.Notification{ID: 9, Content: notification.Content{Priority: prio}}

				u := recipient.User{ID: 1, IsActive: true, Email: "a@b.c", EmailNotificationsEnabled: enabled, EmailNotificationsPriority: setting}
				got := Plan(u, n, all)
				if want {
					assert.Equal(t, []Planned{{9, Live, ""}, {9, Email, "a@b.c"}}, got, name)
				} else {
					assert.Equal(t, []Planned{{9, Live, ""}}, got, name)
				}

				u = recipient.User{ID: 1, IsActive: true, MessengerChatID: "42", MessengerNotificationsEnabled: enabled, MessengerNotificationsPriority: setting}
				got = Plan(u, n, all)
				if want {
					assert.Equal(t, []Planned{{9, Live, ""}, {9, Messenger, "42"}}, got, name)
				} else {
					assert.Equal(t, []Planned{{9, Live, ""}}, got, name)
				}
			}
		}
	}
}

func TestPlanSkipsWhatCannotBeSent(t *testing.T) {
	n := notification.Notification{ID: 1, Content: notification.Content{Priority: notification.PriorityUrgent}}
	full := recipient.User{ID: 1, IsActive: true, Email: "a@b.c", EmailNotificationsEnabled: true, MessengerChatID: "42", MessengerNotificationsEnabled: true}
	assert.Equal(t, []Channel{Live, Email, Messenger}, channelsOf(Plan(full, n, all)))

	noAddress := full
	noAddress.Email, noAddress.MessengerChatID = "", ""
	assert.Equal(t, []Channel{Live}, channelsOf(Plan(noAddress, n, all)))

	inactive := full
	inactive.IsActive = false
	assert.Equal(t, []Channel{Live}, channelsOf(Plan(inactive, n, all)), "an inactive user gets no e-mail or messages")

	onlyLive := func(ch Channel) bool { return ch == Live }
	assert.Equal(t, []Channel{Live}, channelsOf(Plan(full, n, onlyLive)), "channels not configured are skipped")

	other := "all"
	lenient := full
	lenient.EmailNotificationsPriority = &other
	n.Priority = notification.PriorityDefault
	assert.Equal(t, []Channel{Live, Email, Messenger}, channelsOf(Plan(lenient, n, all)), "only \"urgent\" restricts")
}

func TestRetryPolicy(t *testing.T) {
	p := RetryPolicy{Base: time.Second, Max: 10 * time.Second, MaxAttempts: 4}
	assert.Equal(t, time.Second, p.Delay(1))
	assert.Equal(t, 2*time.Second, p.Delay(2))
	assert.Equal(t, 8*time.Second, p.Delay(4))
	assert.Equal(t, 10*time.Second, p.Delay(5))
	assert.Equal(t, 10*time.Second, p.Delay(1000), "no overflow")

	boom := errors.New("boom")
	assert.False(t, p.GiveUp(3, boom))
	assert.True(t, p.GiveUp(4, boom))
	assert.True(t, p.GiveUp(1, Permanent(boom)))
	assert.True(t, IsPermanent(fmt.Errorf("wrapped: %w", Permanent(boom))))
	assert.ErrorIs(t, Permanent(boom), boom)
}
