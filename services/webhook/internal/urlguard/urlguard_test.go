package urlguard_test

import (
	"context"
	"net/netip"
	"testing"

	"ccplatform/services/webhook/internal/urlguard"

	"github.com/stretchr/testify/assert"
)

func TestCheckURLRefusesWhatTheSecureDefaultsForbid(t *testing.T) {
	ctx := context.Background()
	strict := urlguard.Policy{}
	for raw, rule := range map[string]string{
		"http://93.184.215.14/hook":     "must use https",
		"ftp://93.184.215.14/hook":      "must be an https URL",
		"https:///path":                 "must be an absolute URL",
		"/relative":                     "must be an absolute URL",
		"https://u:p@93.184.215.14/":    "must not hold user info",
		"https://127.0.0.1/hook":        "internal address",
		"https://10.1.2.3/hook":         "internal address",
		"https://169.254.169.254/":      "internal address",
		"https://[::1]:8443/":           "internal address",
		"https://[::ffff:192.168.1.1]/": "internal address",
		"https://100.64.0.1/":           "internal address",
		"https://localhost/":            "internal address",
		"https://no-such-host.invalid/": "does not resolve",
	} {
		err := strict.CheckURL(ctx, raw)
		if assert.Error(t, err, raw) {
			assert.Contains(t, err.Error(), rule, raw)
		}
	}
	assert.NoError(t, strict.CheckURL(ctx, "https://93.184.215.14:8443/hooks?x=1"))

	dev := urlguard.Policy{AllowHTTP: true, AllowPrivate: true}
	assert.NoError(t, dev.CheckURL(ctx, "http://127.0.0.1:9000/hook"))
	assert.ErrorContains(t, urlguard.Policy{AllowHTTP: true}.CheckURL(ctx, "http://127.0.0.1:9000/hook"), "internal address")
}

func TestControlChecksTheAddressActuallyDialed(t *testing.T) {
	strict := urlguard.Policy{}
	assert.ErrorIs(t, strict.Control("tcp", "127.0.0.1:443", nil), urlguard.ErrInternal)
	assert.ErrorIs(t, strict.Control("tcp", "[fd00::1]:443", nil), urlguard.ErrInternal)
	assert.NoError(t, strict.Control("tcp", "93.184.215.14:443", nil))
	assert.NoError(t, urlguard.Policy{AllowPrivate: true}.Control("tcp", "127.0.0.1:443", nil))
	assert.True(t, urlguard.Internal(netip.MustParseAddr("0.0.0.0")))
	assert.False(t, urlguard.Internal(netip.MustParseAddr("8.8.8.8")))
}
