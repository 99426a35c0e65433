package agentstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/telephony"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/agentstate"
	"ccplatform/services/user/internal/servicetest"
	"ccplatform/services/user/internal/user"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_agentstate", func(url string) int {
		testURL = url
		return m.Run()
	})
}

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func openDB(t *testing.T) *sqlx.DB {
	t.Helper()
	return servicetest.DB(t, testURL, "users", "agent_groups", "agent_states", "agent_state_events")
}

// newUsers makes users of group, the first n of them active.
func newUsers(t *testing.T, conn *sqlx.DB, group user.AccessGroup, active, inactive int) []int64 {
	t.Helper()
	users := user.NewStore(conn)
	var ids []int64
	for i := range active + inactive {
		id, err := users.Create(context.Background(), user.User{
			Email: fmt.Sprintf("%s-%d-%d@example.com", group, i, time.Now().UnixNano()), IsActive: i < active, AccessGroup: group,
			InterfaceLanguageCode: "ru", PhoneMode: user.PhonePredictive,
		})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

func event(id string, userID int64, at time.Time, state string) agentstate.Event {
	return agentstate.Event{AgentEvent: telephony.AgentEvent{EventID: id, UserID: userID, At: at, State: state}, Source: agentstate.SourceTelephony}
}

func stateOf(t *testing.T, s *agentstate.Store, id int64) agentstate.Agent {
	t.Helper()
	list, _, err := s.List(context.Background(), agentstate.Filter{UserIDs: []int64{id}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, list, 1)
	return list[0]
}

func TestTheNewestEventWinsWhateverTheOrderOfArrival(t *testing.T) {
	conn := openDB(t)
	s := agentstate.NewStore(conn)
	a := newUsers(t, conn, user.GroupCallCenter, 1, 0)[0]
	ctx := context.Background()

	assert.Equal(t, "offline", stateOf(t, s, a).State, "never reported: offline")
	assert.Nil(t, stateOf(t, s, a).Since)

	require.NoError(t, s.Apply(ctx, []agentstate.Event{event("e2", a, now.Add(2*time.Minute), "on-call")}))
	// Late (an older event) and twice (the same id again): history only.
	require.NoError(t, s.Apply(ctx, []agentstate.Event{event("e1", a, now, "available"), event("e2", a, now.Add(2*time.Minute), "on-call")}))
	got := stateOf(t, s, a)
	assert.Equal(t, "on-call", got.State)
	assert.True(t, got.Since.Equal(now.Add(2*time.Minute)))
	// One batch with several of the agent's events: the newest decides.
	require.NoError(t, s.Apply(ctx, []agentstate.Event{event("e4", a, now.Add(4*time.Minute), "available"),
		event("e3", a, now.Add(3*time.Minute), "wrap-up")}))
	assert.Equal(t, "available", stateOf(t, s, a).State)

	var history []string
	require.NoError(t, conn.Select(&history, `SELECT event_id FROM agent_state_events WHERE user_id = $1 ORDER BY at`, a))
	assert.Equal(t, []string{"e1", "e2", "e3", "e4"}, history, "every event once, late ones included")
}

func TestEligibleAreTheActiveAgentsOfTheOrderAndItsGroups(t *testing.T) {
	conn := openDB(t)
	s := agentstate.NewStore(conn)
	direct := newUsers(t, conn, user.GroupCallCenter, 2, 1) // two active, one not
	members := newUsers(t, conn, user.GroupCallCenter, 2, 0)
	other := newUsers(t, conn, user.GroupCallCenter, 1, 0)
	ids := members
	g, err := agentgroup.NewStore(conn).Create(context.Background(), agentgroup.Changes{NameRU: ptr("Продажи"), NameGB: ptr("Sales"), AgentIDs: &ids})
	require.NoError(t, err)
	require.NoError(t, s.Apply(context.Background(), []agentstate.Event{event("m0", members[0], now, "available")}))

	got, err := s.Eligible(context.Background(), direct, []int64{g})
	require.NoError(t, err)
	var seen []int64
	for _, a := range got {
		seen = append(seen, a.UserID)
		assert.Equal(t, "predictive", a.PhoneMode)
	}
	assert.ElementsMatch(t, []int64{direct[0], direct[1], members[0], members[1]}, seen, "not the inactive one, not %d", other[0])
	for _, a := range got {
		if a.UserID == members[0] {
			assert.Equal(t, "available", a.State)
		} else {
			assert.Equal(t, "offline", a.State)
		}
	}
}

func TestConsumerRecordsEventsAndDeadLettersWhatItCannot(t *testing.T) {
	conn := openDB(t)
	s := agentstate.NewStore(conn)
	a := newUsers(t, conn, user.GroupCallCenter, 1, 0)[0]
	c := agentstate.NewConsumer(s, func() time.Time { return now }, zap.NewNop())
	msg := func(v any) mq.Delivery {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return mq.Delivery{Type: telephony.AgentEventType, Body: b}
	}
	reason := "lunch"
	results := c.Handle(context.Background(), []mq.Delivery{
		msg(telephony.AgentEvent{EventID: "p1", UserID: a, At: now, State: "paused", PauseReason: &reason}),
		msg(telephony.AgentEvent{EventID: "x1", UserID: a + 1000, At: now, State: "available"}),
		msg(telephony.AgentEvent{EventID: "x2", UserID: a, At: now, State: "asleep"}),
		msg(telephony.AgentEvent{EventID: "x3", UserID: a, At: now.Add(time.Hour), State: "available"}),
		{Type: telephony.AgentEventType, Body: []byte("{")},
		{Type: "something.else", Body: []byte("{}")},
	})
	assert.Equal(t, mq.Ack, results[0].Outcome)
	for i, want := range []string{"userId: no user has id", "state: must be one of offline, available", "at: must be at most 5 minutes after",
		"undecodable agent event", `unknown message type "something.else"`} {
		assert.Equal(t, mq.DeadLetter, results[i+1].Outcome, want)
		assert.Contains(t, results[i+1].Reason, want)
	}
	got := stateOf(t, s, a)
	assert.Equal(t, "paused", got.State)
	assert.Equal(t, "lunch", *got.PauseReason)
}

func TestEventRules(t *testing.T) {
	reason := "lunch"
	order := int64(0)
	for _, tc := range []struct {
		ev   telephony.AgentEvent
		want string
	}{
		{telephony.AgentEvent{UserID: 1, At: now, State: "available"}, "eventId: is required"},
		{telephony.AgentEvent{EventID: "e", At: now, State: "available"}, "userId: must be an integer > 0"},
		{telephony.AgentEvent{EventID: "e", UserID: 1, State: "available"}, "at: is required"},
		{telephony.AgentEvent{EventID: "e", UserID: 1, At: now, State: "available", PauseReason: &reason}, "pauseReason: is allowed only with the state paused"},
		{telephony.AgentEvent{EventID: "e", UserID: 1, At: now, State: "paused", OrderID: &order}, "orderId: must be an integer > 0"},
		{telephony.AgentEvent{EventID: "e", UserID: 1, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), State: "paused"}, "at: must be from 0001"},
	} {
		err := agentstate.Check(tc.ev, now)
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.NoError(t, agentstate.Check(telephony.AgentEvent{EventID: "e", UserID: 1, At: now, State: "paused", PauseReason: &reason}, now))

	for _, tc := range []struct {
		in   agentstate.Input
		want string
	}{
		{agentstate.Input{State: "on-call"}, "state: must be one of available, paused, offline"},
		{agentstate.Input{State: "available", PauseReason: &reason}, "pauseReason: is allowed only with the state paused"},
		{agentstate.Input{State: "paused", UserID: &order}, "userId: must be an integer > 0"},
	} {
		err := agentstate.CheckInput(tc.in)
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func ptr[T any](v T) *T { return &v }

func TestEveryNewStateIsAnnouncedOnce(t *testing.T) {
	conn := openDB(t)
	_, err := conn.Exec(`TRUNCATE outbox`)
	require.NoError(t, err)
	s := agentstate.NewStore(conn)
	a := newUsers(t, conn, user.GroupCallCenter, 1, 0)[0]
	ctx := context.Background()
	require.NoError(t, s.Apply(ctx, []agentstate.Event{event("n1", a, now, "available"), event("n3", a, now.Add(2*time.Minute), "on-call")}))
	// Late (between the two) and a repeat: the repeat announces nothing.
	require.NoError(t, s.Apply(ctx, []agentstate.Event{event("n2", a, now.Add(time.Minute), "paused"), event("n1", a, now, "available")}))

	var rows []struct {
		Key  string `db:"routing_key"`
		Body []byte `db:"body"`
	}
	require.NoError(t, conn.Select(&rows, `SELECT routing_key, body FROM outbox ORDER BY id`))
	require.Len(t, rows, 3)
	var states, previous []string
	for _, r := range rows {
		assert.Equal(t, agentstate.EventStateChanged, r.Key)
		var ev struct {
			Data struct {
				UserID        int64   `json:"userId"`
				State         string  `json:"state"`
				PreviousState *string `json:"previousState"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &ev))
		assert.Equal(t, a, ev.Data.UserID)
		states = append(states, ev.Data.State)
		p := "-"
		if ev.Data.PreviousState != nil {
			p = *ev.Data.PreviousState
		}
		previous = append(previous, p)
	}
	assert.Equal(t, []string{"available", "on-call", "paused"}, states)
	assert.Equal(t, []string{"-", "available", "available"}, previous, "a late state follows the older one it comes after")
}

// The listing asks the order service about its agents side by side: each question below waits
// until a second one is open at the same time, which never happens if they are asked in turn.
func TestTheListingAsksForTheAgentsOrdersSideBySide(t *testing.T) {
	conn := openDB(t)
	ids := newUsers(t, conn, user.GroupCallCenter, 3, 0)
	var mu sync.Mutex
	open, two := 0, make(chan struct{})
	orders := func(ctx context.Context, c identity.Caller) ([]int64, error) {
		mu.Lock()
		if open++; open == 2 {
			close(two)
		}
		mu.Unlock()
		select {
		case <-two:
			return []int64{c.UserID * 10}, nil
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("no other question was asked while the one for %d was open", c.UserID)
		}
	}
	e := gin.New()
	agentstate.NewHandler(agentstate.NewStore(conn), orders, func() time.Time { return now }).Routes(e)
	q := url.Values{}
	for _, id := range ids {
		q.Add("userIds[]", fmt.Sprint(id))
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v2/agent/state?"+q.Encode(), nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var body struct {
		Data struct {
			List []agentstate.View `json:"list"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Len(t, body.Data.List, len(ids))
	for _, v := range body.Data.List {
		assert.Equal(t, []int64{v.UserID * 10}, v.Orders, "each agent gets its own answer")
	}
}
