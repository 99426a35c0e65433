package web

import (
	"net/url"
	"strings"

	"ccplatform/pkg/apperr"

	"github.com/gin-gonic/gin"
)

// RuleText is the rule every path parameter and query value (and query parameter name) keeps:
// PostgreSQL text holds neither U+0000 nor invalid UTF-8 (it answers 22021 or 22P05, a 500 to the
// caller), and no identifier, code, phone or filter of the API has a control character in it.
const RuleText = "must be valid UTF-8 text without control characters (U+0000 to U+001F, U+007F)"

// ruleQueryName is RuleText for the name of a query parameter, which cannot name itself.
const ruleQueryName = "parameter names " + RuleText

// errQuerySyntax is the one answer to a query string url.ParseQuery cannot read whole.
var errQuerySyntax = apperr.Field("query", "must be name=value pairs joined by & and percent-encoded (no ';')")

// RuleSegment is the rule of a path parameter holding an escaped slash: its value would change
// into more segments on its way to a service.
const RuleSegment = "must not contain a slash (%2F): a path parameter is one path segment"

// PathParams refuses a request whose path parameters are not clean text (RuleText) or hold a
// slash (RuleSegment), naming the first one that does, before any handler reads them. The
// parameters are the route's own (gin decoded them from the path), so the gateway names them as
// its route table does.
func PathParams(c *gin.Context) {
	for _, p := range c.Params {
		switch {
		case !CleanText(p.Value):
			Fail(c, apperr.Field(p.Key, RuleText))
			return
		case strings.IndexByte(p.Value, '/') >= 0:
			Fail(c, apperr.Field(p.Key, RuleSegment))
			return
		}
	}
	c.Next()
}

// CleanText reports whether s is valid UTF-8 without control characters (RuleText).
func CleanText(s string) bool {
	var t textScan
	for i := 0; i < len(s); i++ {
		if !t.add(s[i]) {
			return false
		}
	}
	return t.done()
}

// CheckQuery reports whether ParseQuery would take raw, without building the values: a byte scan
// that allocates nothing on a good query, for the gateway's path of every request. It refuses
// what url.ParseQuery refuses (a ';', a bad percent escape), too many parameters, and a name or
// value that does not decode to clean text; a bad value is named by its parameter.
func CheckQuery(raw string) error {
	if raw == "" {
		return nil
	}
	if strings.Count(raw, "&") >= MaxQueryParams {
		return apperr.Field("query", tooManyParams)
	}
	var fe apperr.FieldErrors
	syntax := false
	for rest := raw; rest != ""; {
		seg := rest
		if i := strings.IndexByte(rest, '&'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if seg == "" {
			continue
		}
		name, value := seg, ""
		if i := strings.IndexByte(seg, '='); i >= 0 {
			name, value = seg[:i], seg[i+1:]
		}
		nameClean, nameOK := scanComponent(name)
		valueClean, valueOK := scanComponent(value)
		switch {
		case !nameOK || !valueOK || strings.IndexByte(seg, ';') >= 0:
			syntax = true
		case !nameClean:
			fe = addField(fe, "query", ruleQueryName)
		case !valueClean:
			// Only a refusal decodes the name; it is clean text, so it can name the parameter.
			n, _ := url.QueryUnescape(name)
			fe = addField(fe, n, RuleText)
		}
	}
	if syntax {
		return errQuerySyntax
	}
	return fe.Err()
}

func addField(fe apperr.FieldErrors, field, rule string) apperr.FieldErrors {
	if fe == nil {
		fe = apperr.FieldErrors{}
	}
	fe.Add(field, rule)
	return fe
}

// scanComponent decodes one query component (percent escapes, '+' for a space) as it goes: ok is
// false for a bad escape, clean whether what it decodes to is clean text.
func scanComponent(s string) (clean, ok bool) {
	var t textScan
	clean = true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '%':
			if i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
				return false, false
			}
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		case '+':
			c = ' '
		}
		if clean && !t.add(c) {
			clean = false
		}
	}
	return clean && t.done(), true
}

// textScan checks a stream of bytes, one at a time, for valid UTF-8 (no overlong forms, no
// surrogates, nothing past U+10FFFF) without control characters: the decoded bytes of a query
// component never need to be held to be checked.
type textScan struct {
	need   int  // continuation bytes the current character still needs
	lo, hi byte // the range of its next continuation byte
}

// add takes the next byte; false means the text cannot be clean whatever follows.
func (t *textScan) add(c byte) bool {
	if t.need > 0 {
		if c < t.lo || c > t.hi {
			return false
		}
		t.need--
		t.lo, t.hi = 0x80, 0xBF
		return true
	}
	t.lo, t.hi = 0x80, 0xBF
	switch {
	case c < 0x20 || c == 0x7F:
		return false
	case c < 0x80:
	case 0xC2 <= c && c <= 0xDF:
		t.need = 1
	case c == 0xE0:
		t.need, t.lo = 2, 0xA0
	case c == 0xED:
		t.need, t.hi = 2, 0x9F
	case 0xE1 <= c && c <= 0xEF:
		t.need = 2
	case c == 0xF0:
		t.need, t.lo = 3, 0x90
	case 0xF1 <= c && c <= 0xF3:
		t.need = 3
	case c == 0xF4:
		t.need, t.hi = 3, 0x8F
	default:
		return false
	}
	return true
}

// done reports whether the text ended on a whole character.
func (t *textScan) done() bool { return t.need == 0 }

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
