// Package dialer is the dialing queue: the telephony platform's dialers lease an order's due leads
// (POST /v2/dialer/lease), give them back (release) or keep them longer (extend). A lease is a
// uuid and an expiry stored on the leased leads; an expired lease gives its leads back by itself,
// since the due query ignores it, and the call.finished event of a lead ends its lease
// (internal/callresult). The rules are plain functions (this file), the queries are in store.go,
// the order checks and the caller's scope in service.go.
package dialer

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/services/lead/internal/callresult"

	"github.com/google/uuid"
)

// Bounds of the operations (services/lead/README.md, "The dialing queue").
const (
	MaxLimit            = 100
	MinLeaseSeconds     = 10
	MaxLeaseSeconds     = 3600
	DefaultLeaseSeconds = 120
	MaxDialerIDLen      = 64
	MaxReleaseIDs       = 1000
)

// LeaseInput is the body of a lease.
type LeaseInput struct {
	OrderID      optional.Value[int64]  `json:"orderId"`
	Limit        optional.Value[int64]  `json:"limit"`
	LeaseSeconds optional.Value[int64]  `json:"leaseSeconds"`
	DialerID     optional.Value[string] `json:"dialerId"`
}

// LeaseRequest is a checked lease.
type LeaseRequest struct {
	OrderID int64
	// Paced: no limit was sent, the platform decides how many leads to hand out (Limit is 0).
	Paced    bool
	Limit    int
	Lease    time.Duration
	DialerID string
}

// Check applies the lease's body rules, adding each broken field to fe.
func (in LeaseInput) Check(fe apperr.FieldErrors) LeaseRequest {
	r := LeaseRequest{Lease: DefaultLeaseSeconds * time.Second}
	switch {
	case !in.OrderID.Present():
		fe.Add("orderId", "is required")
	case in.OrderID.V <= 0:
		fe.Add("orderId", "must be an integer > 0")
	default:
		r.OrderID = in.OrderID.V
	}
	switch {
	case !in.Limit.Set:
		r.Paced = true
	case in.Limit.Null:
		fe.Addf("limit", "must be an integer from 1 to %d, or left out for a paced lease", MaxLimit)
	case in.Limit.V < 1 || in.Limit.V > MaxLimit:
		fe.Addf("limit", "must be an integer from 1 to %d", MaxLimit)
	default:
		r.Limit = int(in.Limit.V)
	}
	r.Lease = leaseSeconds(in.LeaseSeconds, fe)
	switch d := strings.TrimSpace(in.DialerID.V); {
	case !in.DialerID.Present() || d == "":
		fe.Add("dialerId", "is required")
	case utf8.RuneCountInString(d) > MaxDialerIDLen:
		fe.Addf("dialerId", "must be at most %d characters", MaxDialerIDLen)
	default:
		r.DialerID = d
	}
	return r
}

// leaseSeconds reads leaseSeconds: absent or null is the default.
func leaseSeconds(v optional.Value[int64], fe apperr.FieldErrors) time.Duration {
	if !v.Present() {
		return DefaultLeaseSeconds * time.Second
	}
	if v.V < MinLeaseSeconds || v.V > MaxLeaseSeconds {
		fe.Addf("leaseSeconds", "must be an integer from %d to %d", MinLeaseSeconds, MaxLeaseSeconds)
		return 0
	}
	return time.Duration(v.V) * time.Second
}

// ReleaseInput is the body of a release.
type ReleaseInput struct {
	LeaseID optional.Value[string]  `json:"leaseId"`
	LeadIDs optional.Value[[]int64] `json:"leadIds"`
}

// ReleaseRequest is a checked release; LeadIDs nil means every lead of the lease.
type ReleaseRequest struct {
	LeaseID string
	LeadIDs []int64
}

// Check applies the release's body rules.
func (in ReleaseInput) Check(fe apperr.FieldErrors) ReleaseRequest {
	r := ReleaseRequest{LeaseID: leaseID(in.LeaseID, fe)}
	if !in.LeadIDs.Present() {
		return r
	}
	if len(in.LeadIDs.V) > MaxReleaseIDs {
		fe.Addf("leadIds", "must hold at most %d ids", MaxReleaseIDs)
		return r
	}
	r.LeadIDs = make([]int64, 0, len(in.LeadIDs.V))
	for i, id := range in.LeadIDs.V {
		if id <= 0 {
			fe.Add("leadIds["+strconv.Itoa(i)+"]", "must be an integer > 0")
			continue
		}
		r.LeadIDs = append(r.LeadIDs, id)
	}
	return r
}

// ExtendInput is the body of an extend.
type ExtendInput struct {
	LeaseID      optional.Value[string] `json:"leaseId"`
	LeaseSeconds optional.Value[int64]  `json:"leaseSeconds"`
}

// ExtendRequest is a checked extend: the lease's leads are held Lease from now.
type ExtendRequest struct {
	LeaseID string
	Lease   time.Duration
}

// Check applies the extend's body rules.
func (in ExtendInput) Check(fe apperr.FieldErrors) ExtendRequest {
	return ExtendRequest{LeaseID: leaseID(in.LeaseID, fe), Lease: leaseSeconds(in.LeaseSeconds, fe)}
}

func leaseID(v optional.Value[string], fe apperr.FieldErrors) string {
	if !v.Present() {
		fe.Add("leaseId", "is required")
		return ""
	}
	id, err := uuid.Parse(strings.TrimSpace(v.V))
	if err != nil {
		fe.Add("leaseId", "must be a leaseId a lease answered (a UUID)")
		return ""
	}
	return id.String()
}

// Zones are the lead offsets (whole hours from UTC) whose local time is inside a calling window,
// and whether leads of unknown offset are (they are read in UTC, as the next-call rules read them).
type Zones struct {
	Offsets []int
	Unknown bool
}

// None reports that no lead of the order is inside a window now.
func (z Zones) None() bool { return len(z.Offsets) == 0 && !z.Unknown }

// The offsets a lead may have (lead rules: -12 to 14).
const (
	minOffset = -12
	maxOffset = 14
)

// CallableZones is where the order's calling window is open at now, with the zone rule of the
// next-call computation (callresult.Rules.Zone): each lead's fixed offset, or UTC when the order
// ignores lead zones or the offset is unknown. Holidays are read in the same zone.
func CallableZones(r callresult.Rules, now time.Time) Zones {
	if r.IgnoreLeadTimezone {
		if !InWindow(r, now, time.UTC) {
			return Zones{}
		}
		z := Zones{Unknown: true}
		for o := minOffset; o <= maxOffset; o++ {
			z.Offsets = append(z.Offsets, o)
		}
		return z
	}
	z := Zones{Unknown: InWindow(r, now, r.Zone(nil))}
	for o := minOffset; o <= maxOffset; o++ {
		if InWindow(r, now, r.Zone(&o)) {
			z.Offsets = append(z.Offsets, o)
		}
	}
	return z
}

// InWindow reports whether t lies in a calling window of its day in loc, that day being neither a
// day off nor a holiday: the first working instant from t is t itself.
func InWindow(r callresult.Rules, t time.Time, loc *time.Location) bool {
	next, ok := r.NextWorkingTime(t, loc)
	return ok && next.Equal(t)
}

// Day is the day the qualified-leads-per-day limit counts: the UTC day of now, [start, end).
// The platform has no zone of its own for an order, and its leads may be in many.
func Day(now time.Time) (start, end time.Time) {
	u := now.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// LimitReached reports whether an order that qualified qualified leads today may lease no more.
func LimitReached(limit *int64, qualified int64) bool { return limit != nil && qualified >= *limit }
