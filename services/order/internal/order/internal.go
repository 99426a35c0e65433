package order

import (
	"bytes"
	"context"

	"ccplatform/pkg/listquery"
	"ccplatform/services/order/internal/callattempt"
)

// InternalView is what other services read (GET /internal/orders/:id): the view of getOrder
// plus the call-attempt group the order names. The lead worker needs the group's intervals to
// plan the next call, and gets every dialing rule in one lookup this way; the public detail keeps
// to the contract and does not carry the group.
type InternalView struct {
	View
	// CallAttemptGroup is null when the order names no group (or a group that is gone).
	CallAttemptGroup *AttemptGroupView
}

// MarshalJSON writes the view of the order with callAttemptGroup added.
func (v InternalView) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := v.writeMembers(&b); err != nil {
		return nil, err
	}
	if err := writeMember(&b, true, "callAttemptGroup", v.CallAttemptGroup); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// AttemptGroupView is the part of a call-attempt group that dialing follows. Groups have no
// update route, so a lookup cached until the next order.updated cannot go stale.
type AttemptGroupView struct {
	ID                   int64   `json:"id"`
	Intervals            []int64 `json:"intervals"`
	ResetAttemptsEnabled bool    `json:"resetAttemptsEnabled"`
}

// internalViewOf is the internal view of o, with its call-attempt group read from groups.
func internalViewOf(ctx context.Context, o Order, groups *callattempt.Store) (InternalView, error) {
	v := InternalView{View: ViewOf(o)}
	if o.CallAttemptGroupID == nil {
		return v, nil
	}
	g, found, err := groups.Get(ctx, *o.CallAttemptGroupID)
	if err != nil || !found {
		return v, err
	}
	v.CallAttemptGroup = &AttemptGroupView{ID: g.ID, Intervals: listquery.List(g.Intervals), ResetAttemptsEnabled: g.ResetAttemptsEnabled}
	return v, nil
}
