package seed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/user"
)

// The demo orders, their leads and their calls are loaded through the owning services' APIs, each
// part only when it is missing: an order when no order has its code, leads when the order has
// none, calls when none of its leads has any. So seeding on every start changes nothing once the
// demo data is there, and a part lost (a database reset of one service) comes back.

// orderInput is the order service's create body (operation 1) of a demo order.
type orderInput struct {
	Code                       string               `json:"code"`
	ServiceTitle               string               `json:"serviceTitle"`
	Title                      string               `json:"title"`
	Status                     string               `json:"status"`
	CallSchedule               [][]string           `json:"callSchedule"`
	CallHolidayOverrides       []string             `json:"callHolidayOverrides"`
	AutoDialingEnabled         bool                 `json:"autoDialingEnabled"`
	PredictiveModeEnabled      bool                 `json:"predictiveModeEnabled"`
	AIDefaultLanguage          string               `json:"aiDefaultLanguage"`
	AmdDetectionEnabled        bool                 `json:"amdDetectionEnabled"`
	CallRecordRule             string               `json:"callRecordRule"`
	SipEndpointUsageScheme     string               `json:"sipEndpointUsageScheme"`
	AgentUserIDs               []int64              `json:"agentUserIds"`
	AgentGroupIDs              []int64              `json:"agentGroupIds"`
	ShowLeadContactsToAgent    bool                 `json:"showLeadContactsToAgent"`
	QualifiedLeadsPerDayLimit  int64                `json:"qualifiedLeadsPerDayLimit"`
	SpeechRecognitionEnabled   bool                 `json:"speechRecognitionEnabled"`
	SipEndpointIDs             []int64              `json:"sipEndpointIds"`
	CustomValues               map[string]any       `json:"customValues"`
	AgentLeadCreationIsAllowed bool                 `json:"agentLeadCreationIsAllowed"`
	AgentLeadEditMode          string               `json:"agentLeadEditMode"`
	TransferNumbers            []DemoTransferNumber `json:"transferNumbers"`
}

// orderRefs are the ids a demo order's names stand for in this database.
type orderRefs struct {
	users  map[string]int64 // e-mail → user id
	groups map[string]int64 // English name → agent group id
	fields map[string]int64 // order custom-field code → id
}

// orderBody is the create body of d with every name replaced by its id.
func orderBody(d DemoOrder, refs orderRefs) (orderInput, error) {
	agents, err := idsOf("agent", d.AgentEmails, refs.users)
	if err != nil {
		return orderInput{}, err
	}
	groups, err := idsOf("agent group", d.AgentGroupNames, refs.groups)
	if err != nil {
		return orderInput{}, err
	}
	values, err := valuesByID("order custom field", d.CustomValues, refs.fields)
	if err != nil {
		return orderInput{}, err
	}
	return orderInput{
		Code: d.Code, ServiceTitle: d.ServiceTitle, Title: d.Title, Status: d.Status,
		CallSchedule: d.Schedule, CallHolidayOverrides: d.Holidays,
		AutoDialingEnabled: true, PredictiveModeEnabled: d.PredictiveMode, AIDefaultLanguage: "ru",
		AmdDetectionEnabled: true, CallRecordRule: "client_is_connected", SipEndpointUsageScheme: "even_loaded",
		AgentUserIDs: agents, AgentGroupIDs: groups, ShowLeadContactsToAgent: true,
		QualifiedLeadsPerDayLimit: d.QualifiedPerDayLimit, SpeechRecognitionEnabled: true,
		SipEndpointIDs: d.SipEndpointIDs, CustomValues: values,
		AgentLeadCreationIsAllowed: true, AgentLeadEditMode: "during-call",
		TransferNumbers: d.TransferNumbers,
	}, nil
}

// leadInput is lead-api's create body (operation 4) of a demo lead.
type leadInput struct {
	LeadType             string         `json:"leadType"`
	Phone                string         `json:"phone"`
	OrderID              int64          `json:"orderId"`
	OrderCode            string         `json:"orderCode"`
	Name                 string         `json:"name,omitempty"`
	SourceComment        string         `json:"sourceComment,omitempty"`
	ExternalIDCrmA       string         `json:"externalIdCrmA,omitempty"`
	Priority             int64          `json:"priority,omitempty"`
	UTCOffset            *int64         `json:"utcOffset,omitempty"`
	StatusID             int64          `json:"statusId"`
	Source               string         `json:"source"`
	AdCampaignID         string         `json:"adCampaignId,omitempty"`
	CustomValues         map[string]any `json:"customValues,omitempty"`
	PlanningCallDateTime string         `json:"planningCallDateTime,omitempty"`
}

