package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckPlaceholder(t *testing.T) {
	for _, ok := range []string{"", "https://img.example.com/none.png", "http://127.0.0.1:9000/a.svg"} {
		assert.NoError(t, checkPlaceholder(ok), ok)
	}
	for _, bad := range []string{"placeholder.png", "/avatars/none.png", "ftp://example.com/a.png", "https://", "::"} {
		assert.Error(t, checkPlaceholder(bad), bad)
	}
}
