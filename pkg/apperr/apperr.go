// Package apperr holds the small set of error kinds every service speaks, so that one mapper
// (web.Fail) turns any failure into the right status and envelope.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"
)

// Kind classifies an error by what the caller can do about it.
type Kind int

// The kinds; the zero value is Internal so that an unclassified error is never reported as the
// caller's fault.
const (
	Internal Kind = iota
	Invalid
	NotFound
	Conflict
	Unauthorized
	Forbidden
	Unavailable
	TooLarge
	UnsupportedMediaType
	RateLimited
	NotImplemented
	BadGateway
	MethodNotAllowed
	GatewayTimeout
	// RequestTimeout: the client did not send its request (its body) within the server's read
	// timeout.
	RequestTimeout
)

var statusByKind = map[Kind]int{
	Internal:             http.StatusInternalServerError,
	Invalid:              http.StatusBadRequest,
	NotFound:             http.StatusNotFound,
	Conflict:             http.StatusConflict,
	Unauthorized:         http.StatusUnauthorized,
	Forbidden:            http.StatusForbidden,
	Unavailable:          http.StatusServiceUnavailable,
	TooLarge:             http.StatusRequestEntityTooLarge,
	UnsupportedMediaType: http.StatusUnsupportedMediaType,
	RateLimited:          http.StatusTooManyRequests,
	NotImplemented:       http.StatusNotImplemented,
	BadGateway:           http.StatusBadGateway,
	MethodNotAllowed:     http.StatusMethodNotAllowed,
	GatewayTimeout:       http.StatusGatewayTimeout,
	RequestTimeout:       http.StatusRequestTimeout,
}

// Status is the HTTP status that a kind is answered with; 500 for a kind this package does not
// know, so that a stray value never turns into an invalid status.
func (k Kind) Status() int {
	if s, ok := statusByKind[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// KindForStatus is the inverse of Status, for errors coming back from another service.
func KindForStatus(status int) Kind {
	for k, s := range statusByKind {
		if s == status {
			return k
		}
	}
	if status >= 400 && status < 500 {
		return Invalid
	}
	return Internal
}

// Error is a classified error. Message is safe to show to API callers; Err is the cause, for logs.
type Error struct {
	Kind    Kind
	Message string
	Fields  FieldErrors
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New makes an error of a kind with a message for the caller.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap classifies a cause; the cause is kept for logs and never shown.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// Shorthands for the common kinds.
func NotFoundf(format string, args ...any) *Error { return New(NotFound, format, args...) }
func Conflictf(format string, args ...any) *Error { return New(Conflict, format, args...) }
func Unavailablef(format string, args ...any) *Error {
	return New(Unavailable, format, args...)
}

// Field reports a single invalid field.
func Field(field, rule string) error {
	return FieldErrors{field: rule}.Err()
}

// KindOf reports the kind of err, Internal when it carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// As returns the classified error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// FieldErrors collects validation failures, field name (as on the wire) to rule.
type FieldErrors map[string]string

// Add records the first rule broken by a field; later ones for the same field are dropped
// because the first is the one the caller must fix first.
func (fe FieldErrors) Add(field, rule string) {
	if _, ok := fe[field]; !ok {
		fe[field] = rule
	}
}

// Addf is Add with a formatted rule.
func (fe FieldErrors) Addf(field, format string, args ...any) {
	fe.Add(field, fmt.Sprintf(format, args...))
}

// Has reports whether field already failed.
func (fe FieldErrors) Has(field string) bool { _, ok := fe[field]; return ok }

// Err is nil when nothing failed, else an Invalid error whose message names every field and rule.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Kind: Invalid, Message: fe.Message(), Fields: fe}
}

// Bounds of the field errors an answer names, whatever a request made them: a header of a
// million columns is refused by its first MaxNamedFields mistakes, not by a million of them.
const (
	// MaxNamedFields is how many fields an answer names; the rest are counted ("and N more").
	MaxNamedFields = 20
	// MaxNameText and MaxRuleText bound a field's name and its rule, in bytes as JSON writes
	// them (escapes counted).
	MaxNameText = 256
	MaxRuleText = 1024
)

// Bounded is fe as an answer names it: the first MaxNamedFields fields in name order, each name
// and rule clipped (Clip), and how many fields were left out.
func (fe FieldErrors) Bounded() (FieldErrors, int) {
	names := fe.names()
	out := make(FieldErrors, min(len(names), MaxNamedFields))
	for _, f := range names[:min(len(names), MaxNamedFields)] {
		out[Clip(f, MaxNameText)] = Clip(fe[f], MaxRuleText)
	}
	return out, len(names) - len(out)
}

// names are the fields in name order.
func (fe FieldErrors) names() []string {
	names := make([]string, 0, len(fe))
	for f := range fe {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}

// MaxMessageText bounds the message of field errors, in bytes as JSON text: the fields that
// do not fit are counted with the rest.
const MaxMessageText = 12 << 10

// Message is "field: rule; other: rule", sorted so that it is stable, naming at most
// MaxNamedFields fields (fewer if their text would pass MaxMessageText) and then how many more
// there are.
func (fe FieldErrors) Message() string {
	names := fe.names()
	var parts []string
	size := 0
	for _, f := range names[:min(len(names), MaxNamedFields)] {
		part := Clip(f, MaxNameText) + ": " + Clip(fe[f], MaxRuleText)
		if size += jsonTextLen(part) + 2; size > MaxMessageText {
			break
		}
		parts = append(parts, part)
	}
	if more := len(names) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// Clip cuts s to at most n bytes as JSON text (encoding/json's escapes of quotes, control and
// HTML characters, invalid UTF-8 and U+2028/U+2029 counted at their escaped length), ending
// with "…" when it cut anything; it never cuts a character in two.
func Clip(s string, n int) string {
	if len(s) <= n/6 {
		return s // even all escaped, it fits
	}
	const ellipsis = "…"
	size, cut := 0, -1
	for i, r := range s {
		w := jsonLen(r, s[i:])
		if cut < 0 && size+w > n-len(ellipsis) {
			cut = i
		}
		size += w
		if size > n {
			return s[:cut] + ellipsis
		}
	}
	return s
}

// jsonTextLen is how many bytes encoding/json writes for s, quotes aside.
func jsonTextLen(s string) int {
	n := 0
	for i, r := range s {
		n += jsonLen(r, s[i:])
	}
	return n
}

// jsonLen is how many bytes encoding/json writes for r, read from the start of rest.
func jsonLen(r rune, rest string) int {
	switch {
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(rest); size == 1 {
			return 6 // invalid UTF-8: \ufffd
		}
		return 3
	case r == '"' || r == '\\':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	}
	return utf8.RuneLen(r)
}
