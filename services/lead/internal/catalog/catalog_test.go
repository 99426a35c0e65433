package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusRules(t *testing.T) {
	s := Statuses{
		1: {ID: 1, Code: "new", Category: CategoryInProgress},
		4: {ID: 4, Code: "qualified", Category: CategorySuccess},
		5: {ID: 5, Code: "rejected", Category: CategoryFailure},
	}
	id, ok := s.Default()
	assert.True(t, ok)
	assert.Equal(t, int64(1), id)
	assert.Empty(t, s.CheckForCreate(1))
	assert.Contains(t, s.CheckForCreate(4), "only statuses of category in_progress")
	assert.Contains(t, s.CheckForCreate(5), "not allowed on create")
	assert.Equal(t, "no lead status has id 9", s.CheckForCreate(9))
	assert.Empty(t, s.CheckForUpdate(4))
	assert.Empty(t, s.CheckForUpdate(5))
	assert.Equal(t, "no lead status has id 9", s.CheckForUpdate(9))
	_, ok = Statuses{}.Default()
	assert.False(t, ok)
}
