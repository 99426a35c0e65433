package apikey

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		k, err := Generate()
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(k, "cck_"), k)
		assert.Len(t, k, 4+64)
		assert.True(t, WellFormed(k), k)
		assert.False(t, seen[k], "keys repeat")
		seen[k] = true
	}
}

func TestHash(t *testing.T) {
	const key = "cck_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	sum := sha256.Sum256([]byte(key))
	assert.Equal(t, hex.EncodeToString(sum[:]), Hash(key), "sha256 hex of the whole key")
	assert.Equal(t, Hash(key), Hash(key))
	assert.NotEqual(t, Hash(key), Hash(key[:len(key)-1]+"0"))
	assert.Len(t, Hash(key), 64)
	assert.NotContains(t, Hash(key), key[4:], "the hash must not reveal the key")
}

func TestPrefix(t *testing.T) {
	const key = "cck_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	assert.Equal(t, "cck_01234567", Prefix(key))
	assert.Equal(t, "short", Prefix("short"))
}

func TestWellFormed(t *testing.T) {
	good := "cck_" + strings.Repeat("a1", 32)
	tests := map[string]struct {
		key  string
		want bool
	}{
		"ok":           {good, true},
		"empty":        {"", false},
		"no scheme":    {strings.Repeat("a1", 34), false},
		"other scheme": {"abc_" + strings.Repeat("a1", 32), false},
		"too short":    {good[:len(good)-1], false},
		"too long":     {good + "0", false},
		"upper hex":    {"cck_" + strings.Repeat("A1", 32), false},
		"not hex":      {"cck_" + strings.Repeat("g1", 32), false},
		"scheme only":  {"cck_", false},
		"multibyte":    {"cck_" + strings.Repeat("я", 32), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, WellFormed(tc.key))
		})
	}
}