// leadRefs are the ids of the lead service's catalogs in this database.
type leadRefs struct {
	statuses map[string]int64 // status code → id
	fields   map[string]int64 // lead custom-field code → id
}

// leadBody is the create body of l for an order, with codes replaced by ids and a callback planned
// relative to now.
func leadBody(l DemoLead, orderID int64, orderCode string, refs leadRefs, now time.Time) (leadInput, error) {
	status, ok := refs.statuses[l.Status]
	if !ok {
		return leadInput{}, fmt.Errorf("lead %s: no lead status has code %q", l.Phone, l.Status)
	}
	values, err := valuesByID("lead custom field", l.CustomValues, refs.fields)
	if err != nil {
		return leadInput{}, fmt.Errorf("lead %s: %w", l.Phone, err)
	}
	in := leadInput{
		LeadType: l.LeadType, Phone: l.Phone, OrderID: orderID, OrderCode: orderCode, Name: l.Name,
		SourceComment: l.Comment, ExternalIDCrmA: l.CRMID, Priority: l.Priority, UTCOffset: l.UTCOffset,
		StatusID: status, Source: l.Source, AdCampaignID: l.AdCampaignID, CustomValues: values,
	}
	if l.CallbackIn > 0 {
		in.PlanningCallDateTime = now.Add(l.CallbackIn).UTC().Truncate(time.Minute).Format(time.RFC3339)
	}
	return in, nil
}

// SecondaryLeads counts the leads whose phone (digits only, however it is written) an earlier lead
// of the list has: the leads the lead service marks secondary.
func SecondaryLeads(leads []DemoLead) int {
	seen := map[string]bool{}
	n := 0
	for _, l := range leads {
		k := phoneDigits(l.Phone)
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}

func phoneDigits(p string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, p)
}

// CallCount is how many calls the seed places for an order with n leads: every lead is called, and
// half of them twice (a no-answer and a retry, or a callback), within simulate-calls' limit.
func CallCount(n int) int {
	return min(n+(n+1)/2, 1000)
}

func idsOf(kind string, names []string, ids map[string]int64) ([]int64, error) {
	out := make([]int64, 0, len(names))
	for _, n := range names {
		id, ok := ids[n]
		if !ok {
			return nil, fmt.Errorf("no %s %q (run the earlier seed steps)", kind, n)
		}
		out = append(out, id)
	}
	return out, nil
}

func valuesByID(kind string, values map[string]any, ids map[string]int64) (map[string]any, error) {
	out := make(map[string]any, len(values))
	for code, v := range values {
		id, ok := ids[code]
		if !ok {
			return nil, fmt.Errorf("no %s has code %q (run the earlier seed steps)", kind, code)
		}
		out[strconv.FormatInt(id, 10)] = v
	}
	return out, nil
}

// PublishCalls plays the telephony platform: it publishes count finished-call events for leads of
// an order to the platform's queue, where call-ingest stores them (ccadmin simulate-calls).
type PublishCalls func(ctx context.Context, orderID int64, count int) error

