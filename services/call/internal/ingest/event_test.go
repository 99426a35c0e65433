package ingest

import (
	"testing"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/telephony"
	"ccplatform/services/call/internal/call"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func validEvent() telephony.CallEvent {
	answered := t0.Add(12 * time.Second)
	connected := answered.Add(time.Second)
	client := telephony.FinishedByClient
	return telephony.CallEvent{
		EventID: "e-1", PlatformCallID: "pc-1", LeadID: 10, OrderID: 2, UserID: 5, SipEndpointID: 3,
		Direction: telephony.DirectionOutgoing, StatusCode: telephony.StatusAnswered,
		FinishInitiator: &client, ClientPhone: "+79991234567",
		StartedAt: t0, AnsweredAt: &answered, AgentConnectedAt: &connected, EndedAt: answered.Add(95 * time.Second),
		HasRecords: true, IsPredictive: true,
	}
}

func TestAbandonedIsDerivedFromTheAgentConnection(t *testing.T) {
	at := func(d time.Duration) *time.Time {
		x := t0.Add(12*time.Second + d)
		return &x
	}
	cases := map[string]struct {
		change func(*telephony.CallEvent)
		want   string
	}{
		"agent within 1 s":     {func(e *telephony.CallEvent) {}, telephony.StatusAnswered},
		"agent at exactly 2 s": {func(e *telephony.CallEvent) { e.AgentConnectedAt = at(2 * time.Second) }, telephony.StatusAnswered},
		"agent after 2.5 s":    {func(e *telephony.CallEvent) { e.AgentConnectedAt = at(2500 * time.Millisecond) }, telephony.StatusAbandoned},
		"no agent":             {func(e *telephony.CallEvent) { e.AgentConnectedAt = nil }, telephony.StatusAbandoned},
		"voicemail, no agent":  {func(e *telephony.CallEvent) { e.StatusCode, e.AgentConnectedAt = telephony.StatusVoicemail, nil }, telephony.StatusVoicemail},
		"nobody answered": {func(e *telephony.CallEvent) {
			e.StatusCode, e.AnsweredAt, e.AgentConnectedAt = telephony.StatusNoAnswer, nil, nil
		}, telephony.StatusNoAnswer},
		"incoming call, no agent": {func(e *telephony.CallEvent) {
			e.Direction, e.IsPredictive, e.AgentConnectedAt = telephony.DirectionIncoming, false, nil
		}, telephony.StatusAnswered},
		"reported abandoned": {func(e *telephony.CallEvent) { e.StatusCode, e.AgentConnectedAt = telephony.StatusAbandoned, nil }, telephony.StatusAbandoned},
	}
	for name, tc := range cases {
		e := validEvent()
		tc.change(&e)
		c, err := FromEvent(e, time.Now())
		require.NoError(t, err, name)
		assert.Equal(t, tc.want, c.StatusCode, name)
		assert.Equal(t, e.AgentConnectedAt, c.AgentConnectedAt, name)
	}
}

func TestFromEventOK(t *testing.T) {
	c, err := FromEvent(validEvent(), time.Now())
	require.NoError(t, err)
	assert.Equal(t, "79991234567", c.ClientPhone, "stored as E.164 digits without +")
	assert.Equal(t, 107, c.TotalSeconds)
	assert.Equal(t, 12, c.WaitSeconds)
	assert.Equal(t, 95, c.TalkSeconds)
	assert.Equal(t, "pc-1", c.PlatformCallID)
	assert.Equal(t, t0, c.StartedAt)
}

func TestFromEventPhoneWithoutPlusAndOtherZones(t *testing.T) {
	e := validEvent()
	e.ClientPhone = "447911123456"
	loc := time.FixedZone("MSK", 3*3600)
	e.StartedAt = e.StartedAt.In(loc)
	e.FinishInitiator = nil
	c, err := FromEvent(e, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "447911123456", c.ClientPhone)
	assert.Equal(t, time.UTC, c.StartedAt.Location(), "times are kept in UTC")
	assert.Nil(t, c.FinishInitiator, "finishInitiator may be null")
}

func TestFromEventRules(t *testing.T) {
	bad := "nobody"
	cases := map[string]struct {
		change func(*telephony.CallEvent)
		field  string
	}{
		"no event id":          {func(e *telephony.CallEvent) { e.EventID = " " }, "eventId"},
		"no platform call id":  {func(e *telephony.CallEvent) { e.PlatformCallID = "" }, "platformCallId"},
		"long platform id":     {func(e *telephony.CallEvent) { e.PlatformCallID = string(make([]byte, 129)) }, "platformCallId"},
		"no lead":              {func(e *telephony.CallEvent) { e.LeadID = 0 }, "leadId"},
		"negative order":       {func(e *telephony.CallEvent) { e.OrderID = -1 }, "orderId"},
		"no user":              {func(e *telephony.CallEvent) { e.UserID = 0 }, "userId"},
		"no sip endpoint":      {func(e *telephony.CallEvent) { e.SipEndpointID = 0 }, "sipEndpointId"},
		"bad direction":        {func(e *telephony.CallEvent) { e.Direction = "inbound" }, "direction"},
		"no status":            {func(e *telephony.CallEvent) { e.StatusCode = "" }, "statusCode"},
		"bad status code":      {func(e *telephony.CallEvent) { e.StatusCode = "No Answer" }, "statusCode"},
		"bad finish initiator": {func(e *telephony.CallEvent) { e.FinishInitiator = &bad }, "finishInitiator"},
		"phone with letters":   {func(e *telephony.CallEvent) { e.ClientPhone = "+7999abc4567" }, "clientPhone"},
		"phone too short":      {func(e *telephony.CallEvent) { e.ClientPhone = "12345" }, "clientPhone"},
		"phone too long":       {func(e *telephony.CallEvent) { e.ClientPhone = "+1234567890123456" }, "clientPhone"},
		"phone leading zero":   {func(e *telephony.CallEvent) { e.ClientPhone = "+0999123456" }, "clientPhone"},
		"incoming predictive":  {func(e *telephony.CallEvent) { e.Direction = telephony.DirectionIncoming }, "isPredictive"},
		"no start":             {func(e *telephony.CallEvent) { e.StartedAt = time.Time{} }, "startedAt"},
		"no end":               {func(e *telephony.CallEvent) { e.EndedAt = time.Time{} }, "endedAt"},
		"ends before start":    {func(e *telephony.CallEvent) { e.EndedAt = t0.Add(-time.Second) }, "endedAt"},
		"longer than a day":    {func(e *telephony.CallEvent) { e.EndedAt = t0.Add(25 * time.Hour) }, "endedAt"},
		"answered before start": {func(e *telephony.CallEvent) {
			a := t0.Add(-time.Second)
			e.AnsweredAt = &a
		}, "answeredAt"},
		"answered after end": {func(e *telephony.CallEvent) {
			a := e.EndedAt.Add(time.Second)
			e.AnsweredAt, e.AgentConnectedAt = &a, nil
		}, "answeredAt"},
		"agent before the answer": {func(e *telephony.CallEvent) {
			a := t0.Add(time.Second)
			e.AgentConnectedAt = &a
		}, "agentConnectedAt"},
		"agent after the end": {func(e *telephony.CallEvent) {
			a := e.EndedAt.Add(time.Second)
			e.AgentConnectedAt = &a
		}, "agentConnectedAt"},
		"agent without an answer": {func(e *telephony.CallEvent) { e.AnsweredAt = nil }, "agentConnectedAt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := validEvent()
			tc.change(&e)
			_, err := FromEvent(e, time.Now())
			require.Error(t, err)
			ae, ok := apperr.As(err)
			require.True(t, ok)
			assert.Contains(t, ae.Fields, tc.field, "%v", err)
			assert.Contains(t, err.Error(), tc.field+":")
		})
	}
}

