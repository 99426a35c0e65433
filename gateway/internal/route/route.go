// Package route is the gateway's fixed table of public operations: which method and path exist,
// and which upstream service answers each. The table is built once at start; nothing here runs per
// request.
package route

import (
	"fmt"
	"net/url"
	"strings"

	"ccplatform/pkg/access"
)

// Service names an upstream that answers a group of routes.
type Service string

// The upstreams, and Gateway for the routes the gateway answers itself.
const (
	Gateway      Service = "gateway"
	Order        Service = "order"
	Lead         Service = "lead"
	Call         Service = "call"
	User         Service = "user"
	Notification Service = "notification"
	Webhook      Service = "webhook"
	Report       Service = "report"
)

// Services are the upstreams, in the order the health check lists them.
func Services() []Service { return []Service{Order, User, Lead, Call, Notification, Webhook, Report} }

// Route is one public operation. Path is a gin pattern without the trailing slash, because the
// gateway trims it before routing and forwards paths without it.
type Route struct {
	Method  string
	Path    string
	Service Service
	// UpstreamPath, when set, is the path forwarded instead of the request's path: an alias that
	// the upstream knows under its contract name.
	UpstreamPath string
	// Stream marks a long-lived response (server-sent events) that must outlive the server's
	// read and write timeouts.
	Stream bool
	// Policy is who may call the route; the gateway enforces it before forwarding (403).
	Policy Policy
	// BodyLimit, when set, replaces the gateway's body limit for this route (an upload): its body
	// streams to the upstream instead of being buffered.
	BodyLimit int64
}

// importBodyLimit is the bulk import's own body limit (the lead service's imports.MaxBody).
const importBodyLimit = 64 << 20

// Policy is the function-level rule of one route (gateway/README.md, "Who may do what"). What a
// caller sees of the data (its own orders, its own calls) is each service's rule.
type Policy struct {
	// Groups may call the route; any other group is refused.
	Groups []access.Group
	// Scope is what a key narrowed by scopes must carry for the route; "" needs none.
	Scope access.Scope
	// FullKey refuses keys narrowed by scopes altogether: such a key cannot mint or revoke keys.
	FullKey bool
}

// Allows reports whether the group may call the route.
func (p Policy) Allows(g access.Group) bool {
	for _, allowed := range p.Groups {
		if allowed == g {
			return true
		}
	}
	return false
}

// The groups of the policy table, by what they share.
var (
	everyone    = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter, access.Arbitration, access.None}
	anyGroup    = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter, access.Arbitration}
	staff       = []access.Group{access.Admin, access.Moderator}
	owners      = []access.Group{access.Admin, access.Moderator, access.Client}
	leadMakers  = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter}
	seniorStaff = []access.Group{access.Admin, access.Moderator, access.CallCenterSenior}
	userReaders = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter}
	teamReaders = []access.Group{access.Admin, access.Moderator, access.CallCenterSenior, access.CallCenter}
	// orderReaders read the orders report; agentReaders the agents report and the live stream (an
	// agent about itself).
	orderReaders = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior}
	agentReaders = []access.Group{access.Admin, access.Moderator, access.Client, access.CallCenterSenior, access.CallCenter}
)

