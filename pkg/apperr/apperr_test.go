package apperr

import (
	"errors"
	"fmt"
	"net/http"
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