func TestFromEventReportsEveryField(t *testing.T) {
	_, err := FromEvent(telephony.CallEvent{}, time.Now())
	ae, ok := apperr.As(err)
	require.True(t, ok)
	for _, f := range []string{"eventId", "platformCallId", "leadId", "orderId", "userId", "sipEndpointId",
		"direction", "statusCode", "clientPhone", "startedAt", "endedAt"} {
		assert.Contains(t, ae.Fields, f)
	}
}

func TestDurations(t *testing.T) {
	ans := t0.Add(7*time.Second + 900*time.Millisecond)
	total, wait, talk := Durations(t0.Add(300*time.Millisecond), &ans, t0.Add(60*time.Second+100*time.Millisecond))
	assert.Equal(t, []int{60, 7, 53}, []int{total, wait, talk}, "whole seconds, total = wait + talk")

	total, wait, talk = Durations(t0, nil, t0.Add(31*time.Second))
	assert.Equal(t, []int{31, 31, 0}, []int{total, wait, talk}, "an unanswered call waited all along")

	total, wait, talk = Durations(t0, nil, t0)
	assert.Equal(t, []int{0, 0, 0}, []int{total, wait, talk})
}

func TestDecode(t *testing.T) {
	for name, body := range map[string]string{
		"empty":       ``,
		"not json":    `call ended`,
		"array":       `[{"eventId":"x"}]`,
		"wrong type":  `{"leadId":"ten"}`,
		"bad time":    `{"startedAt":"yesterday"}`,
		"truncated":   `{"eventId":"x"`,
		"string json": `"x"`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "undecodable event")
		})
	}
	e, err := Decode([]byte(`{"eventId":"e","leadId":3,"startedAt":"2026-11-21T13:00:00+03:00","unknown":1}`))
	require.NoError(t, err, "unknown members are ignored")
	assert.Equal(t, int64(3), e.LeadID)
	assert.True(t, e.StartedAt.Equal(t0))
}

