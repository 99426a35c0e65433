// Package clock is the dialing queue's sense of now. In a deployment it is time.Now; a
// development process may read it from a file instead (CLOCK_FILE), so that end-to-end tests of
// calling windows and lease expiry set the time rather than wait for it.
package clock

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// FromFile is a clock that reads an RFC 3339 time from path at every call, or is time.Now while
// the file is missing or empty. A file that holds anything else stops the clock at the zero time,
// which no due lead satisfies, and is reported by Check.
func FromFile(path string) func() time.Time {
	return func() time.Time {
		t, ok, err := read(path)
		if err != nil {
			return time.Time{}
		}
		if !ok {
			return time.Now()
		}
		return t
	}
}

// Check reports a clock file that exists and does not hold an RFC 3339 time.
func Check(path string) error {
	_, _, err := read(path)
	return err
}

func read(path string) (time.Time, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("clock file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("clock file %s: %q is not an RFC 3339 time", path, s)
	}
	return t, true, nil
}
