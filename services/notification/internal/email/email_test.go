package email

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMessageIDIsTheDeliveryKey: every try of a notification's e-mail has the same Message-ID,
// two notifications never share one.
func TestMessageIDIsTheDeliveryKey(t *testing.T) {
	assert.Equal(t, "notification-42@callcenter.local", MessageID(42, "noreply@callcenter.local"))
	assert.Equal(t, MessageID(42, "noreply@callcenter.local"), MessageID(42, "noreply@callcenter.local"))
	assert.NotEqual(t, MessageID(42, "noreply@callcenter.local"), MessageID(43, "noreply@callcenter.local"))
	assert.Equal(t, "notification-7@example.com", MessageID(7, "Call center <noreply@example.com>"))
	assert.Equal(t, "notification-7@localhost", MessageID(7, "noreply"))
}
