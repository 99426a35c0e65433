package order

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
	// monthNames: English and Russian month names, whole, in the genitive ("декабря") and
	// abbreviated as they are written ("Dec", "сент.", "дек").
	monthNames = map[string]time.Month{
		"january": time.January, "jan": time.January, "январь": time.January, "января": time.January, "янв": time.January,
		"february": time.February, "feb": time.February, "февраль": time.February, "февраля": time.February, "фев": time.February, "февр": time.February,
		"march": time.March, "mar": time.March, "март": time.March, "марта": time.March, "мар": time.March,
		"april": time.April, "apr": time.April, "апрель": time.April, "апреля": time.April, "апр": time.April,
		"may": time.May, "май": time.May, "мая": time.May,
		"june": time.June, "jun": time.June, "июнь": time.June, "июня": time.June, "июн": time.June,
		"july": time.July, "jul": time.July, "июль": time.July, "июля": time.July, "июл": time.July,
		"august": time.August, "aug": time.August, "август": time.August, "августа": time.August, "авг": time.August,
		"september": time.September, "sep": time.September, "sept": time.September, "сентябрь": time.September, "сентября": time.September, "сен": time.September, "сент": time.September,
		"october": time.October, "oct": time.October, "октябрь": time.October, "октября": time.October, "окт": time.October,
		"november": time.November, "nov": time.November, "ноябрь": time.November, "ноября": time.November, "ноя": time.November, "нояб": time.November,
		"december": time.December, "dec": time.December, "декабрь": time.December, "декабря": time.December, "дек": time.December,
	}
	// ordinalSuffixes may follow a day written in digits ("31st", "2nd", "5th").
	ordinalSuffixes = map[string]bool{"st": true, "nd": true, "rd": true, "th": true}
	// fillerWords join the parts of an English date ("the 5th of May 2027").
	fillerWords = map[string]bool{"the": true, "of": true}
	// zoneNames are the zone abbreviations a time of day may end with ("10:00 MSK", "11:30pm EST"):
	// the time is dropped, so only whether the name exists matters.
	zoneNames = map[string]bool{
		"Z": true, "UT": true, "UTC": true, "GMT": true, "WET": true, "WEST": true, "BST": true, "IST": true,
		"CET": true, "CEST": true, "EET": true, "EEST": true, "MSK": true, "MSD": true, "SAMT": true,
		"YEKT": true, "OMST": true, "NOVT": true, "KRAT": true, "IRKT": true, "YAKT": true, "VLAT": true,
		"MAGT": true, "PETT": true, "EST": true, "EDT": true, "CST": true, "CDT": true, "MST": true,
		"MDT": true, "PST": true, "PDT": true, "AKST": true, "AKDT": true, "HST": true, "AST": true,
		"ADT": true, "NST": true, "NDT": true, "JST": true, "KST": true, "HKT": true, "SGT": true,
		"AEST": true, "AEDT": true, "ACST": true, "ACDT": true, "AWST": true, "NZST": true, "NZDT": true,
		"GST": true, "PKT": true, "ICT": true, "WIB": true, "EAT": true, "CAT": true, "WAT": true, "SAST": true,
	}
)

// DateParser turns "any recognizable date" into a date. It is safe for concurrent use.
//
// Dates written in digits are read day first (31.12.2027) or year first (2027-12-31). Dates with a
// month written as a word ("31 декабря 2027", "Dec 31st, 2027", "the 5th of May 2027") are read in
// Russian or English, the platform's languages: one month name, one day (1-2 digits, an English
// ordinal suffix allowed), one year (4 digits), in any order, with weekday names (checked against the
// date) and "the"/"of" between them; any other word refuses the date, so that "31 Dec 2027 BC" or
// "1 Jan 2027 -1 day" is not read as some other day. A holiday read wrong silently turns some
// other day into a day without calls.
//
// This replaces a general date parser (go-dateparser), which builds the data of all its 211
// languages when the program starts (32 MiB of live heap, more than half of the order service's
// memory) with no way to load only two, and which read past what it did not understand.
type DateParser struct{}

// NewDateParser returns the parser; it holds no state.
func NewDateParser() *DateParser { return &DateParser{} }

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
	case zone != "" && !zoneNames[strings.ToUpper(zone)]:
		// "10:00 XYZ" is no time anywhere.
		return false
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

// readWords reads a date whose month is a word: exactly one month name, one day and one year, and
// nothing else but weekday names, "the" and "of".
func (p *DateParser) readWords(s string) (time.Time, bool) {
	day, year, ok := dayAndYear(s)
	if !ok {
		return time.Time{}, false
	}
	month := time.Month(0)
	for _, tok := range strings.FieldsFunc(strings.ToLower(s), dateSeparator) {
		word := strings.TrimLeftFunc(tok, isASCIIDigitRune)
		switch {
		case word == "":
			// a number alone: dayAndYear has read it
		case word != tok:
			// A number with letters glued on: only a day's English ordinal ("31st").
			if !ordinalSuffixes[word] || len(tok)-len(word) > 2 {
				return time.Time{}, false
			}
		case monthNames[word] != 0:
			if month != 0 {
				return time.Time{}, false
			}
			month = monthNames[word]
		case fillerWords[word]:
		default:
			if _, weekday := weekdayNames[word]; !weekday {
				return time.Time{}, false
			}
		}
	}
	if month == 0 {
		return time.Time{}, false
	}
	return calendarDate(year, int(month), day)
}

// dateSeparator splits a date with a month name into its words and numbers.
func dateSeparator(r rune) bool {
	return unicode.IsSpace(r) || r == ',' || r == '.' || r == '-' || r == '/'
}

func isASCIIDigitRune(r rune) bool { return r >= '0' && r <= '9' }

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
