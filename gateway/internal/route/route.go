// Package route is the gateway's fixed table of public operations: which method and path exist,
// and which upstream service answers each. The table is built once at start; nothing here runs per
// request.
package route

import (
	"fmt"
	"net/url"
	"strings"
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
)

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
}

// Table is every public route: the 23 contract operations plus the documented extras (the user
// list alias, the async lead job status, the notification inbox and its live stream).
func Table() []Route {
	return []Route{
		// order service
		{Method: "POST", Path: "/v2/order/create", Service: Order},
		{Method: "POST", Path: "/v2/order/update/:orderId", Service: Order},
		{Method: "GET", Path: "/v2/order/detail/:orderId", Service: Order},
		{Method: "POST", Path: "/v2/call-attempt/create", Service: Order},

		// lead service
		{Method: "POST", Path: "/v2/lead/create", Service: Lead},
		{Method: "POST", Path: "/v2/lead/create-async", Service: Lead},
		{Method: "POST", Path: "/v2/lead/update/:leadId", Service: Lead},
		{Method: "GET", Path: "/v2/lead", Service: Lead},
		{Method: "GET", Path: "/v2/lead/detail/:leadId", Service: Lead},
		{Method: "GET", Path: "/v2/lead/job/:jobId", Service: Lead},
		{Method: "POST", Path: "/v1/lead/create", Service: Lead},
		{Method: "POST", Path: "/v1/lead/create-async", Service: Lead},
		{Method: "POST", Path: "/v1/lead/update/:lead_id", Service: Lead},

		// call service
		{Method: "GET", Path: "/v2/call", Service: Call},
		{Method: "GET", Path: "/v2/call/detail/:callId", Service: Call},

		// user service
		{Method: "GET", Path: "/v2/user/list", Service: User},
		{Method: "GET", Path: "/v2/user", Service: User, UpstreamPath: "/v2/user/list"},
		{Method: "GET", Path: "/v2/user/detail/:userId", Service: User},
		{Method: "POST", Path: "/v2/agent-group/create", Service: User},
		{Method: "POST", Path: "/v2/agent-group/update/:id", Service: User},
		{Method: "GET", Path: "/v2/agent-group", Service: User},

		// notification service
		{Method: "POST", Path: "/v2/notification/private", Service: Notification},
		{Method: "POST", Path: "/v2/notification/public", Service: Notification},
		{Method: "POST", Path: "/v2/notification/group", Service: Notification},
		{Method: "GET", Path: "/v2/notification", Service: Notification},
		{Method: "GET", Path: "/v2/notification/stream", Service: Notification, Stream: true},
		{Method: "POST", Path: "/v2/notification/read/:id", Service: Notification},

		// answered by the gateway itself
		{Method: "GET", Path: "/v1/health/check", Service: Gateway},
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
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s upstream URL %q: must be http(s)://host[:port]", svc, s)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		ups[svc] = u
	}
	return ups, nil
}
