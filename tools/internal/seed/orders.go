package seed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/demo"
	"ccplatform/tools/internal/userdir"
)

// The demo orders, their leads and their calls are loaded through the owning services' APIs, each
// part only when it is missing: an order when no order has its code, leads when the order has
// none, calls when none of its leads has any. So seeding on every start changes nothing once the
// demo data is there, and a part lost (a database reset of one service) comes back.

// orderRefs are the ids a demo order's names stand for in this database.
type orderRefs struct {
	users  map[string]int // e-mail → user id
	groups map[string]int // English name → agent group id
	fields map[string]int // order custom-field code → id
}

// orderBody is the create body of d with every name replaced by its id. Every member the demo sets
// is sent, false and zero ones included, so the service's defaults never decide a demo order.
func orderBody(d demo.Order, refs orderRefs) (ccapi.OrderCreate, error) {
	agents, err := idsOf("agent", d.AgentEmails, refs.users)
	if err != nil {
		return ccapi.OrderCreate{}, err
	}
	groups, err := idsOf("agent group", d.AgentGroupNames, refs.groups)
	if err != nil {
		return ccapi.OrderCreate{}, err
	}
	values, err := valuesByID("order custom field", d.CustomValues, refs.fields)
	if err != nil {
		return ccapi.OrderCreate{}, err
	}
	body := ccapi.OrderCreate{
		Code:                       &d.Code,
		ServiceTitle:               d.ServiceTitle,
		Title:                      d.Title,
		Status:                     ccapi.OrderCreateStatus(d.Status),
		CallSchedule:               &d.Schedule,
		CallHolidayOverrides:       &d.Holidays,
		AutoDialingEnabled:         new(true),
		PredictiveModeEnabled:      new(d.PredictiveMode),
		AiDefaultLanguage:          new("ru"),
		AmdDetectionEnabled:        new(true),
		CallRecordRule:             new(ccapi.OrderCreateCallRecordRuleClientIsConnected),
		SipEndpointUsageScheme:     new(ccapi.OrderCreateSipEndpointUsageSchemeEvenLoaded),
		AgentUserIds:               &agents,
		AgentGroupIds:              &groups,
		ShowLeadContactsToAgent:    new(true),
		QualifiedLeadsPerDayLimit:  new(int(d.QualifiedPerDayLimit)),
		SpeechRecognitionEnabled:   new(true),
		SipEndpointIds:             ints(d.SipEndpointIDs),
		CustomValues:               &values,
		AgentLeadCreationIsAllowed: new(true),
		AgentLeadEditMode:          new(ccapi.OrderCreateAgentLeadEditModeDuringCall),
	}
	if d.TransferNumbers != nil {
		// The element type is an unnamed struct of the generated code: allocated through the
		// field, not spelled out again here.
		numbers := allocate(&body.TransferNumbers, len(d.TransferNumbers))
		for i, n := range d.TransferNumbers {
			numbers[i].Number, numbers[i].Names = n.Number, &n.Names
		}
	}
	return body, nil
}

// allocate points *field at a new slice of n zero elements and returns that slice.
func allocate[E any](field **[]E, n int) []E {
	s := make([]E, n)
	*field = &s
	return s
}

// leadRefs are the ids of the lead service's catalogs in this database.
type leadRefs struct {
	statuses map[string]int // status code → id
	fields   map[string]int // lead custom-field code → id
}

