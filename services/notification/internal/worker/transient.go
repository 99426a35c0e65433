package worker

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"

	"github.com/lib/pq"
)

// isTransient reports failures that heal by themselves (the database restarting or unreachable),
// for which a command is retried as long as it takes rather than counted towards dead-lettering.
func isTransient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		// Class 08: connection exceptions; 57P: operator intervention (shutdown, crash recovery);
		// 53: insufficient resources; 40001/40P01: serialization failure and deadlock.
		switch {
		case pe.Code.Class() == "08", pe.Code.Class() == "53", pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "40001", pe.Code == "40P01":
			return true
		}
	}
	return errors.Is(err, driver.ErrBadConn)
}
