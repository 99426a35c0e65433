package web

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
)

func TestClientIPIsTheFirstForwardedAddress(t *testing.T) {
	for _, tc := range []struct {
		forwarded, real string
		want            *string
	}{
		{"203.0.113.7, 10.0.0.1", "", ptr("203.0.113.7")},
		{" 2001:db8::1 ", "", ptr("2001:db8::1")},
		{"", "198.51.100.4", ptr("198.51.100.4")},
		{"not-an-ip", "198.51.100.4", ptr("198.51.100.4")},
		{"unknown", "", nil},
		{"", "", nil},
	} {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/", nil)
		c.Request.Header.Set("X-Forwarded-For", tc.forwarded)
		c.Request.Header.Set("X-Real-IP", tc.real)
		assert.Equal(t, tc.want, ClientIP(c), "%q %q", tc.forwarded, tc.real)
	}
}

func ptr(s string) *string { return &s }
