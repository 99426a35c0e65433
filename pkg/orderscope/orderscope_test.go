package orderscope

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNarrow(t *testing.T) {
	all := Scope{All: true}
	ids, none := all.Narrow(nil)
	assert.Nil(t, ids)
	assert.False(t, none)
	ids, _ = all.Narrow([]int64{4})
	assert.Equal(t, []int64{4}, ids)

	mine := Scope{OrderIDs: []int64{1, 2}}
	ids, none = mine.Narrow(nil)
	assert.Equal(t, []int64{1, 2}, ids)
	assert.False(t, none)
	ids, none = mine.Narrow([]int64{2, 3})
	assert.Equal(t, []int64{2}, ids)
	assert.False(t, none)
	_, none = mine.Narrow([]int64{3})
	assert.True(t, none, "a filter naming only others' orders matches nothing")
	_, none = Scope{}.Narrow(nil)
	assert.True(t, none, "no order at all")
	assert.True(t, mine.Contains(1))
	assert.False(t, mine.Contains(3))
	assert.True(t, all.Contains(3))
}

// The order service is a stand-in here: what is tested is the client's caching and its request.
func TestResolverAsksOnceWithinTheTTL(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		assert.Equal(t, "/internal/order-scope", r.URL.Path)
		assert.Equal(t, "7", r.URL.Query().Get("userId"))
		assert.Equal(t, "client", r.URL.Query().Get("accessGroup"))
		_, _ = w.Write([]byte(`{"success":true,"message":"","data":{"all":false,"orderIds":[3,5]}}`))
	}))
	defer srv.Close()
	r := New(svcclient.New("order", srv.URL, "t", time.Second), time.Minute)
	now := time.Now()
	r.now = func() time.Time { return now }
	caller := web.Caller{UserID: 7, AccessGroup: "client"}
	for range 3 {
		s, err := r.For(context.Background(), caller)
		require.NoError(t, err)
		assert.Equal(t, []int64{3, 5}, s.OrderIDs)
	}
	assert.Equal(t, int32(1), calls.Load())
	now = now.Add(2 * time.Minute)
	_, err := r.For(context.Background(), caller)
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load(), "asked again once expired")
	r.Clear()
	_, err = r.For(context.Background(), caller)
	require.NoError(t, err)
	assert.Equal(t, int32(3), calls.Load(), "asked again once cleared")

	for _, c := range []web.Caller{{}, {UserID: 1, AccessGroup: "admin"}, {UserID: 2, AccessGroup: "arbitration"}} {
		s, err := r.For(context.Background(), c)
		require.NoError(t, err)
		assert.True(t, s.All, "%+v: sees every order without asking", c)
	}
	assert.Equal(t, int32(3), calls.Load())
}

func TestShowsContacts(t *testing.T) {
	s := Scope{OrderIDs: []int64{1, 2}, HiddenContacts: []int64{2}}
	assert.True(t, s.ShowsContacts(1))
	assert.False(t, s.ShowsContacts(2), "the order hides contacts from agents")
	assert.False(t, s.ShowsContacts(3), "outside the scope")
	assert.True(t, Scope{All: true}.ShowsContacts(3))
}
