package db

import (
	"errors"

	"ccplatform/pkg/apperr"

	"github.com/lib/pq"
)

// Transient reports whether err may go away by itself, so that the work it stopped must be tried
// again rather than given up (a consumer retries the delivery instead of counting it towards
// dead-lettering).
//
// The one default: an error is transient unless it is a decision. Decisions are the database's
// refusals of the data itself (SQLSTATE classes 22 data exception, 23 integrity constraint
// violation except 23505, 42 syntax error or access rule violation, P0 raised by a function, XX
// internal error) and a service's answers about the request (apperr kinds invalid, not found,
// conflict, unauthorized, forbidden, too large, unsupported media type, method not allowed, not
// implemented). Anything else, known (connection lost, 57P01 shutdown, 40P01 deadlock, a 23505
// unique key a concurrent writer took first, a service unavailable or failing) or unknown, is
// assumed transient: giving up on work that would have succeeded later loses what a caller was
// told was accepted.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case "22", "42", "P0", "XX":
			return false
		case "23":
			return pe.Code == "23505"
		}
		return true
	}
	if e, ok := apperr.As(err); ok {
		switch e.Kind {
		case apperr.Invalid, apperr.NotFound, apperr.Conflict, apperr.Unauthorized, apperr.Forbidden,
			apperr.TooLarge, apperr.UnsupportedMediaType, apperr.MethodNotAllowed, apperr.NotImplemented:
			return false
		}
	}
	return true
}

// WriteSplitting writes the n items of a batch with write: all together, and when the database
// refuses them (an error Transient does not retry), each alone, so that one item it refuses cannot
// hold the others back. write gets the indexes of the items to write in one transaction. It returns
// each item's error: nil once written, else the transient fault that stopped its write (try the item
// again) or the database's refusal of the item alone. split, when set, is told the batch's refusal
// before the items are written alone.
func WriteSplitting(n int, write func(items []int) error, split func(err error)) []error {
	errs := make([]error, n)
	if n == 0 {
		return errs
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	err := write(all)
	switch {
	case err == nil:
		return errs
	case Transient(err) || n == 1:
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if split != nil {
		split(err)
	}
	for i := range errs {
		errs[i] = write([]int{i})
	}
	return errs
}
