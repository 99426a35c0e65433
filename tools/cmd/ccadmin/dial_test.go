package main

import (
	"math/rand/v2"
	"testing"
	"time"

	"ccplatform/pkg/telephony"

	"github.com/stretchr/testify/assert"
)

func TestADialedCallIsOutgoingAndEndsNow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for range 500 {
		ev := dialedCall(r, now, simLead{ID: 4, Phone: "+79991234567", OrderID: 2}, 7, 3)
		assert.Equal(t, telephony.DirectionOutgoing, ev.Direction)
		assert.Equal(t, now, ev.EndedAt)
		assert.True(t, ev.StartedAt.Before(now) || ev.StartedAt.Equal(now))
		if ev.AnsweredAt != nil {
			assert.False(t, ev.AnsweredAt.Before(ev.StartedAt))
			assert.False(t, ev.AnsweredAt.After(now))
		}
	}
}
