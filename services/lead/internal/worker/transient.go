package worker

import (
	"errors"

	"ccplatform/pkg/apperr"

	"github.com/lib/pq"
)

// Transient reports whether err may go away by itself (the database restarting, a network blip,
// a concurrent duplicate of the same job), so the jobs must be retried rather than failed. Only
// errors the database gave for the data itself (invalid values, constraint violations other than
// unique keys, statements it does not understand) are permanent: anything else is assumed
// transient, since failing a job that would have succeeded later loses an accepted lead.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Unavailable {
		return true
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case "22", "42", "P0", "XX":
			return false
		case "23":
			return pe.Code == "23505" // a concurrent delivery of the same job wrote first
		}
	}
	return true
}