// Orders is the step that makes DemoOrders exist, found by code, with the demo agents, agent
// groups and order custom fields (it runs after those steps).
func Orders(order *svcclient.Client, users *user.Store, groups *agentgroup.Store, now func() time.Time) Step {
	return Step{Name: "demo orders", Run: func(ctx context.Context) (string, error) {
		demo := DemoOrders(now())
		refs, err := loadOrderRefs(ctx, order, users, groups, demo)
		if err != nil {
			return "", err
		}
		var report []string
		for _, d := range demo {
			id, found, err := findOrder(ctx, order, d.Code)
			if err != nil {
				return "", err
			}
			if found {
				report = append(report, fmt.Sprintf("%s #%d exists", d.Code, id))
				continue
			}
			body, err := orderBody(d, refs)
			if err != nil {
				return "", fmt.Errorf("order %s: %w", d.Code, err)
			}
			var created struct {
				ID int64 `json:"id"`
			}
			err = order.Do(ctx, http.MethodPost, "/v2/order/create", body, &created)
			if apperr.KindOf(err) == apperr.Conflict {
				// Another seed made it meanwhile.
				id, err := mustFindOrder(ctx, order, d.Code)
				if err != nil {
					return "", err
				}
				report = append(report, fmt.Sprintf("%s #%d exists", d.Code, id))
				continue
			}
			if err != nil {
				return "", fmt.Errorf("create order %s: %w", d.Code, err)
			}
			report = append(report, fmt.Sprintf("%s #%d created", d.Code, created.ID))
		}
		return strings.Join(report, ", "), nil
	}}
}

func loadOrderRefs(ctx context.Context, order *svcclient.Client, users *user.Store, groups *agentgroup.Store, demo []DemoOrder) (orderRefs, error) {
	refs := orderRefs{users: map[string]int64{}, groups: map[string]int64{}}
	for _, d := range demo {
		for _, email := range d.AgentEmails {
			if _, ok := refs.users[email]; ok {
				continue
			}
			u, err := users.GetByEmail(ctx, email)
			if err != nil {
				return orderRefs{}, fmt.Errorf("agent of order %s: %w", d.Code, err)
			}
			refs.users[email] = u.ID
		}
	}
	list, err := groups.List(ctx, agentgroup.Filter{})
	if err != nil {
		return orderRefs{}, err
	}
	for _, g := range list {
		if _, ok := refs.groups[g.Names.GB]; !ok { // the oldest group of a name, as Ensure keeps
			refs.groups[g.Names.GB] = g.ID
		}
	}
	if refs.fields, err = catalog(ctx, order, "/internal/custom-fields"); err != nil {
		return orderRefs{}, err
	}
	return refs, nil
}

// OrderLeads is the step that gives every demo order its DemoLeads, unless it has leads already:
// each lead is created like a client's sync create, and those with an Outcome are then moved to it.
func OrderLeads(order, lead *svcclient.Client, now func() time.Time) Step {
	return Step{Name: "demo leads", Run: func(ctx context.Context) (string, error) {
		at := now()
		statuses, err := catalog(ctx, lead, "/internal/lead-statuses")
		if err != nil {
			return "", err
		}
		fields, err := catalog(ctx, lead, "/internal/custom-fields")
		if err != nil {
			return "", err
		}
		refs := leadRefs{statuses: statuses, fields: fields}
		var report []string
		for _, d := range DemoOrders(at) {
			id, err := mustFindOrder(ctx, order, d.Code)
			if err != nil {
				return "", err
			}
			existing, err := orderLeadCount(ctx, lead, id, 1)
			if err != nil {
				return "", err
			}
			if existing > 0 {
				report = append(report, fmt.Sprintf("%s has leads", d.Code))
				continue
			}
			outcomes := 0
			for _, l := range d.Leads {
				body, err := leadBody(l, id, d.Code, refs, at)
				if err != nil {
					return "", err
				}
				var created struct {
					ID int64 `json:"id"`
				}
				if err := lead.Do(ctx, http.MethodPost, "/v2/lead/create", body, &created); err != nil {
					return "", fmt.Errorf("create lead %s of order %s: %w", l.Phone, d.Code, err)
				}
				if l.Outcome == "" {
					continue
				}
				status, ok := refs.statuses[l.Outcome]
				if !ok {
					return "", fmt.Errorf("lead %s: no lead status has code %q", l.Phone, l.Outcome)
				}
				path := fmt.Sprintf("/v2/lead/update/%d", created.ID)
				if err := lead.Do(ctx, http.MethodPost, path, map[string]int64{"statusId": status}, nil); err != nil {
					return "", fmt.Errorf("set the status of lead %d: %w", created.ID, err)
				}
				outcomes++
			}
			report = append(report, fmt.Sprintf("%s: %d created (%d secondary, %d with an outcome)",
				d.Code, len(d.Leads), SecondaryLeads(d.Leads), outcomes))
		}
		return strings.Join(report, ", "), nil
	}}
}