// leadBody is the create body of l for an order, with codes replaced by ids and a callback planned
// relative to now. Text members and the priority are sent only when set; the status and the
// source always are.
func leadBody(l demo.Lead, orderID int64, orderCode string, refs leadRefs, now time.Time) (ccapi.LeadCreate, error) {
	status, ok := refs.statuses[l.Status]
	if !ok {
		return ccapi.LeadCreate{}, fmt.Errorf("lead %s: no lead status has code %q", l.Phone, l.Status)
	}
	values, err := valuesByID("lead custom field", l.CustomValues, refs.fields)
	if err != nil {
		return ccapi.LeadCreate{}, fmt.Errorf("lead %s: %w", l.Phone, err)
	}
	in := ccapi.LeadCreate{
		LeadType: ccapi.LeadCreateLeadType(l.LeadType), Phone: l.Phone, OrderId: int(orderID), OrderCode: orderCode,
		Name: unlessZero(l.Name), ExternalIdCrmA: unlessZero(l.CRMID), Priority: unlessZero(int(l.Priority)),
		StatusId: &status, Source: &l.Source, AdCampaignId: unlessZero(l.AdCampaignID),
	}
	if l.UTCOffset != nil {
		in.UtcOffset = new(int(*l.UTCOffset))
	}
	if len(values) > 0 {
		in.CustomValues = &values
	}
	// sourceComment and planningCallDateTime are unions in the contract (any JSON kept as text; a
	// Unix time or an ISO date-time): the demo sends the string variant of each.
	if l.Comment != "" {
		in.SourceComment = new(ccapi.TextOrJSON)
		if err := in.SourceComment.FromTextOrJSON0(l.Comment); err != nil {
			return ccapi.LeadCreate{}, fmt.Errorf("lead %s: sourceComment: %w", l.Phone, err)
		}
	}
	if l.CallbackIn > 0 {
		in.PlanningCallDateTime = new(ccapi.UnixOrISOTime)
		at := now.Add(l.CallbackIn).UTC().Truncate(time.Minute).Format(time.RFC3339)
		if err := in.PlanningCallDateTime.FromUnixOrISOTime1(at); err != nil {
			return ccapi.LeadCreate{}, fmt.Errorf("lead %s: planningCallDateTime: %w", l.Phone, err)
		}
	}
	return in, nil
}

// unlessZero is v to send, or nil to leave the member out when v is its type's zero.
func unlessZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// CallCount is how many calls the seed places for an order with n leads: every lead is called, and
// half of them twice (a no-answer and a retry, or a callback), within simulate-calls' limit.
func CallCount(n int) int {
	return min(n+(n+1)/2, 1000)
}

func idsOf(kind string, names []string, ids map[string]int) ([]int, error) {
	out := make([]int, 0, len(names))
	for _, n := range names {
		id, ok := ids[n]
		if !ok {
			return nil, fmt.Errorf("no %s %q (run the earlier seed steps)", kind, n)
		}
		out = append(out, id)
	}
	return out, nil
}

