package callattempt_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"ccplatform/services/order/internal/callattempt"
	"ccplatform/services/order/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "order_callattempt", func(e *servicetest.Env) { env = e })
}

func create(t *testing.T, body any) int64 {
	t.Helper()
	res := env.Do(t, http.MethodPost, "/v2/call-attempt/create/", body)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	require.True(t, res.Success)
	assert.Equal(t, "", res.Message)
	return res.ID()
}

func TestCreate(t *testing.T) {
	id := create(t, map[string]any{"title": "Standard", "intervals": []int{5, 30, 1440}})
	g, found, err := callattempt.NewStore(env.DB).Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, callattempt.Group{ID: id, Title: "Standard", Intervals: []int64{5, 30, 1440}}, g)

	var createdBy int64
	require.NoError(t, env.DB.Get(&createdBy, `SELECT created_by FROM call_attempt_groups WHERE id = $1`, id))
	assert.EqualValues(t, 7, createdBy, "the verified caller is recorded")
}

func TestCreateRefusesBadBodies(t *testing.T) {
	cases := map[string]struct {
		body   string
		fields []string
	}{
		"missing everything": {`{}`, []string{"title", "intervals"}},
		"wrong types":        {`{"title": 5, "intervals": [1]}`, []string{"title"}},
		"interval not int":   {`{"title": "t", "intervals": [1.5]}`, []string{"intervals[0]"}},
		"bad interval":       {`{"title": "t", "intervals": [0]}`, []string{"intervals[0]"}},
		"not an object":      {`[1]`, []string{"body"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := env.Do(t, http.MethodPost, "/v2/call-attempt/create", tc.body)
			assert.Equal(t, http.StatusBadRequest, res.Status)
			assert.False(t, res.Success)
			assert.Len(t, res.Errors(), len(tc.fields))
			for _, f := range tc.fields {
				assert.Contains(t, res.Errors(), f)
			}
		})
	}
}

func TestNewDefaultReplacesOldDefault(t *testing.T) {
	store := callattempt.NewStore(env.DB)
	first := create(t, map[string]any{"title": "A", "intervals": []int{10}, "isDefault": true})
	def, err := store.DefaultID(context.Background())
	require.NoError(t, err)
	require.NotNil(t, def)
	assert.Equal(t, first, *def)

	create(t, map[string]any{"title": "not default", "intervals": []int{10}})
	def, _ = store.DefaultID(context.Background())
	assert.Equal(t, first, *def, "a non-default group leaves the default alone")

	second := create(t, map[string]any{"title": "B", "intervals": []int{10}, "isDefault": true})
	def, _ = store.DefaultID(context.Background())
	assert.Equal(t, second, *def)
	g, _, _ := store.Get(context.Background(), first)
	assert.False(t, g.IsDefault)
}

func TestConcurrentDefaultsLeaveExactlyOne(t *testing.T) {
	const n = 12
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			res := env.Do(t, http.MethodPost, "/v2/call-attempt/create", map[string]any{"title": "race", "intervals": []int{1}, "isDefault": true})
			statuses[i] = res.Status
		})
	}
	wg.Wait()
	for _, s := range statuses {
		assert.Equal(t, http.StatusOK, s)
	}
	var defaults int
	require.NoError(t, env.DB.Get(&defaults, `SELECT count(*) FROM call_attempt_groups WHERE is_default`))
	assert.Equal(t, 1, defaults)
}

func TestCreateIsIdempotent(t *testing.T) {
	body := map[string]any{"title": "once", "intervals": []int{15}}
	a := env.Do(t, http.MethodPost, "/v2/call-attempt/create", body, "Idempotency-Key", "ca-key-1")
	b := env.Do(t, http.MethodPost, "/v2/call-attempt/create", body, "Idempotency-Key", "ca-key-1")
	require.Equal(t, http.StatusOK, a.Status)
	require.Equal(t, http.StatusOK, b.Status)
	assert.Equal(t, a.ID(), b.ID())
	assert.Equal(t, "true", b.Header.Get("Idempotent-Replayed"))

	c := env.Do(t, http.MethodPost, "/v2/call-attempt/create", map[string]any{"title": "other", "intervals": []int{15}}, "Idempotency-Key", "ca-key-1")
	assert.Equal(t, http.StatusConflict, c.Status)
}
