// Package subscription is a partner's webhook endpoint: the rules of its fields, who owns and sees
// it, its signing secrets, and the routes that manage it.
package subscription

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/services/webhook/internal/urlguard"
)

// EventTypes are the events a subscription may ask for (docs/events.md).
func EventTypes() []string {
	return []string{"lead.created", "lead.updated", "lead.status_changed", "lead.job.failed", "call.finished", "order.updated"}
}

// ReadScope is the key scope that reads the data of events of type typ: a key narrowed away from
// it may not receive them either ("" for a type that is not an event type).
func ReadScope(typ string) access.Scope {
	switch typ {
	case "lead.created", "lead.updated", "lead.status_changed", "lead.job.failed":
		return access.LeadsRead
	case "call.finished":
		return access.CallsRead
	case "order.updated":
		return access.OrdersRead
	}
	return ""
}

// KeyCovers reports whether a key of scopes (none: the owner's full rights) may receive events of
// type typ.
func KeyCovers(scopes []string, typ string) bool {
	return len(scopes) == 0 || slices.Contains(scopes, string(ReadScope(typ)))
}

// CheckEventScopes refuses events the caller's key may not read, naming the event type and the
// scope it lacks: a subscription would otherwise deliver data the key cannot fetch.
func CheckEventScopes(events, scopes []string) error {
	var lacking []string
	for _, e := range events {
		if !KeyCovers(scopes, e) {
			lacking = append(lacking, e+" needs "+string(ReadScope(e)))
		}
	}
	if len(lacking) > 0 {
		return apperr.New(apperr.Forbidden, "events: this API key may not read the data of %s (a key scope it lacks)",
			strings.Join(lacking, ", "))
	}
	return nil
}

// Bounds of a subscription's fields.
const (
	maxDescription = 255
	maxOrderIDs    = 1000
)

// Input is the body of create and update; every field is optional.Value so that a missing field
// and a wrong type are told apart and named.
type Input struct {
	URL         optional.Value[string]   `json:"url"`
	Events      optional.Value[[]string] `json:"events"`
	Description optional.Value[string]   `json:"description"`
	Enabled     optional.Value[bool]     `json:"enabled"`
	OrderIDs    optional.Value[[]int64]  `json:"orderIds"`
}

// Fields are a subscription's settable fields after the rules.
type Fields struct {
	URL         string
	Events      []string
	Description string
	Enabled     bool
	OrderIDs    []int64
}

// CheckCreate applies the rules to a create: url and events are required.
func CheckCreate(ctx context.Context, guard urlguard.Policy, in Input) (Fields, error) {
	fe := apperr.FieldErrors{}
	if !in.URL.Set {
		fe.Add("url", "is required")
	}
	if !in.Events.Set {
		fe.Add("events", "is required")
	}
	f := Fields{Enabled: true, Events: []string{}, OrderIDs: []int64{}}
	apply(ctx, guard, in, &f, fe)
	return f, fe.Err()
}

// CheckUpdate applies the rules to an update of cur: a field not sent keeps its value.
func CheckUpdate(ctx context.Context, guard urlguard.Policy, in Input, cur Fields) (Fields, error) {
	fe := apperr.FieldErrors{}
	apply(ctx, guard, in, &cur, fe)
	return cur, fe.Err()
}

func apply(ctx context.Context, guard urlguard.Policy, in Input, f *Fields, fe apperr.FieldErrors) {
	// No field of a subscription is nullable: a null would otherwise read as "not sent" and the
	// update answer 200 having changed nothing.
	for name, null := range map[string]bool{"url": in.URL.IsNull(), "events": in.Events.IsNull(),
		"description": in.Description.IsNull(), "enabled": in.Enabled.IsNull(), "orderIds": in.OrderIDs.IsNull()} {
		if null {
			fe.Add(name, "must not be null")
		}
	}
	if u := in.URL.Ptr(); u != nil {
		if err := guard.CheckURL(ctx, strings.TrimSpace(*u)); err != nil {
			fe.Add("url", err.Error())
		}
		f.URL = strings.TrimSpace(*u)
	}
	if in.Events.Present() {
		evs, rule := checkEvents(in.Events.Or(nil))
		if rule != "" {
			fe.Add("events", rule)
		}
		f.Events = evs
	}
	if in.Description.Present() {
		d := in.Description.Or("")
		if utf8.RuneCountInString(d) > maxDescription || strings.ContainsRune(d, 0) {
			fe.Add("description", "must be a text of at most 255 characters")
		}
		f.Description = d
	}
	optional.Set(&f.Enabled, in.Enabled)
	if in.OrderIDs.Present() {
		ids := in.OrderIDs.Or(nil)
		if len(ids) > maxOrderIDs {
			fe.Add("orderIds", "must list at most 1000 orders")
		}
		if slices.ContainsFunc(ids, func(id int64) bool { return id <= 0 }) {
			fe.Add("orderIds", "must be order ids (integers > 0)")
		}
		ids = slices.Clone(ids)
		slices.Sort(ids)
		f.OrderIDs = slices.Compact(ids)
		if f.OrderIDs == nil {
			f.OrderIDs = []int64{}
		}
	}
}

// checkEvents keeps the known event types, sorted, once each; the rule broken, if any.
func checkEvents(evs []string) ([]string, string) {
	if len(evs) == 0 {
		return []string{}, "must list at least one event (" + strings.Join(EventTypes(), ", ") + ")"
	}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		if !slices.Contains(EventTypes(), e) {
			return nil, "unknown event " + quote(e) + " (known: " + strings.Join(EventTypes(), ", ") + ")"
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out), ""
}

func quote(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return `"` + s + `"`
}

// SeesAll reports whether a group's users see (and manage) every subscription: the staff who
// support partners. Everyone else sees their own.
func SeesAll(g access.Group) bool { return g == access.Admin || g == access.Moderator }
