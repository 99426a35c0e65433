// Package urlguard keeps webhook deliveries from reaching inside the platform's network (SSRF): an
// endpoint must be https (http only where allowed for development), on an allowed port, and may not
// resolve to a loopback, private, link-local or any other special-purpose address (unless allowed
// for tests). The check runs when a subscription is saved and again on every connection the
// dispatcher opens, on the address actually dialed, so a name that resolves elsewhere later (DNS
// rebinding) is caught.
package urlguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy is what the deployment allows (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE,
// WEBHOOK_ALLOW_PORTS); the zero value is the secure default.
type Policy struct {
	AllowHTTP bool
	// AllowPrivate lifts the address rule and the port rule (tests and development run receivers
	// on loopback, on whatever port they got).
	AllowPrivate bool
	// Ports are the ports an endpoint may use; none means DefaultPorts.
	Ports []int
	// Resolver looks names up; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// DefaultPorts are the ports allowed when none are configured: https's own. Any other port would
// let a subscription probe services that listen on the public addresses of the platform's hosts.
var DefaultPorts = []int{443}

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// ErrInternal is the refusal of an address inside the network.
var ErrInternal = errors.New("resolves to a loopback, private, link-local or other special-purpose address")

// ErrPort is the refusal of a port the policy does not allow.
var ErrPort = errors.New("port not allowed")

// CheckURL refuses raw unless it is an absolute http(s) URL the policy allows, without user info or
// fragment, on an allowed port, whose host resolves only to public addresses. The error is the
// rule broken, for the caller to name the field.
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
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if raw := u.Port(); raw != "" {
		if port, err = strconv.Atoi(raw); err != nil {
			return errors.New("must be an absolute URL (https://host/path)")
		}
	}
	if !p.portAllowed(port) {
		return fmt.Errorf("must use port %s (port %d is not allowed)", p.portNames(), port)
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

func (p Policy) ports() []int {
	if len(p.Ports) == 0 {
		return DefaultPorts
	}
	return p.Ports
}

func (p Policy) portAllowed(port int) bool { return slices.Contains(p.ports(), port) }

func (p Policy) portNames() string {
	names := make([]string, 0, len(p.ports()))
	for _, n := range p.ports() {
		names = append(names, strconv.Itoa(n))
	}
	return strings.Join(names, " or ")
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

// Internal reports whether a is an address no webhook may reach: every range of the IANA IPv4 and
// IPv6 special-purpose address registries (loopback, private, link-local, CGNAT, documentation,
// benchmarking, reserved, multicast, ...), every IPv6 address outside global unicast (2000::/3),
// and every IPv6 address that carries a non-public IPv4 (mapped, compatible, SIIT, 6to4, NAT64).
// Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48) are refused whole: their IPv4 is
// obfuscated or chosen by the local network.
func Internal(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return true
	}
	if a.Is4In6() {
		return internal4(a.Unmap())
	}
	if a.Is4() {
		return internal4(a)
	}
	if v4, ok := embedded4(a); ok {
		return internal4(v4)
	}
	if !globalUnicast6.Contains(a) {
		return true // ::/8 (with ::/96 IPv4-compatible), 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, ff00::/8, ...
	}
	return slices.ContainsFunc(special6, func(p netip.Prefix) bool { return p.Contains(a) })
}

// embedded4 is the IPv4 address a 6to4, well-known NAT64 or SIIT address stands for.
func embedded4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case nat64.Contains(a), siit.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	return netip.Addr{}, false
}

func internal4(a netip.Addr) bool {
	return slices.ContainsFunc(special4, func(p netip.Prefix) bool { return p.Contains(a) })
}

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	siit           = netip.MustParsePrefix("::ffff:0:0:0/96")

	// special4 is the IANA IPv4 special-purpose address registry, with multicast and the rest of
	// class E (240.0.0.0/4, the limited broadcast included).
	special4 = prefixes(
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24",
		"192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4",
	)
	// special6 is the part of the IANA IPv6 special-purpose address registry inside 2000::/3
	// (2001::/23 holds Teredo, benchmarking, ORCHID and the other protocol assignments; 2002::/16
	// is checked on its IPv4 before).
	special6 = prefixes("2001::/23", "2001:db8::/32", "2620:4f:8000::/48", "3fff::/20")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Control is a net.Dialer Control that refuses, at connect time, an internal address or a port
// the policy does not allow (unless the policy allows private addresses): whatever the name
// resolved to this time is what is checked.
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
	if !p.portAllowed(int(ap.Port())) {
		return fmt.Errorf("urlguard: dial %s: %w", address, ErrPort)
	}
	return nil
}
