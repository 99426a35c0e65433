package lead

import (
	"strings"
	"sync"
	"time"

	// The offsets of a number's time zones are read from the zone database; embedding it makes
	// the answer the same on every machine, with or without system tzdata.
	_ "time/tzdata"

	"github.com/nyaruka/phonenumbers"
)

// phoneSeparators are the characters people write between digits; they carry no meaning.
var phoneSeparators = strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "", "\u00a0", "")

// NormalizePhone returns raw in E.164 with a leading +, or ok false when raw is not a valid phone
// number. The contract sends E.164 with or without the +, so a number without one is read as
// international too (never as a national number of some default region).
func NormalizePhone(raw string) (e164 string, ok bool) {
	_, e164, ok = parsePhone(raw)
	return e164, ok
}

// parsePhone is NormalizePhone that also returns the parsed number, so that a create infers the
// time zone from it instead of parsing the number a second time (parsing is the costliest step of
// a create's body check).
func parsePhone(raw string) (num *phonenumbers.PhoneNumber, e164 string, ok bool) {
	s := phoneSeparators.Replace(strings.TrimSpace(raw))
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 15 {
		return nil, "", false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return nil, "", false
		}
	}
	num, err := phonenumbers.Parse("+"+s, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return nil, "", false
	}
	return num, phonenumbers.Format(num, phonenumbers.E164), true
}

// InferUTCOffset is the client's offset from UTC in whole hours, read from the time zones the
// number belongs to, when they all have the same whole-hour offset at now; nil when the number
// spans zones of different offsets, is of an unknown zone, or its zone is off by half hours.
func InferUTCOffset(e164 string, now time.Time) *int64 {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return nil
	}
	return utcOffsetOf(num, now)
}

// utcOffsetOf is InferUTCOffset of a parsed number.
func utcOffsetOf(num *phonenumbers.PhoneNumber, now time.Time) *int64 {
	zones, err := phonenumbers.GetTimezonesForNumber(num)
	if err != nil || len(zones) == 0 {
		return nil
	}
	var offset int
	for i, z := range zones {
		loc, ok := location(z)
		if !ok {
			return nil // "Etc/Unknown" and zones this build does not know
		}
		_, off := now.In(loc).Zone()
		if i > 0 && off != offset {
			return nil
		}
		offset = off
	}
	if offset%3600 != 0 {
		return nil
	}
	h := int64(offset / 3600)
	return &h
}

// locations caches loaded zones: loading one parses the zone database, and every create asks.
var locations sync.Map // zone name → *time.Location, or nil for an unknown zone

func location(name string) (*time.Location, bool) {
	if v, ok := locations.Load(name); ok {
		loc, _ := v.(*time.Location)
		return loc, loc != nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		locations.Store(name, (*time.Location)(nil))
		return nil, false
	}
	locations.Store(name, loc)
	return loc, true
}
