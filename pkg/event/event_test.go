package event_test

import (
	"testing"

	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandReadsOneEventOrAGroup(t *testing.T) {
	a, err := event.New("lead.created", 7, map[string]any{"id": 1})
	require.NoError(t, err)
	b, err := event.New("lead.created", 7, map[string]any{"id": 2})
	require.NoError(t, err)
	ma, err := a.Message()
	require.NoError(t, err)
	mb, err := b.Message()
	require.NoError(t, err)

	evs, bad, err := event.Expand("lead.created", ma.Body)
	require.NoError(t, err)
	assert.Empty(t, bad)
	require.Len(t, evs, 1)
	assert.Equal(t, a.ID, evs[0].ID)

	broken := []byte(`{"type":"lead.created"}`)
	evs, bad, err = event.Expand(event.GroupType, mq.JoinGroup([][]byte{ma.Body, broken, mb.Body}))
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, []string{a.ID, b.ID}, []string{evs[0].ID, evs[1].ID})
	assert.Equal(t, [][]byte{broken}, bad, "an item without an id is set apart")

	_, _, err = event.Expand(event.GroupType, []byte(`{`))
	assert.Error(t, err)
	_, _, err = event.Expand("lead.created", []byte(`[]`))
	assert.Error(t, err)
}
