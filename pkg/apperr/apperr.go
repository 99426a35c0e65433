// Package apperr holds the small set of error kinds every service speaks, so that one mapper
// (web.Fail) turns any failure into the right status and envelope.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
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

// Message is "field: rule; other: rule", sorted so that it is stable.
func (fe FieldErrors) Message() string {
	names := make([]string, 0, len(fe))
	for f := range fe {
		names = append(names, f)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, f := range names {
		parts[i] = f + ": " + fe[f]
	}
	return strings.Join(parts, "; ")
}
