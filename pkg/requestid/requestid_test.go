package requestid

import (
	"context"
	"strings"
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

func TestValid(t *testing.T) {
	for _, id := range []string{"abc", "3f1c2a9e-0d4b-4c1e-9f0a-1b2c3d4e5f60", "req.42:retry_1", strings.Repeat("a", MaxLen)} {
		assert.True(t, Valid(id), id)
	}
	for _, id := range []string{"", "<script>x</script>", "../../etc", "a b", "a\tb", "ид", "a/b", "a\x00", strings.Repeat("a", MaxLen+1)} {
		assert.False(t, Valid(id), "%q", id)
	}
}
