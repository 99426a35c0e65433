// Package urlguard keeps webhook deliveries from reaching inside the platform's network (SSRF): an
// endpoint must be https (http only where allowed for development) and may not resolve to a
// loopback, private, link-local or otherwise internal address (unless allowed for tests). The check
// runs when a subscription is saved and again on every connection the dispatcher opens, on the
// address actually dialed, so a name that resolves elsewhere later (DNS rebinding) is caught.
package urlguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Policy is what the deployment allows (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE); the zero value
// is the secure default.
type Policy struct {
	AllowHTTP    bool
	AllowPrivate bool
	// Resolver looks names up; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// ErrInternal is the refusal of an address inside the network.
var ErrInternal = errors.New("resolves to a loopback, private, link-local or other internal address")

// CheckURL refuses raw unless it is an absolute http(s) URL the policy allows, without user info or
// fragment, whose host resolves only to public addresses. The error is the rule broken, for the
// caller to name the field.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return errors.New("must be an absolute URL (https://host/path)")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return errors.New("must use https")
	default:
		return errors.New("must be an https URL")
	}
	if u.User != nil || u.Fragment != "" {
		return errors.New("must not hold user info or a fragment")
	}
	if p.AllowPrivate {
		return nil
	}
	addrs, err := p.lookup(ctx, u.Hostname())
	if err != nil {
		return fmt.Errorf("host %s does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if Internal(a) {
			return fmt.Errorf("host %s %w", u.Hostname(), ErrInternal)
		}
	}
	return nil
}

func (p Policy) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errors.New("no address")
	}
	return addrs, nil
}

// Internal reports whether a is an address no webhook may reach: loopback, private (RFC 1918,
// fc00::/7), link-local (cloud metadata at 169.254.169.254), unspecified, multicast, CGNAT
// (100.64.0.0/10) and the IPv4 forms hidden in IPv6.
func Internal(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsValid() ||
		cgnat.Contains(a) || (a.Is6() && nat64.Contains(a))
}

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// Control is a net.Dialer Control that refuses, at connect time, an internal address (unless the
// policy allows them): whatever the name resolved to this time is what is checked.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	if p.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("urlguard: dial %s: %w", address, err)
	}
	if Internal(ap.Addr()) {
		return fmt.Errorf("urlguard: dial %s: %w", address, ErrInternal)
	}
	return nil
}
