package requestid

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithAndFrom(t *testing.T) {
	assert.Equal(t, "", From(context.Background()))
	ctx := With(context.Background(), "abc")
	assert.Equal(t, "abc", From(ctx))
	assert.Equal(t, "def", From(With(ctx, "def")))
	assert.Equal(t, "X-Request-Id", Header)
}
