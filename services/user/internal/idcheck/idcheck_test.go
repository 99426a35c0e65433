package idcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUniqueKeepsFirstOccurrences(t *testing.T) {
	assert.Equal(t, []int64{3, 1, 2}, Unique([]int64{3, 1, 3, 2, 1}))
	assert.Equal(t, []int64{}, Unique(nil))
}
