package lead

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpdateEventsNameTheChangedFieldsAsTheAPIDoes(t *testing.T) {
	name := "A"
	by := int64(3)
	before := Lead{ID: 1, OrderID: 2, Phone: "+79161230001", Name: &name, StatusID: 1,
		CustomValues: CustomValues{"5": json.RawMessage(`1`)}, UpdatedAt: time.Unix(100, 0)}
	after := before
	after.Name, after.StatusID, after.UpdatedAt, after.DoNotCall = nil, 5, time.Unix(200, 0), true
	after.CustomValues = CustomValues{"5": json.RawMessage(`2`)}

	evs, err := updateEvents(before, after, &by)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, EventUpdated, evs[0].Type)
	assert.Equal(t, []string{"customValues", "name", "statusId"}, evs[0].ChangedFields,
		"sorted; updatedAt and doNotCall are not the update's")
	assert.Equal(t, int64(3), evs[0].ActorUserID)
	assert.Equal(t, "1970-01-01T00:03:20+00:00", evs[0].OccurredAt, "when the lead changed")
	assert.Equal(t, EventStatusChanged, evs[1].Type)
	require.NotNil(t, evs[1].PreviousStatusID)
	assert.Equal(t, int64(1), *evs[1].PreviousStatusID)

	same := before
	same.UpdatedAt = after.UpdatedAt
	evs, err = updateEvents(before, same, &by)
	require.NoError(t, err)
	assert.Empty(t, evs, "a write that changed no value announces nothing")
}
