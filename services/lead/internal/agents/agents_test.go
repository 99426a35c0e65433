package agents

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnAnswerIsKeptForItsQuestionWhateverTheOrderOfIDs(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	d := NewDirectory(nil, time.Second)
	d.now = func() time.Time { return now }
	list := []Agent{{UserID: 2, State: StateAvailable, PhoneMode: PhoneModePredictive}}
	d.Remember([]int64{2, 1, 2}, []int64{9}, list)

	got, err := d.Eligible(context.Background(), []int64{1, 2}, []int64{9})
	require.NoError(t, err)
	assert.Equal(t, list, got)

	_, err = d.Eligible(context.Background(), []int64{1}, []int64{9})
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err), "another question; no user service")

	now = now.Add(time.Second)
	_, err = d.Eligible(context.Background(), []int64{1, 2}, []int64{9})
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err), "a second later the answer is asked again")
}

func TestNoAgentsNeedNoQuestion(t *testing.T) {
	got, err := NewDirectory(nil, 0).Eligible(context.Background(), nil, []int64{})
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.NotNil(t, got)
}