func TestFinishedOf(t *testing.T) {
	p := Pending{Record: call.Record{ID: 9, LeadID: 10, OrderID: 2, UserID: 5, StatusID: 1, ClientPhone: "79991234567",
		Direction: "outgoing", TotalDurationSeconds: 95, CreatedAt: t0}, PlatformCallID: "pc",
		StatusCode: "answered", EndedAt: t0.In(time.FixedZone("X", 3600))}
	f := FinishedOf(p)
	assert.Equal(t, "call.finished", f.Type)
	assert.Equal(t, "2026-11-21T10:00:00+00:00", f.EndedAt)
	assert.Equal(t, f.EndedAt, f.OccurredAt)
	assert.Equal(t, int64(9), f.CallID)
	assert.Equal(t, p.FinishedEventID.String(), f.EventID)
	assert.Equal(t, call.ViewOf(p.Record), f.Data, "the call as the API returns it")
	assert.Equal(t, int64(95), int64(f.Data.TotalDurationSeconds))
}

func TestTimesOutsideTheStoredYearsAreInvalid(t *testing.T) {
	// The event that PostgreSQL refused (22008) once its checks had passed.
	ev, err := Decode([]byte(`{"eventId":"e-0","platformCallId":"pc-0","leadId":1,"orderId":1,"userId":1,"sipEndpointId":1,
		"direction":"outgoing","statusCode":"answered","clientPhone":"+79991234567",
		"startedAt":"0000-06-01T00:00:00Z","endedAt":"0000-06-01T00:01:00Z"}`))
	require.NoError(t, err)
	_, err = FromEvent(ev, time.Now())
	ae, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, apperr.FieldErrors{"startedAt": apitime.RangeRule, "endedAt": apitime.RangeRule}, ae.Fields)

	e := validEvent()
	late := time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -14*3600)) // 10000-01-01 in UTC
	e.AnsweredAt = &late
	_, err = FromEvent(e, time.Now())
	ae, ok = apperr.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, apperr.FieldErrors{"answeredAt": apitime.RangeRule}, ae.Fields)
}

func TestACallEndingInTheFutureIsInvalid(t *testing.T) {
	now := t0.Add(time.Hour)
	e := validEvent()
	e.StartedAt = now.Add(MaxClockSkew - 2*time.Minute)
	e.AnsweredAt, e.AgentConnectedAt = nil, nil
	e.EndedAt = now.Add(MaxClockSkew)
	_, err := FromEvent(e, now)
	require.NoError(t, err, "a clock up to MaxClockSkew ahead is tolerated")

	e.EndedAt = now.Add(MaxClockSkew + time.Second)
	_, err = FromEvent(e, now)
	ae, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, apperr.FieldErrors{"endedAt": "must be at most 5 minutes after the event is received: the call has ended"}, ae.Fields)

	e.StartedAt = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	e.EndedAt = e.StartedAt.Add(time.Minute)
	_, err = FromEvent(e, now)
	assert.ErrorContains(t, err, "endedAt: must be at most 5 minutes after the event is received")
}
