package apikey

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/access"
)

// ParseExpiry reads when a key ends: "90d" (days from now), a date "2027-01-31" (the key works
// through that day, UTC) or an RFC 3339 time. "" means never. The end must be in the future.
func ParseExpiry(raw string, now time.Time) (*time.Time, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	var t time.Time
	if days, ok := strings.CutSuffix(raw, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 3650 {
			return nil, fmt.Errorf("expiry %q: days must be a whole number from 1 to 3650", raw)
		}
		t = now.AddDate(0, 0, n)
	} else if d, err := time.Parse(time.DateOnly, raw); err == nil {
		t = d.AddDate(0, 0, 1)
	} else if ts, err := time.Parse(time.RFC3339, raw); err == nil {
		t = ts
	} else {
		return nil, fmt.Errorf("expiry %q: must be a number of days (90d), a date (2027-01-31) or an RFC 3339 time", raw)
	}
	if !t.After(now) {
		return nil, fmt.Errorf("expiry %q: must be in the future", raw)
	}
	t = t.UTC()
	return &t, nil
}

// maxScopeNames bounds the scope list of a key: there are a dozen scopes, so a longer list can
// only repeat them.
const maxScopeNames = 100

// CheckScopes reads scope names for a key of a user in group: unknown scopes, and scopes beyond the
// group's rights (a scope narrows a key, it never widens it), are refused.
func CheckScopes(names []string, group access.Group) ([]access.Scope, error) {
	if len(names) > maxScopeNames {
		return nil, fmt.Errorf("must have at most %d elements", maxScopeNames)
	}
	scopes, err := access.ParseScopes(names)
	if err != nil {
		return nil, err
	}
	var beyond []string
	for _, s := range scopes {
		if !group.Covers(s) {
			beyond = append(beyond, string(s))
		}
	}
	if len(beyond) > 0 {
		return nil, fmt.Errorf("beyond the rights of the %s group: %s", groupName(group), strings.Join(beyond, ", "))
	}
	return scopes, nil
}

func groupName(g access.Group) string {
	if g == access.None {
		return "(none)"
	}
	return string(g)
}
