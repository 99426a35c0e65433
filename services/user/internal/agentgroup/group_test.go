package agentgroup

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func input(t *testing.T, body string) Input {
	t.Helper()
	var in Input
	require.NoError(t, web.Unmarshal([]byte(body), &in))
	return in
}

func fields(t *testing.T, err error) apperr.FieldErrors {
	t.Helper()
	e, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, apperr.Invalid, e.Kind)
	return e.Fields
}

func TestCheckCreate(t *testing.T) {
	ch, err := input(t, `{"names": {"ru": " Продажи ", "gb": "Sales", "de": "ignored"}, "agentIds": [3, 1, 3], "extra": 1}`).CheckCreate()
	require.NoError(t, err)
	assert.Equal(t, "Продажи", *ch.NameRU, "trimmed")
	assert.Equal(t, "Sales", *ch.NameGB)
	assert.Equal(t, []int64{3, 1}, *ch.AgentIDs, "repeats dropped, first kept")

	ch, err = input(t, `{"names": {"ru": "a", "gb": "b"}, "agentIds": []}`).CheckCreate()
	require.NoError(t, err)
	assert.Equal(t, []int64{}, *ch.AgentIDs, "a group may start without agents")
}

func TestCheckCreateRefuses(t *testing.T) {
	long := strings.Repeat("я", MaxNameLength+1)
	tests := map[string]struct {
		body string
		want apperr.FieldErrors
	}{
		"empty body":      {`{}`, apperr.FieldErrors{"names": "is required", "agentIds": "is required"}},
		"no names":        {`{"agentIds": [1]}`, apperr.FieldErrors{"names": "is required"}},
		"names null":      {`{"names": null, "agentIds": [1]}`, apperr.FieldErrors{"names": "must be an object with ru and gb, not null"}},
		"no ru":           {`{"names": {"gb": "b"}, "agentIds": [1]}`, apperr.FieldErrors{"names.ru": "is required"}},
		"no gb":           {`{"names": {"ru": "a"}, "agentIds": [1]}`, apperr.FieldErrors{"names.gb": "is required"}},
		"empty names":     {`{"names": {}, "agentIds": [1]}`, apperr.FieldErrors{"names.ru": "is required", "names.gb": "is required"}},
		"blank ru":        {`{"names": {"ru": "  ", "gb": "b"}, "agentIds": [1]}`, apperr.FieldErrors{"names.ru": "must not be empty"}},
		"null gb":         {`{"names": {"ru": "a", "gb": null}, "agentIds": [1]}`, apperr.FieldErrors{"names.gb": "must be a non-empty string, not null"}},
		"long gb":         {`{"names": {"ru": "a", "gb": "` + long + `"}, "agentIds": [1]}`, apperr.FieldErrors{"names.gb": "must be at most 255 characters"}},
		"no agents":       {`{"names": {"ru": "a", "gb": "b"}}`, apperr.FieldErrors{"agentIds": "is required"}},
		"agents null":     {`{"names": {"ru": "a", "gb": "b"}, "agentIds": null}`, apperr.FieldErrors{"agentIds": "must be an array of user ids, not null"}},
		"agent zero":      {`{"names": {"ru": "a", "gb": "b"}, "agentIds": [1, 0]}`, apperr.FieldErrors{"agentIds": "must contain only integers > 0"}},
		"agent negative":  {`{"names": {"ru": "a", "gb": "b"}, "agentIds": [-2]}`, apperr.FieldErrors{"agentIds": "must contain only integers > 0"}},
		"every rule once": {`{"names": {"ru": ""}, "agentIds": [0]}`, apperr.FieldErrors{"names.ru": "must not be empty", "names.gb": "is required", "agentIds": "must contain only integers > 0"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := input(t, tc.body).CheckCreate()
			assert.Equal(t, tc.want, fields(t, err))
		})
	}
}

func TestCheckCreateTooManyAgents(t *testing.T) {
	ids := make([]int64, MaxAgents+1)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	b, err := json.Marshal(map[string]any{"names": map[string]string{"ru": "a", "gb": "b"}, "agentIds": ids})
	require.NoError(t, err)
	_, err = input(t, string(b)).CheckCreate()
	assert.Equal(t, apperr.FieldErrors{"agentIds": "must have at most 1000 elements"}, fields(t, err))
}