// ints are ids as the generated bodies type them; nil stays nil, sent as null.
func ints(ids []int64) []int {
	if ids == nil {
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func valuesByID(kind string, values map[string]any, ids map[string]int) (map[string]any, error) {
	out := make(map[string]any, len(values))
	for code, v := range values {
		id, ok := ids[code]
		if !ok {
			return nil, fmt.Errorf("no %s has code %q (run the earlier seed steps)", kind, code)
		}
		out[strconv.Itoa(id)] = v
	}
	return out, nil
}

// PublishCalls plays the telephony platform: it publishes count finished-call events for leads of
// an order to the platform's queue, where call-ingest stores them (ccadmin simulate-calls).
type PublishCalls func(ctx context.Context, orderID int64, count int) error

// Orders is the step that makes demo.Orders exist, found by code, with the demo agents and agent
// groups (the user service's, read through its API) and the order custom fields (it runs after
// that step).
func Orders(order *svcclient.Client, users *userdir.Directory, now func() time.Time) Step {
	return Step{Name: "demo orders", Run: func(ctx context.Context) (string, error) {
		orders := demo.Orders(now())
		refs, err := loadOrderRefs(ctx, order, users, orders)
		if err != nil {
			return "", err
		}
		var report []string
		for _, d := range orders {
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
			var created ccapi.IDResult
			err = order.Do(ctx, http.MethodPost, "/v2/order/create", body, &created.Data)
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
			report = append(report, fmt.Sprintf("%s #%d created", d.Code, created.Data.Id))
		}
		return strings.Join(report, ", "), nil
	}}
}

func loadOrderRefs(ctx context.Context, order *svcclient.Client, users *userdir.Directory, orders []demo.Order) (orderRefs, error) {
	refs, err := userRefs(ctx, users, orders)
	if err != nil {
		return orderRefs{}, err
	}
	if refs.fields, err = catalog(ctx, order, "/internal/custom-fields"); err != nil {
		return orderRefs{}, err
	}
	return refs, nil
}

// userRefs are the ids of the orders' agents and agent groups, as the user service gives them.
func userRefs(ctx context.Context, users *userdir.Directory, orders []demo.Order) (orderRefs, error) {
	refs := orderRefs{users: map[string]int{}, groups: map[string]int{}}
	for _, d := range orders {
		found, err := users.ByEmails(ctx, d.AgentEmails...)
		if err != nil {
			return orderRefs{}, fmt.Errorf("agents of order %s: %w", d.Code, err)
		}
		for email, u := range found {
			refs.users[email] = u.Id
		}
	}
	groups, err := users.AgentGroups(ctx)
	if err != nil {
		return orderRefs{}, err
	}
	for _, g := range groups {
		if _, ok := refs.groups[g.Names.Gb]; !ok { // the oldest group of a name, as user-admin seed keeps
			refs.groups[g.Names.Gb] = g.Id
		}
	}
	return refs, nil
}

// OrderLeads is the step that gives every demo order its demo leads, unless it has leads already:
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
		for _, d := range demo.Orders(at) {
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
				var created ccapi.IDResult
				if err := lead.Do(ctx, http.MethodPost, "/v2/lead/create", body, &created.Data); err != nil {
					return "", fmt.Errorf("create lead %s of order %s: %w", l.Phone, d.Code, err)
				}
				if l.Outcome == "" {
					continue
				}
				status, ok := refs.statuses[l.Outcome]
				if !ok {
					return "", fmt.Errorf("lead %s: no lead status has code %q", l.Phone, l.Outcome)
				}
				path := fmt.Sprintf("/v2/lead/update/%d", created.Data.Id)
				if err := lead.Do(ctx, http.MethodPost, path, ccapi.LeadUpdate{StatusId: &status}, nil); err != nil {
					return "", fmt.Errorf("set the status of lead %d: %w", created.Data.Id, err)
				}
				outcomes++
			}
			report = append(report, fmt.Sprintf("%s: %d created (%d secondary, %d with an outcome)",
				d.Code, len(d.Leads), demo.SecondaryLeads(d.Leads), outcomes))
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
		for _, d := range demo.Orders(now()) {
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

// findOrder looks an order up by code; found is false when no order has it. The lookup by code
// is an internal route of the order service, which the public contract does not describe.
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

// orderLeadCount is how many leads the order has, counting up to limit, from the lead service's
// internal list (not in the public contract).
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
	var page ccapi.CallPage
	q := url.Values{"orderIds[]": {strconv.FormatInt(orderID, 10)}, "limit": {"1"}}
	if err := call.Do(ctx, http.MethodGet, "/v2/call?"+q.Encode(), nil, &page.Data); err != nil {
		return 0, fmt.Errorf("calls of order %d: %w", orderID, err)
	}
	return page.Data.Total, nil
}

// catalog reads a catalog of another service ({"list":[{"id","code",...}]}) as code → id. The
// catalogs are internal routes, outside the public contract: no generated type describes them.
func catalog(ctx context.Context, c *svcclient.Client, path string) (map[string]int, error) {
	var out struct {
		List []struct {
			ID   int    `json:"id"`
			Code string `json:"code"`
		} `json:"list"`
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	ids := make(map[string]int, len(out.List))
	for _, item := range out.List {
		ids[item.Code] = item.ID
	}
	return ids, nil
}
