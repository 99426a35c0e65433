package order

import (
	"ccplatform/pkg/access"
	"ccplatform/pkg/web"
)

// Caller is who asks about orders, as the gateway verified them, with the agent groups they are
// in (asked of the user service only for agents, whose rights depend on them).
type Caller struct {
	UserID   int64
	Group    access.Group
	GroupIDs []int64
}

// Internal reports a call from another service: no user, nothing to narrow.
func (c Caller) Internal() bool { return c.UserID == 0 }

// isAgent reports a caller whose orders are the ones they work in.
func (c Caller) isAgent() bool {
	return c.Group == access.CallCenter || c.Group == access.CallCenterSenior
}

// callerOf reads the gateway's identity headers.
func callerOf(c web.Caller) Caller {
	return Caller{UserID: c.UserID, Group: access.Group(c.AccessGroup)}
}

// SeesAll reports a caller who may read every order.
func SeesAll(c Caller) bool { return c.Internal() || c.Group.SeesEveryOrder() }

// CanUpdate reports whether c may change o: staff every order, a client its own. (The gateway
// refuses the other groups before the service sees them.)
func CanUpdate(c Caller, o Order) bool {
	switch {
	case c.Internal():
		return true
	case c.Group == access.Admin || c.Group == access.Moderator:
		return true
	case c.Group == access.Client:
		return o.ClientUserID != nil && *o.ClientUserID == c.UserID
	}
	return false
}

// SetsOwner reports whether c may choose an order's client; a client's orders are always its own.
func SetsOwner(c Caller) bool {
	return c.Internal() || c.Group == access.Admin || c.Group == access.Moderator
}
