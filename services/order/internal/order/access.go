package order

import (
	"ccplatform/pkg/access"
	"ccplatform/pkg/identity"
)

// Actor is who reads or changes orders, as the gateway verified them (identity.Caller), with the
// agent groups they are in (asked of the user service only for agents, whose rights depend on
// them).
type Actor struct {
	UserID   int64
	Group    access.Group
	GroupIDs []int64
}

// Internal reports a call from another service: no user, nothing to narrow.
func (c Actor) Internal() bool { return c.UserID == 0 }

// isAgent reports a caller whose orders are the ones they work in.
func (c Actor) isAgent() bool {
	return c.Group == access.CallCenter || c.Group == access.CallCenterSenior
}

// actorOf reads the gateway's identity headers.
func actorOf(c identity.Caller) Actor {
	return Actor{UserID: c.UserID, Group: access.Group(c.AccessGroup)}
}

// SeesAll reports a caller who may read every order.
func SeesAll(c Actor) bool { return c.Internal() || c.Group.SeesEveryOrder() }

// CanUpdate reports whether c may change o: staff every order, a client its own. (The gateway
// refuses the other groups before the service sees them.)
func CanUpdate(c Actor, o Order) bool {
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
func SetsOwner(c Actor) bool {
	return c.Internal() || c.Group == access.Admin || c.Group == access.Moderator
}
