package call

import (
	"slices"

	"ccplatform/pkg/access"
	"ccplatform/pkg/contacts"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"
)

// Who sees which calls: an agent (call-center) their own calls; everyone else the calls of the
// orders they may see (pkg/visibleorders: staff and arbitration all, a client its own orders, a
// senior agent the orders they or their groups work in).

// ownCallsOnly reports a caller who sees only the calls they handled.
func ownCallsOnly(caller web.Caller) bool {
	return access.Group(caller.AccessGroup) == access.CallCenter
}

// Narrow applies caller's rights to f; none is true when nothing the caller may see can match, so
// the answer is an empty page without a query. A filter naming others' calls or orders simply
// matches nothing.
func Narrow(f Filter, caller web.Caller, scope visibleorders.Visible) (out Filter, none bool) {
	if ownCallsOnly(caller) {
		if len(f.UserIDs) > 0 && !slices.Contains(f.UserIDs, caller.UserID) {
			return f, true
		}
		f.UserIDs = []int64{caller.UserID}
		return f, false
	}
	f.OrderIDs, none = scope.Narrow(f.OrderIDs)
	return f, none
}

// Visible reports whether caller may see call r.
func Visible(r Record, caller web.Caller, scope visibleorders.Visible) bool {
	if ownCallsOnly(caller) {
		return r.UserID == caller.UserID
	}
	return scope.Contains(r.OrderID)
}

// Masked is v with its client phone masked when scope hides the lead contacts of its order (an
// agent, where the order's showLeadContactsToAgent is off, or an order they no longer work in).
func Masked(v Call, orderID int64, scope visibleorders.Visible) Call {
	if !scope.ShowsContacts(orderID) {
		v.ClientPhone = contacts.Mask(v.ClientPhone)
	}
	return v
}
