// Package dnc is the do-not-call list: phones (E.164) that must not be dialed in one order or in
// every order, until an expiry or for good. A lead whose phone is listed is kept (the partner paid
// for it) but never leased to a dialer (internal/dialer reads the list in its lease query), and
// its detail and list items show doNotCall. The rules are plain functions (this file); the store
// writes dnc_entries (store.go); the handler adds who may manage which entries (handler.go).
package dnc

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/phone"
)

// Bounds of a request.
const (
	MaxPhones    = 1000
	maxReasonLen = 255
	rulePhone    = "must be a phone number in E.164 format"
)

// Input is the body of create and delete. orderId null or absent means every order.
type Input struct {
	Phones    optional.Value[[]string] `json:"phones"`
	OrderID   optional.Value[int64]    `json:"orderId"`
	Reason    optional.Value[string]   `json:"reason"`
	ExpiresAt optional.Value[string]   `json:"expiresAt"`
}

// Change is a checked Input: distinct phones in E.164, in the order first sent.
type Change struct {
	Phones    []string
	OrderID   *int64
	Reason    *string
	ExpiresAt *time.Time
}

// Mode tells the create's body (reason and expiry read) from the delete's (ignored).
type Mode int

// The modes.
const (
	ForCreate Mode = iota
	ForDelete
)

// Check applies the body rules: 1 to MaxPhones phones each a valid number (any format the lead
// rules accept, stored E.164), orderId > 0 or null, reason at most 255 characters, expiresAt an
// RFC 3339 time after now or null.
func (in Input) Check(mode Mode, phones *phone.Normalizer, now time.Time, fe apperr.FieldErrors) Change {
	var ch Change
	switch {
	case !in.Phones.Present():
		fe.Add("phones", "is required")
	case len(in.Phones.V) == 0 || len(in.Phones.V) > MaxPhones:
		fe.Addf("phones", "must hold 1 to %d phone numbers", MaxPhones)
	default:
		ch.Phones = NormalizeAll(in.Phones.V, phones, fe)
	}
	if in.OrderID.Present() {
		if in.OrderID.V <= 0 {
			fe.Add("orderId", "must be an integer > 0 or null")
		} else {
			id := in.OrderID.V
			ch.OrderID = &id
		}
	}
	if mode == ForDelete {
		return ch
	}
	if in.Reason.Present() {
		r := strings.TrimSpace(in.Reason.V)
		if utf8.RuneCountInString(r) > maxReasonLen {
			fe.Addf("reason", "must be at most %d characters", maxReasonLen)
		} else if r != "" {
			ch.Reason = &r
		}
	}
	if in.ExpiresAt.Present() {
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(in.ExpiresAt.V))
		switch {
		case err != nil:
			fe.Add("expiresAt", "must be an RFC 3339 date-time or null")
		case !apitime.InRange(t):
			fe.Add("expiresAt", apitime.RangeRule)
		case !t.After(now):
			fe.Add("expiresAt", "must be in the future (null: for good)")
		default:
			t = t.UTC().Truncate(time.Second)
			ch.ExpiresAt = &t
		}
	}
	return ch
}

// NormalizeAll is raw in E.164, repeats dropped; each number that is not valid is a field error
// phones[i].
func NormalizeAll(raw []string, phones *phone.Normalizer, fe apperr.FieldErrors) []string {
	out := make([]string, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for i, r := range raw {
		p, ok := phones.Normalize(r)
		if !ok {
			fe.Add("phones["+strconv.Itoa(i)+"]", rulePhone)
			continue
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Entry is one entry of the list as stored.
type Entry struct {
	ID        int64      `db:"id"`
	Phone     string     `db:"phone"`
	OrderID   *int64     `db:"order_id"`
	Reason    *string    `db:"reason"`
	ExpiresAt *time.Time `db:"expires_at"`
	CreatedBy *int64     `db:"created_by"`
	CreatedAt time.Time  `db:"created_at"`
	UpdatedAt time.Time  `db:"updated_at"`
}

// View is the wire form of an entry.
type View struct {
	ID        int64   `json:"id"`
	Phone     string  `json:"phone"`
	OrderID   *int64  `json:"orderId"`
	Reason    *string `json:"reason"`
	ExpiresAt *string `json:"expiresAt"`
	// Active is false once expiresAt has passed: the entry no longer stops calls.
	Active    bool   `json:"active"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

// ViewOf is the wire form of e at now.
func ViewOf(e Entry, now time.Time) View {
	return View{ID: e.ID, Phone: e.Phone, OrderID: e.OrderID, Reason: e.Reason, Active: Active(e, now),
		ExpiresAt: apitime.StringOrNull(e.ExpiresAt), CreatedAt: apitime.String(e.CreatedAt), UpdatedAt: apitime.String(e.UpdatedAt)}
}

// Active reports whether e stops calls at now.
func Active(e Entry, now time.Time) bool { return e.ExpiresAt == nil || e.ExpiresAt.After(now) }