// OrderCalls is the step that gives the leads of every demo order calls, unless the order has
// calls already: it publishes CallCount events through publish and waits, up to wait, until the
// call service has stored them all, so that the calls are there when the seed ends and a second
// seed does not publish them again.
func OrderCalls(order, lead, call *svcclient.Client, publish PublishCalls, wait time.Duration, now func() time.Time) Step {
	return Step{Name: "demo calls", Run: func(ctx context.Context) (string, error) {
		type pending struct {
			code  string
			id    int64
			count int
		}
		var published []pending
		var report []string
		for _, d := range DemoOrders(now()) {
			id, err := mustFindOrder(ctx, order, d.Code)
			if err != nil {
				return "", err
			}
			calls, err := orderCallTotal(ctx, call, id)
			if err != nil {
				return "", err
			}
			if calls > 0 {
				report = append(report, fmt.Sprintf("%s has calls", d.Code))
				continue
			}
			leads, err := orderLeadCount(ctx, lead, id, 1000)
			if err != nil {
				return "", err
			}
			if leads == 0 {
				report = append(report, fmt.Sprintf("%s has no leads to call", d.Code))
				continue
			}
			n := CallCount(leads)
			if err := publish(ctx, id, n); err != nil {
				return "", fmt.Errorf("calls of order %s: %w", d.Code, err)
			}
			published = append(published, pending{code: d.Code, id: id, count: n})
		}
		deadline := time.Now().Add(wait)
		for _, p := range published {
			for {
				stored, err := orderCallTotal(ctx, call, p.id)
				if err != nil {
					return "", err
				}
				if stored >= p.count {
					break
				}
				if time.Now().After(deadline) {
					return "", fmt.Errorf("order %s: %d call events published, %d stored after %s (is call-ingest running?)",
						p.code, p.count, stored, wait)
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
			}
			report = append(report, fmt.Sprintf("%s: %d calls published and stored", p.code, p.count))
		}
		return strings.Join(report, ", "), nil
	}}
}

// findOrder looks an order up by code; found is false when no order has it.
func findOrder(ctx context.Context, order *svcclient.Client, code string) (id int64, found bool, err error) {
	var o struct {
		ID int64 `json:"id"`
	}
	err = order.Do(ctx, http.MethodGet, "/internal/orders?"+url.Values{"code": {code}}.Encode(), nil, &o)
	switch {
	case apperr.KindOf(err) == apperr.NotFound:
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("find order %s: %w", code, err)
	}
	return o.ID, true, nil
}

func mustFindOrder(ctx context.Context, order *svcclient.Client, code string) (int64, error) {
	id, found, err := findOrder(ctx, order, code)
	if err == nil && !found {
		err = fmt.Errorf("demo order %s does not exist (the demo orders step makes it)", code)
	}
	return id, err
}

// orderLeadCount is how many leads the order has, counting up to limit.
func orderLeadCount(ctx context.Context, lead *svcclient.Client, orderID int64, limit int) (int, error) {
	var out struct {
		List []struct {
			ID int64 `json:"id"`
		} `json:"list"`
	}
	path := fmt.Sprintf("/internal/leads?orderId=%d&limit=%d", orderID, limit)
	if err := lead.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return 0, fmt.Errorf("leads of order %d: %w", orderID, err)
	}
	return len(out.List), nil
}

// orderCallTotal is how many calls the call service has stored for the order.
func orderCallTotal(ctx context.Context, call *svcclient.Client, orderID int64) (int, error) {
	var out struct {
		Total int `json:"total"`
	}
	q := url.Values{"orderIds[]": {strconv.FormatInt(orderID, 10)}, "limit": {"1"}}
	if err := call.Do(ctx, http.MethodGet, "/v2/call?"+q.Encode(), nil, &out); err != nil {
		return 0, fmt.Errorf("calls of order %d: %w", orderID, err)
	}
	return out.Total, nil
}

// catalog reads a catalog of another service ({"list":[{"id","code",...}]}) as code → id.
func catalog(ctx context.Context, c *svcclient.Client, path string) (map[string]int64, error) {
	var out struct {
		List []struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		} `json:"list"`
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ids := make(map[string]int64, len(out.List))
	for _, item := range out.List {
		ids[item.Code] = item.ID
	}
	return ids, nil
}
