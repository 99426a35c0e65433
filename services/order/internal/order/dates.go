package order

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	dps "github.com/markusmobius/go-dateparser"
)

// Holidays bounds: a date is short, and a list of more than a few years of holidays is a mistake;
// both keep a request from making the date parser work for long. Years outside minHolidayYear..
// maxHolidayYear are typing mistakes (0202, 20277), not holidays anyone dials around.
const (
	MaxHolidays       = 1000
	maxHolidayTextLen = 64
	minHolidayYear    = 1900
	maxHolidayYear    = 9999
)

// ruleHoliday is the rule of one holiday date.
const ruleHoliday = "must be a recognizable date such as 31.12.2027 or 2027-12-31"

// holidayLanguages are the languages month and weekday names are read in: the platform's own (ru,
// gb = English).
var holidayLanguages = []string{"ru", "en"}

// A holiday is written as a date, optionally followed by a time of day and a zone, which are
// checked and then dropped: the date is kept as written, whatever the zone.
var (
	// timeStart finds where a time of day begins: after a space, a comma or ISO's T, digits that
	// are a clock (10:00) or an hour with am/pm (11pm).
	timeStart = regexp.MustCompile(`(?i)[\s,t](\d{1,2}(?::\d{2}|\s*[ap]\.?\s*m))`)
	// timeOfDay is a whole time part: a clock or an am/pm hour, then an optional zone name and an
	// optional offset ("10:00", "23:30:00.5+03:00", "11:30 pm EST", "10:00 UTC+3").
	timeOfDay = regexp.MustCompile(`(?i)^(\d{1,2})(?::(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)?` +
		`(?:\s*([ap])\.?\s*m\.?)?(?:\s*(z|[a-z]{3,4}))?(?:\s*[+-](\d{1,2})(?::?(\d{2}))?)?$`)
	// yearWord is the Russian "г." or "года" after a year ("31.12.2027 г.").
	yearWord = regexp.MustCompile(`(?i)(\d)\s*(?:г\.?|года)$`)
	// Dates written in digits: yyyymmdd, year first (2027-12-31, 2027/12/31, 2027.12.31) or day
	// first (31.12.2027, 31/12/2027, 31-12-2027), each with one separator used twice.
	compactDate  = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})$`)
	yearFirst    = regexp.MustCompile(`^(\d{4})([./-])(\d{1,2})([./-])(\d{1,2})$`)
	dayFirst     = regexp.MustCompile(`^(\d{1,2})([./-])(\d{1,2})([./-])(\d{4})$`)
	weekdayNames = map[string]time.Weekday{
		"monday": time.Monday, "mon": time.Monday, "понедельник": time.Monday, "пн": time.Monday,
		"tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday, "вторник": time.Tuesday, "вт": time.Tuesday,
		"wednesday": time.Wednesday, "wed": time.Wednesday, "среда": time.Wednesday, "среду": time.Wednesday, "ср": time.Wednesday,
		"thursday": time.Thursday, "thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "четверг": time.Thursday, "чт": time.Thursday,
		"friday": time.Friday, "fri": time.Friday, "пятница": time.Friday, "пятницу": time.Friday, "пт": time.Friday,
		"saturday": time.Saturday, "sat": time.Saturday, "суббота": time.Saturday, "субботу": time.Saturday, "сб": time.Saturday,
		"sunday": time.Sunday, "sun": time.Sunday, "воскресенье": time.Sunday, "вс": time.Sunday,
	}
)

// DateParser turns "any recognizable date" into a date. It is safe for concurrent use.
//
// Dates written in digits are read by the rules below alone. Dates with a month written as a word
// ("31 декабря 2027", "Dec 31st, 2027") go to the general date parser, which is told to read only
// absolute dates in Russian or English, and its answer is kept only when it agrees with the day and
// year written: the parser reads past what it does not understand ("31.12.2027 25h" came back as
// 25 December), and a holiday read wrong silently turns some other day into a day without calls.
//
// The parser's package builds the data of every language it knows when the program starts (about
// 50 MiB of the order service's memory); Languages only narrows which of them a parse tries.
type DateParser struct {
	parser   *dps.Parser
	dayFirst *dps.Configuration
	natural  *dps.Configuration
}

// NewDateParser builds the parser once; the general parser is costly to set up per call.
func NewDateParser() *DateParser {
	// No Unix timestamps ("1e10"), no relative words ("yesterday" would turn today into a holiday):
	// only the absolute parsers, and every part (day, month, year) must be there.
	strict := func(order dps.DateOrder) *dps.Configuration {
		return &dps.Configuration{DateOrder: order, StrictParsing: true, Languages: holidayLanguages,
			RequiredParts: []string{"day", "month", "year"}}
	}
	return &DateParser{
		parser: &dps.Parser{ParserTypes: []dps.ParserType{dps.AbsoluteTime, dps.NoSpacesTime}},
		// Day first, as dates are written where the platform is used.
		dayFirst: strict(dps.DMY),
		// Then year first ("2027 Jan 5").
		natural: strict(dps.YMD),
	}
}

// Parse reads one date; ok is false when s does not name exactly one calendar date (day, month
// and year, a possible time of day, nothing else).
func (p *DateParser) Parse(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > maxHolidayTextLen || strings.ContainsFunc(s, otherDigit) {
		return time.Time{}, false
	}
	date, clock := splitTime(s)
	if clock != "" && !p.validTimeOfDay(clock) {
		return time.Time{}, false
	}
	date = yearWord.ReplaceAllString(trimConnector(date), "$1")
	var (
		d  time.Time
		ok bool
	)
	if strings.ContainsFunc(date, unicode.IsLetter) {
		d, ok = p.readWords(date)
	} else {
		d, ok = readDigits(date)
	}
	// A weekday, wherever it is named, must be the date's ("Monday, 31 December 2027" is no date).
	if !ok || d.Year() < minHolidayYear || d.Year() > maxHolidayYear || !weekdayAgrees(s, d.Weekday()) {
		return time.Time{}, false
	}
	return d, true
}

// otherDigit is a digit other than 0-9: the rules below count ASCII digits, so a date written in
// other digits could slip past them.
func otherDigit(r rune) bool { return unicode.IsDigit(r) && (r < '0' || r > '9') }

// splitTime cuts s where a time of day begins; clock is "" when there is none.
func splitTime(s string) (date, clock string) {
	for _, m := range timeStart.FindAllStringSubmatchIndex(s, -1) {
		sep := s[m[0]]
		// ISO's T joins a date and a time only right after a digit; elsewhere it is a letter of a word.
		if (sep == 't' || sep == 'T') && (m[0] == 0 || !isASCIIDigit(s[m[0]-1])) {
			continue
		}
		return s[:m[0]], s[m[2]:]
	}
	return s, ""
}

func isASCIIDigit(b byte) bool { return b >= '0' && b <= '9' }

// trimConnector drops what joins a date to its time: commas, spaces, "at", "в".
func trimConnector(date string) string {
	date = strings.TrimRight(date, " \t,")
	for _, w := range []string{" at", " AT", " At", " в", " В"} {
		if strings.HasSuffix(date, w) {
			return strings.TrimRight(strings.TrimSuffix(date, w), " \t,")
		}
	}
	return date
}

// validTimeOfDay reports whether clock is a possible time: hours 0-23 (1-12 with am/pm), minutes
// and seconds 0-59, a zone name the general parser knows, an offset of at most 14 hours.
func (p *DateParser) validTimeOfDay(clock string) bool {
	m := timeOfDay.FindStringSubmatch(clock)
	if m == nil {
		return false
	}
	hour, min, sec, ampm, zone, offH, offM := atoi(m[1]), atoi(m[2]), atoi(m[3]), m[4], m[5], atoi(m[6]), atoi(m[7])
	switch {
	case m[2] == "" && ampm == "": // a bare number is not a time
		return false
	case ampm != "" && (hour < 1 || hour > 12):
		return false
	case hour > 23 || min > 59 || sec > 59:
		return false
	case offH > 14 || offM > 59:
		return false
	case zone != "" && !strings.EqualFold(zone, "z"):
		// "10:00 XYZ" is no time anywhere; the parser knows the zone names in use.
		_, err := p.parser.Parse(p.dayFirst, "1 January 2027 "+clock)
		return err == nil
	}
	return true
}

// atoi reads a run of at most a few digits; "" is 0.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// readDigits reads a date written in digits only.
func readDigits(s string) (time.Time, bool) {
	if m := compactDate.FindStringSubmatch(s); m != nil {
		return calendarDate(atoi(m[1]), atoi(m[2]), atoi(m[3]))
	}
	if m := yearFirst.FindStringSubmatch(s); m != nil && m[2] == m[4] {
		return calendarDate(atoi(m[1]), atoi(m[3]), atoi(m[5]))
	}
	if m := dayFirst.FindStringSubmatch(s); m != nil && m[2] == m[4] {
		return calendarDate(atoi(m[5]), atoi(m[3]), atoi(m[1]))
	}
	return time.Time{}, false
}

// calendarDate is the date y-m-d, if there is such a day.
func calendarDate(y, m, d int) (time.Time, bool) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

// readWords reads a date whose month is a word: its digits must be one day (1-2 digits) and one
// year (4 digits), and the general parser must read that same day and year.
func (p *DateParser) readWords(s string) (time.Time, bool) {
	day, year, ok := dayAndYear(s)
	if !ok {
		return time.Time{}, false
	}
	for _, cfg := range []*dps.Configuration{p.dayFirst, p.natural} {
		got, err := p.parser.Parse(cfg, s)
		if err != nil || got.IsZero() {
			continue
		}
		// A day or year other than the written one is a misreading, not a date.
		if d := dateOf(got.Time); d.Day() == day && d.Year() == year {
			return d, true
		}
	}
	return time.Time{}, false
}

// dayAndYear finds the two numbers of a date with a month name: one of 1-2 digits, one of 4.
func dayAndYear(s string) (day, year int, ok bool) {
	runs := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	if len(runs) != 2 {
		return 0, 0, false
	}
	slices.SortFunc(runs, func(a, b string) int { return len(a) - len(b) })
	if len(runs[0]) > 2 || len(runs[1]) != 4 {
		return 0, 0, false
	}
	return atoi(runs[0]), atoi(runs[1]), true
}

// weekdayAgrees reports whether every weekday named in s is wd.
func weekdayAgrees(s string, wd time.Weekday) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if named, ok := weekdayNames[w]; ok && named != wd {
			return false
		}
	}
	return true
}

// dateOf keeps the calendar date as written, dropping time and zone.
func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// ParseHolidays reads every date; problems maps each unreadable element ("callHolidayOverrides[2]")
// to its rule. The dates come back sorted without repeats: the order of holidays means nothing.
func (p *DateParser) ParseHolidays(field string, raw []string) ([]time.Time, map[string]string) {
	problems := map[string]string{}
	if len(raw) > MaxHolidays {
		problems[field] = "must have at most " + strconv.Itoa(MaxHolidays) + " dates"
		return nil, problems
	}
	dates := make([]time.Time, 0, len(raw))
	for i, s := range raw {
		d, ok := p.Parse(s)
		if !ok {
			problems[field+"["+strconv.Itoa(i)+"]"] = ruleHoliday
			continue
		}
		dates = append(dates, d)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	slices.SortFunc(dates, func(a, b time.Time) int { return a.Compare(b) })
	return slices.CompactFunc(dates, func(a, b time.Time) bool { return a.Equal(b) }), nil
}
