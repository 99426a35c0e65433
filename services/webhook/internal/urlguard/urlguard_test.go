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
		"http://93.184.215.14/hook":             "must use https",
		"ftp://93.184.215.14/hook":              "must be an https URL",
		"https:///path":                         "must be an absolute URL",
		"/relative":                             "must be an absolute URL",
		"https://u:p@93.184.215.14/":            "must not hold user info",
		"https://127.0.0.1/hook":                "special-purpose address",
		"https://10.1.2.3/hook":                 "special-purpose address",
		"https://169.254.169.254/":              "special-purpose address",
		"https://[::1]/":                        "special-purpose address",
		"https://[::ffff:192.168.1.1]/":         "special-purpose address",
		"https://100.64.0.1/":                   "special-purpose address",
		"https://localhost/":                    "special-purpose address",
		"https://[::127.0.0.1]/":                "special-purpose address",
		"https://[::ffff:0:127.0.0.1]/":         "special-purpose address",
		"https://[2002:7f00:1::]/":              "special-purpose address",
		"https://[64:ff9b:1::7f00:1]/":          "special-purpose address",
		"https://0.1.2.3/":                      "special-purpose address",
		"https://255.255.255.255/":              "special-purpose address",
		"https://240.0.0.1/":                    "special-purpose address",
		"https://198.18.0.1/":                   "special-purpose address",
		"https://192.0.0.1/":                    "special-purpose address",
		"https://no-such-host.invalid/":         "does not resolve",
		"https://93.184.215.14:8443/hooks?x=1":  "port 8443 is not allowed",
		"https://93.184.215.14:22/":             "must use port 443",
		"https://[2606:2800:21f:cb07::1]:80/":   "port 80 is not allowed",
		"https://93.184.215.14:99999999999999/": "is not allowed",
	} {
		err := strict.CheckURL(ctx, raw)
		if assert.Error(t, err, raw) {
			assert.Contains(t, err.Error(), rule, raw)
		}
	}
	assert.NoError(t, strict.CheckURL(ctx, "https://93.184.215.14/hooks?x=1"))
	assert.NoError(t, strict.CheckURL(ctx, "https://93.184.215.14:443/hooks"))
	assert.NoError(t, strict.CheckURL(ctx, "https://[2606:2800:21f:cb07::1]/"))
	assert.NoError(t, urlguard.Policy{Ports: []int{443, 8443}}.CheckURL(ctx, "https://93.184.215.14:8443/hooks"))

	dev := urlguard.Policy{AllowHTTP: true, AllowPrivate: true}
	assert.NoError(t, dev.CheckURL(ctx, "http://127.0.0.1:9000/hook"))
	assert.ErrorContains(t, urlguard.Policy{AllowHTTP: true, Ports: []int{9000}}.CheckURL(ctx, "http://127.0.0.1:9000/hook"), "special-purpose address")
}

// Every address that is, embeds or maps to a non-public IPv4, and every special-purpose range of
// both IANA registries, is internal; public addresses in any of the embedding forms are not.
func TestInternal(t *testing.T) {
	for _, raw := range []string{
		// IPv4 special-purpose registry
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.254", "127.0.0.1", "169.254.169.254",
		"172.16.0.1", "172.31.255.255", "192.0.0.1", "192.0.0.170", "192.0.2.1", "192.31.196.1",
		"192.52.193.1", "192.88.99.1", "192.168.1.1", "192.175.48.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.1", "203.0.113.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		// IPv6 special-purpose registry and everything outside global unicast
		"::", "::1", "100::1", "100:0:0:1::1", "2001::1", "2001:2::1", "2001:10::1", "2001:20::1",
		"2001:db8::1", "2620:4f:8000::1", "3fff::1", "5f00::1", "fc00::1", "fd00::1", "fe80::1",
		"fec0::1", "ff02::1", "4000::1",
		// IPv4 hidden in IPv6
		"::127.0.0.1", "::8.8.8.8", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:0:127.0.0.1",
		"2002:7f00:1::", "2002:a00:1::1", "2002:c0a8:101::", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
		"64:ff9b:1::7f00:1", "64:ff9b:1::808:808", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
	} {
		assert.True(t, urlguard.Internal(netip.MustParseAddr(raw)), raw)
	}
	for _, raw := range []string{
		"8.8.8.8", "93.184.215.14", "1.1.1.1", "::ffff:8.8.8.8", "2002:808:808::1", "64:ff9b::808:808",
		"2606:2800:21f:cb07::1", "2001:4860:4860::8888", "2a00:1450:4001:82b::200e",
	} {
		assert.False(t, urlguard.Internal(netip.MustParseAddr(raw)), raw)
	}
	assert.True(t, urlguard.Internal(netip.Addr{}), "the zero address")
	assert.True(t, urlguard.Internal(netip.MustParseAddr("fe80::1%eth0")), "a zoned address")
}

func TestControlChecksTheAddressActuallyDialed(t *testing.T) {
	strict := urlguard.Policy{}
	assert.ErrorIs(t, strict.Control("tcp", "127.0.0.1:443", nil), urlguard.ErrInternal)
	assert.ErrorIs(t, strict.Control("tcp", "[fd00::1]:443", nil), urlguard.ErrInternal)
	assert.ErrorIs(t, strict.Control("tcp", "[::ffff:0:7f00:1]:443", nil), urlguard.ErrInternal)
	assert.ErrorIs(t, strict.Control("tcp", "93.184.215.14:8443", nil), urlguard.ErrPort)
	assert.NoError(t, strict.Control("tcp", "93.184.215.14:443", nil))
	assert.NoError(t, urlguard.Policy{Ports: []int{8443}}.Control("tcp", "93.184.215.14:8443", nil))
	assert.NoError(t, urlguard.Policy{AllowPrivate: true}.Control("tcp", "127.0.0.1:9000", nil))
}
