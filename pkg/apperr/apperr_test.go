package apperr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldErrorsMessageIsSortedAndKeepsFirstRule(t *testing.T) {
	fe := FieldErrors{}
	fe.Add("title", "is required")
	fe.Add("code", "must match ^[a-z0-9_-]+$")
	fe.Add("title", "second rule is dropped")
	err := fe.Err()
	require.Error(t, err)
	assert.Equal(t, "code: must match ^[a-z0-9_-]+$; title: is required", err.Error())
	assert.Equal(t, Invalid, KindOf(err))
	assert.Equal(t, http.StatusBadRequest, KindOf(err).Status())
}

func TestEmptyFieldErrorsIsNil(t *testing.T) {
	assert.NoError(t, FieldErrors{}.Err())
}

func TestKindSurvivesWrapping(t *testing.T) {
	err := fmt.Errorf("load order: %w", NotFoundf("order 7 not found"))
	assert.Equal(t, NotFound, KindOf(err))
	assert.Equal(t, Internal, KindOf(errors.New("boom")))
	e, ok := As(err)
	require.True(t, ok)
	assert.Equal(t, "order 7 not found", e.Message)
}

func TestKindForStatusRoundTrips(t *testing.T) {
	for _, k := range []Kind{Invalid, NotFound, Conflict, Unauthorized, Forbidden, Unavailable, TooLarge, RateLimited} {
		assert.Equal(t, k, KindForStatus(k.Status()))
	}
	assert.Equal(t, Invalid, KindForStatus(http.StatusTeapot))
}

func TestEveryKindHasAStatus(t *testing.T) {
	for k := Internal; k <= GatewayTimeout; k++ {
		assert.NotZero(t, k.Status(), "kind %d", k)
	}
	assert.Equal(t, http.StatusInternalServerError, Kind(99).Status(), "an unknown kind is an internal fault")
	assert.Equal(t, GatewayTimeout, KindForStatus(http.StatusGatewayTimeout))
	assert.Equal(t, MethodNotAllowed, KindForStatus(http.StatusMethodNotAllowed))
	assert.Equal(t, BadGateway, KindForStatus(http.StatusBadGateway))
}

func TestWrapKeepsCauseOutOfMessage(t *testing.T) {
	cause := errors.New("pq: relation \"orders\" does not exist")
	err := Wrap(Unavailable, cause, "order store is unavailable")
	assert.Equal(t, "order store is unavailable", err.Message)
	assert.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "relation")
}

func TestFieldShorthands(t *testing.T) {
	err := Field("phone", "must be a phone number in E.164 format")
	e, ok := As(err)
	require.True(t, ok)
	assert.Equal(t, Invalid, e.Kind)
	assert.Equal(t, FieldErrors{"phone": "must be a phone number in E.164 format"}, e.Fields)
	assert.Equal(t, "phone: must be a phone number in E.164 format", e.Message)

	fe := FieldErrors{}
	fe.Addf("limit", "must be at most %d", 100)
	assert.True(t, fe.Has("limit"))
	assert.False(t, fe.Has("offset"))
	assert.Equal(t, "must be at most 100", fe["limit"])

	assert.Equal(t, Conflict, KindOf(Conflictf("code %q is taken", "x")))
	assert.Equal(t, Unavailable, KindOf(Unavailablef("down")))
	_, ok = As(errors.New("plain"))
	assert.False(t, ok)
}

func TestFieldErrorsNameAtMostTwentyFields(t *testing.T) {
	fe := FieldErrors{}
	for i := range 1000 {
		fe.Add(fmt.Sprintf("header column %04d", i+1), "is not a field")
	}
	msg := fe.Err().Error()
	assert.True(t, strings.HasPrefix(msg, "header column 0001: is not a field; header column 0002: "), msg)
	assert.True(t, strings.HasSuffix(msg, "header column 0020: is not a field; and 980 more"), msg)

	shown, more := fe.Bounded()
	assert.Len(t, shown, MaxNamedFields)
	assert.Equal(t, 980, more)
	assert.Equal(t, "is not a field", shown["header column 0020"])
	assert.NotContains(t, shown, "header column 0021")
}

func TestClipBoundsTheJSONText(t *testing.T) {
	assert.Equal(t, "short", Clip("short", 100))
	for _, s := range []string{
		strings.Repeat("a", 5000),
		strings.Repeat("<\x01\"", 5000),
		strings.Repeat("я", 5000),
		strings.Repeat("\xff", 5000),
	} {
		c := Clip(s, 1024)
		b, err := json.Marshal(c)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b)-2, 1024, "%.20q", s)
		assert.Greater(t, len(b)-2, 1024-12, "%.20q: cut no shorter than needed", s)
		assert.True(t, strings.HasSuffix(c, "…"))
	}
	exact := strings.Repeat("a", 1024)
	assert.Equal(t, exact, Clip(exact, 1024), "what fits is left whole")
}
