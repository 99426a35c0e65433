package contacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"+79161234567":  "+7********67",
		"79161234567":   "7********67",
		"+442079460958": "+44********58",
		"+12025550143":  "+1********43",
		"12":            "**",
		"not a phone":   "*********ne",
	} {
		assert.Equal(t, want, Mask(in), in)
	}
	assert.Nil(t, MaskPtr(nil))
	s := "+79161234567"
	assert.Equal(t, "+7********67", *MaskPtr(&s))
	assert.Equal(t, "+79161234567", s, "the original is kept")
}
