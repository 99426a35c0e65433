// Package access is the platform's vocabulary of rights: the access groups a user belongs to, the
// scopes an API key may be narrowed to, which scopes each group's rights cover, and the headers
// that carry a verified caller from the gateway to the services. Which route needs what is the
// gateway's table (gateway/internal/route); what a caller sees of the data is each service's rule.
package access

import (
	"fmt"
	"slices"
	"strings"
)

// Group is a user's access group; None ("") is a user without one, who may reach only the health
// check and their own inbox.
type Group string

// The access groups, as the contract names them.
const (
	None             Group = ""
	Client           Group = "client"
	CallCenter       Group = "call-center"
	CallCenterSenior Group = "call-center-senior"
	Arbitration      Group = "arbitration"
	Moderator        Group = "moderator"
	Admin            Group = "admin"
)

// Groups lists every named group (not None), in the contract's order.
func Groups() []Group {
	return []Group{Client, CallCenter, CallCenterSenior, Arbitration, Moderator, Admin}
}

// Valid reports whether g is a named group or None.
func (g Group) Valid() bool { return g == None || slices.Contains(Groups(), g) }

// Scope narrows what one API key may do; a key without scopes has its user's full rights.
type Scope string

// The scopes. dnc:write opens the do-not-call list; webhooks:write the webhook routes (a subscription
// to an event type needs its data's read scope too, which the webhook service checks).
const (
	OrdersRead        Scope = "orders:read"
	OrdersWrite       Scope = "orders:write"
	LeadsRead         Scope = "leads:read"
	LeadsWrite        Scope = "leads:write"
	CallsRead         Scope = "calls:read"
	UsersRead         Scope = "users:read"
	AgentGroupsWrite  Scope = "agent-groups:write"
	NotificationsSend Scope = "notifications:send"
	DNCWrite          Scope = "dnc:write"
	WebhooksWrite     Scope = "webhooks:write"
	AgentStateWrite   Scope = "agent-state:write"
)

// Scopes lists every scope.
func Scopes() []Scope {
	return []Scope{OrdersRead, OrdersWrite, LeadsRead, LeadsWrite, CallsRead, UsersRead, AgentGroupsWrite,
		NotificationsSend, DNCWrite, WebhooksWrite, AgentStateWrite}
}

// groupScopes is what each group's rights cover, so a key of that group may carry these scopes
// and no other (a scope narrows a key, it never widens it).
var groupScopes = map[Group][]Scope{
	Admin:            Scopes(),
	Moderator:        Scopes(),
	Client:           {OrdersRead, OrdersWrite, LeadsRead, LeadsWrite, CallsRead, UsersRead, DNCWrite, WebhooksWrite},
	CallCenterSenior: {OrdersRead, OrdersWrite, LeadsRead, LeadsWrite, CallsRead, UsersRead, AgentGroupsWrite, NotificationsSend, AgentStateWrite},
	CallCenter:       {OrdersRead, LeadsRead, LeadsWrite, CallsRead, UsersRead, AgentStateWrite},
	Arbitration:      {OrdersRead, LeadsRead, LeadsWrite, CallsRead},
	None:             {},
}

// Covers reports whether g's rights include s.
func (g Group) Covers(s Scope) bool { return slices.Contains(groupScopes[g], s) }

// ParseScopes reads scope names, refusing unknown ones; repeats are dropped and the order kept.
func ParseScopes(names []string) ([]Scope, error) {
	out := []Scope{}
	for _, n := range names {
		s := Scope(strings.TrimSpace(n))
		if !slices.Contains(Scopes(), s) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", n, strings.Join(ScopeNames(), ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// ScopeNames is Scopes as strings.
func ScopeNames() []string {
	out := make([]string, 0, len(Scopes()))
	for _, s := range Scopes() {
		out = append(out, string(s))
	}
	return out
}

// Headers the gateway sets on every forwarded request from the verified key (a client's own are
// always dropped): the key's id and its scopes, comma-separated ("" for a key with full rights).
const (
	HeaderKeyID     = "X-Key-Id"
	HeaderKeyScopes = "X-Key-Scopes"
)

// SeesEveryOrder reports a group whose rights reach every order and so every lead and call in
// them: staff and arbitration. The other groups see the orders they own or work in, which only the
// order service can tell (GET /internal/order-scope).
func (g Group) SeesEveryOrder() bool { return g == Admin || g == Moderator || g == Arbitration }
