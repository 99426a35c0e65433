package order

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gosimple/slug"
	"github.com/nyaruka/phonenumbers"
)

// Code rules: the contract allows a-z, 0-9, '-' and '_'; the length bound keeps codes usable in
// URLs and reports, and leaves room for a "-N" suffix on generated codes.
const (
	MaxCodeLen     = 100
	maxCodeBaseLen = 90
	// FallbackCode is the base of a generated code when the title has no letters or digits to keep.
	FallbackCode = "order"
)

var codePattern = regexp.MustCompile(`^[a-z0-9_-]+$`)

// ValidCode reports whether code is an acceptable order code.
func ValidCode(code string) bool {
	return len(code) <= MaxCodeLen && codePattern.MatchString(code)
}

// softSigns are dropped before transliteration: the Russian rules map them to nothing, while the
// slug library would turn them into a separator ("подъезд" must become "podezd", not "pod-ezd").
var softSigns = strings.NewReplacer("ь", "", "ъ", "", "Ь", "", "Ъ", "")

// CodeFromTitle is the base of a generated code: the title transliterated from Cyrillic and
// slugged ("Заказ 1" → "zakaz-1"), or FallbackCode when nothing is left.
func CodeFromTitle(title string) string {
	s := slug.MakeLang(softSigns.Replace(title), "ru")
	if len(s) > maxCodeBaseLen {
		s = strings.TrimRight(s[:maxCodeBaseLen], "-_")
	}
	if s == "" || !codePattern.MatchString(s) {
		return FallbackCode
	}
	return s
}

// FirstFreeCode is base when it is not taken, else the first of base-2, base-3… that is not.
func FirstFreeCode(base string, taken []string) string {
	used := make(map[string]bool, len(taken))
	for _, t := range taken {
		used[t] = true
	}
	if !used[base] {
		return base
	}
	for n := 2; ; n++ {
		c := base + "-" + strconv.Itoa(n)
		if !used[c] {
			return c
		}
	}
}

// Schedule is the week's working hours, Monday first: each day is ["HH:MM","HH:MM"] or empty for
// a day off. A stored schedule may have fewer than 7 days; the missing days are days off.
type Schedule [][]string

// MaxScheduleDays is the length of a week.
const MaxScheduleDays = 7

// Padded is the schedule as returned: exactly 7 days, [] for days off.
func (s Schedule) Padded() Schedule {
	out := make(Schedule, MaxScheduleDays)
	for i := range out {
		if i < len(s) && len(s[i]) == 2 {
			out[i] = []string{s[i][0], s[i][1]}
		} else {
			out[i] = []string{}
		}
	}
	return out
}

var clockPattern = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// minutesOf reads HH:MM; "24:00" is accepted as an end of day only (end is true).
func minutesOf(s string, end bool) (int, bool) {
	if end && s == "24:00" {
		return 24 * 60, true
	}
	if !clockPattern.MatchString(s) {
		return 0, false
	}
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	return h*60 + m, true
}

// ParseSchedule checks a sent schedule and returns it padded to 7 days. problems maps the broken
// element ("callSchedule[2]") to its rule.
func ParseSchedule(field string, days [][]string) (Schedule, map[string]string) {
	problems := map[string]string{}
	if len(days) > MaxScheduleDays {
		problems[field] = "must have at most 7 elements, one per weekday from Monday"
		return nil, problems
	}
	for i, day := range days {
		name := field + "[" + strconv.Itoa(i) + "]"
		switch len(day) {
		case 0:
			continue
		case 2:
		default:
			problems[name] = `must be ["HH:MM","HH:MM"] or [] for a day off`
			continue
		}
		start, ok1 := minutesOf(day[0], false)
		end, ok2 := minutesOf(day[1], true)
		switch {
		case !ok1 || !ok2:
			problems[name] = "must hold times HH:MM from 00:00 to 23:59 (24:00 as an end)"
		case start >= end:
			problems[name] = "must start before it ends"
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return Schedule(days).Padded(), nil
}

// ruleDialable is the rule of a transfer number.
const ruleDialable = "must be a phone number in E.164 format (+79991234567) or an internal extension of 2 to 6 digits"

// extension is an internal number of the call center's PBX.
var extension = regexp.MustCompile(`^[0-9]{2,6}$`)

// e164 is a number in E.164 form, its + optional as for lead phones.
var e164 = regexp.MustCompile(`^\+?[1-9][0-9]{7,14}$`)

// Dialable reports whether a call can be transferred to number: an internal extension of 2 to 6
// digits, or an E.164 number (with or without +) that the phone-number library knows as valid.
func Dialable(number string) bool {
	if extension.MatchString(number) {
		return true
	}
	if !e164.MatchString(number) {
		return false
	}
	n, err := phonenumbers.Parse("+"+strings.TrimPrefix(number, "+"), "")
	return err == nil && phonenumbers.IsValidNumber(n)
}