func TestCheckUpdateIsPartial(t *testing.T) {
	ch, err := input(t, `{}`).CheckUpdate()
	require.NoError(t, err)
	assert.True(t, ch.Empty())

	ch, err = input(t, `{"names": {"gb": "Support"}}`).CheckUpdate()
	require.NoError(t, err)
	assert.Nil(t, ch.NameRU, "the unsent language keeps its name")
	assert.Equal(t, "Support", *ch.NameGB)
	assert.Nil(t, ch.AgentIDs, "unsent agents are kept")
	assert.False(t, ch.Empty())

	ch, err = input(t, `{"names": {}}`).CheckUpdate()
	require.NoError(t, err)
	assert.True(t, ch.Empty(), "names without a language changes nothing")

	ch, err = input(t, `{"agentIds": []}`).CheckUpdate()
	require.NoError(t, err)
	assert.Equal(t, []int64{}, *ch.AgentIDs, "[] removes every agent")
	assert.Nil(t, ch.NameRU)

	for body, want := range map[string]apperr.FieldErrors{
		`{"names": null}`:                         {"names": "must be an object with ru and gb, not null"},
		`{"names": {"ru": ""}}`:                   {"names.ru": "must not be empty"},
		`{"names": {"gb": null}}`:                 {"names.gb": "must be a non-empty string, not null"},
		`{"agentIds": null}`:                      {"agentIds": "must be an array of user ids, not null"},
		`{"agentIds": [5, -1]}`:                   {"agentIds": "must contain only integers > 0"},
		`{"names": {"ru": "a"}, "agentIds": [0]}`: {"agentIds": "must contain only integers > 0"},
	} {
		_, err := input(t, body).CheckUpdate()
		assert.Equal(t, want, fields(t, err), body)
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	for body, field := range map[string]string{
		`{"names": {"ru": 5}}`: "names.ru",
		`{"names": "Sales"}`:   "names",
		`{"agentIds": ["1"]}`:  "agentIds[0]",
		`{"agentIds": 1}`:      "agentIds",
		`{"agentIds": [1.5]}`:  "agentIds[0]",
	} {
		var in Input
		err := web.Unmarshal([]byte(body), &in)
		assert.Contains(t, fields(t, err), field, body)
	}
}

func TestParseListQuery(t *testing.T) {
	for query, want := range map[string]Filter{
		"":                            {Limit: 50},
		"agentId=":                    {Limit: 50},
		"agentId=7":                   {AgentID: ptr(int64(7)), Limit: 50},
		"agentId=7&offset=2&limit=10": {AgentID: ptr(int64(7)), Offset: 2, Limit: 10},
	} {
		q, err := url.ParseQuery(query)
		require.NoError(t, err)
		f, page, err := ParseListQuery(q)
		require.NoError(t, err, query)
		assert.Equal(t, want, f, query)
		assert.Equal(t, listquery.Page{Offset: want.Offset, Limit: want.Limit}, page)
	}
	for query, field := range map[string]string{
		"agentId=0":   "agentId",
		"agentId=-4":  "agentId",
		"agentId=abc": "agentId",
		"limit=500":   "limit",
		"offset=-1":   "offset",
	} {
		q, err := url.ParseQuery(query)
		require.NoError(t, err)
		_, _, err = ParseListQuery(q)
		assert.Contains(t, fields(t, err), field, query)
	}
}

func TestViewOf(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	v := ViewOf(Group{ID: 3, Names: Names{RU: "Продажи", GB: "Sales"},
		CreatedAt: time.Date(2026, 11, 21, 13, 0, 0, 0, msk), UpdatedAt: time.Date(2026, 11, 22, 3, 0, 1, 0, msk)})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id": 3, "names": {"ru": "Продажи", "gb": "Sales"}, "agentIds": [],
		"createdAt": "2026-11-21T10:00:00+00:00", "updatedAt": "2026-11-22T00:00:01+00:00"}`, string(b))
}

func TestJoinIDs(t *testing.T) {
	assert.Equal(t, "3, 7", joinIDs([]int64{3, 7}))
}

func ptr[T any](v T) *T { return &v }