// Table is every public route: the 23 contract operations plus the documented extras (the user
// list alias, the async lead job status, bulk lead import, the dialing queue and the do-not-call list, the
// notification inbox and its live stream, the API-key self-service), each with its policy.
func Table() []Route {
	return []Route{
		// order service
		{Method: "POST", Path: "/v2/order/create", Service: Order, Policy: Policy{Groups: owners, Scope: access.OrdersWrite}},
		{Method: "POST", Path: "/v2/order/update/:orderId", Service: Order, Policy: Policy{Groups: owners, Scope: access.OrdersWrite}},
		{Method: "GET", Path: "/v2/order/detail/:orderId", Service: Order, Policy: Policy{Groups: anyGroup, Scope: access.OrdersRead}},
		{Method: "POST", Path: "/v2/call-attempt/create", Service: Order, Policy: Policy{Groups: seniorStaff, Scope: access.OrdersWrite}},

		// lead service
		{Method: "POST", Path: "/v2/lead/create", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v2/lead/create-async", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v2/lead/update/:leadId", Service: Lead, Policy: Policy{Groups: anyGroup, Scope: access.LeadsWrite}},
		{Method: "GET", Path: "/v2/lead", Service: Lead, Policy: Policy{Groups: anyGroup, Scope: access.LeadsRead}},
		{Method: "GET", Path: "/v2/lead/detail/:leadId", Service: Lead, Policy: Policy{Groups: anyGroup, Scope: access.LeadsRead}},
		{Method: "GET", Path: "/v2/lead/job/:jobId", Service: Lead, Policy: Policy{Groups: anyGroup, Scope: access.LeadsRead}},
		// bulk import: the rows are checked as creates by the importing caller
		{Method: "POST", Path: "/v2/lead/import", Service: Lead, BodyLimit: importBodyLimit, Policy: Policy{Groups: leadMakers, Scope: access.LeadsWrite}},
		{Method: "GET", Path: "/v2/lead/import/:importId", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsRead}},
		{Method: "GET", Path: "/v2/lead/import/:importId/rows", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsRead}},
		{Method: "POST", Path: "/v1/lead/create", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v1/lead/create-async", Service: Lead, Policy: Policy{Groups: leadMakers, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v1/lead/update/:lead_id", Service: Lead, Policy: Policy{Groups: anyGroup, Scope: access.LeadsWrite}},
		// the dialing queue and the do-not-call list (lead service): staff, and clients for their
		// own orders (the service narrows them)
		{Method: "POST", Path: "/v2/dialer/lease", Service: Lead, Policy: Policy{Groups: owners, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v2/dialer/release", Service: Lead, Policy: Policy{Groups: owners, Scope: access.LeadsWrite}},
		{Method: "POST", Path: "/v2/dialer/extend", Service: Lead, Policy: Policy{Groups: owners, Scope: access.LeadsWrite}},
		{Method: "GET", Path: "/v2/dialer/pace/:orderId", Service: Lead, Policy: Policy{Groups: owners, Scope: access.LeadsRead}},
		{Method: "GET", Path: "/v2/dialer/explain/:orderId", Service: Lead, Policy: Policy{Groups: owners, Scope: access.LeadsRead}},
		{Method: "POST", Path: "/v2/dnc/create", Service: Lead, Policy: Policy{Groups: owners, Scope: access.DNCWrite}},
		{Method: "POST", Path: "/v2/dnc/delete", Service: Lead, Policy: Policy{Groups: owners, Scope: access.DNCWrite}},
		{Method: "GET", Path: "/v2/dnc", Service: Lead, Policy: Policy{Groups: owners, Scope: access.DNCWrite}},
		{Method: "GET", Path: "/v2/dnc/check", Service: Lead, Policy: Policy{Groups: owners, Scope: access.DNCWrite}},

		// call service
		{Method: "GET", Path: "/v2/call", Service: Call, Policy: Policy{Groups: anyGroup, Scope: access.CallsRead}},
		{Method: "GET", Path: "/v2/call/detail/:callId", Service: Call, Policy: Policy{Groups: anyGroup, Scope: access.CallsRead}},

		// user service
		{Method: "GET", Path: "/v2/user/list", Service: User, Policy: Policy{Groups: userReaders, Scope: access.UsersRead}},
		{Method: "GET", Path: "/v2/user", Service: User, UpstreamPath: "/v2/user/list", Policy: Policy{Groups: userReaders, Scope: access.UsersRead}},
		{Method: "GET", Path: "/v2/user/detail/:userId", Service: User, Policy: Policy{Groups: userReaders, Scope: access.UsersRead}},
		{Method: "POST", Path: "/v2/agent-group/create", Service: User, Policy: Policy{Groups: seniorStaff, Scope: access.AgentGroupsWrite}},
		{Method: "POST", Path: "/v2/agent-group/update/:id", Service: User, Policy: Policy{Groups: seniorStaff, Scope: access.AgentGroupsWrite}},
		{Method: "GET", Path: "/v2/agent-group", Service: User, Policy: Policy{Groups: teamReaders, Scope: access.UsersRead}},
		// agent state: an agent its own, a senior its groups', staff everyone's (the service narrows)
		{Method: "POST", Path: "/v2/agent/state", Service: User, Policy: Policy{Groups: teamReaders, Scope: access.AgentStateWrite}},
		{Method: "GET", Path: "/v2/agent/state", Service: User, Policy: Policy{Groups: teamReaders, Scope: access.UsersRead}},
		{Method: "POST", Path: "/v2/api-key/create", Service: User, Policy: Policy{Groups: anyGroup, FullKey: true}},
		{Method: "GET", Path: "/v2/api-key", Service: User, Policy: Policy{Groups: anyGroup, FullKey: true}},
		{Method: "POST", Path: "/v2/api-key/revoke/:id", Service: User, Policy: Policy{Groups: anyGroup, FullKey: true}},

		// notification service
		{Method: "POST", Path: "/v2/notification/private", Service: Notification, Policy: Policy{Groups: seniorStaff, Scope: access.NotificationsSend}},
		{Method: "POST", Path: "/v2/notification/public", Service: Notification, Policy: Policy{Groups: staff, Scope: access.NotificationsSend}},
		{Method: "POST", Path: "/v2/notification/group", Service: Notification, Policy: Policy{Groups: seniorStaff, Scope: access.NotificationsSend}},
		{Method: "GET", Path: "/v2/notification", Service: Notification, Policy: Policy{Groups: everyone}},
		{Method: "GET", Path: "/v2/notification/stream", Service: Notification, Stream: true, Policy: Policy{Groups: everyone}},
		{Method: "POST", Path: "/v2/notification/read/:id", Service: Notification, Policy: Policy{Groups: everyone}},

		// webhook service: partners' subscriptions, scoped to their owner (the service narrows them)
		{Method: "POST", Path: "/v2/webhook/create", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "POST", Path: "/v2/webhook/update/:webhookId", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "POST", Path: "/v2/webhook/delete/:webhookId", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "POST", Path: "/v2/webhook/rotate-secret/:webhookId", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "GET", Path: "/v2/webhook", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "GET", Path: "/v2/webhook/detail/:webhookId", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "GET", Path: "/v2/webhook/:webhookId/deliveries", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},
		{Method: "POST", Path: "/v2/webhook/:webhookId/redeliver/:eventId", Service: Webhook, Policy: Policy{Groups: owners, Scope: access.WebhooksWrite}},

		// report service: campaign figures, narrowed by the service to the orders the caller sees
		{Method: "GET", Path: "/v2/report/orders", Service: Report, Policy: Policy{Groups: orderReaders, Scope: access.CallsRead}},
		{Method: "GET", Path: "/v2/report/agents", Service: Report, Policy: Policy{Groups: agentReaders, Scope: access.CallsRead}},
		// the live stream of the orders being worked: the same visibility as the reports (an agent
		// sees itself)
		{Method: "GET", Path: "/v2/report/live", Service: Report, Stream: true, Policy: Policy{Groups: agentReaders, Scope: access.CallsRead}},

		// answered by the gateway itself
		{Method: "GET", Path: "/v1/health/check", Service: Gateway, Policy: Policy{Groups: everyone}},
	}
}

// Upstreams maps each service to its base URL; a service without one is not deployed.
type Upstreams map[Service]*url.URL

// ParseUpstreams turns configured base URLs into Upstreams. An empty string means the service is
// not deployed and is left out, so its routes answer 501.
func ParseUpstreams(raw map[Service]string) (Upstreams, error) {
	ups := make(Upstreams, len(raw))
	for svc, s := range raw {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s upstream URL: %w", svc, err)
		}
		// The gateway's forwarder speaks plain HTTP/1.1 to the services it sits beside; the
		// URL names an address and at most a base path.
		if u.Scheme != "http" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
			return nil, fmt.Errorf("%s upstream URL %q: must be http://host[:port][/path]", svc, s)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		ups[svc] = u
	}
	return ups, nil
}
