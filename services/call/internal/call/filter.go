package call

import (
	"net/url"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
)

// Filter is what the call list (listCalls) asks for. Every filter that is given narrows the
// list: leads AND orders AND users AND statuses AND the period.
type Filter struct {
	LeadIDs   []int64
	OrderIDs  []int64
	UserIDs   []int64
	StatusIDs []int64
	Period    listquery.Period
	Page      listquery.Page
}

// ParseFilter reads the list's query string. leadIds[] or orderIds[] is required (a list of every
// call of the platform is never what a caller means); all broken parameters are reported at once.
func ParseFilter(q url.Values) (Filter, error) {
	fe := apperr.FieldErrors{}
	f := Filter{
		LeadIDs:   listquery.IDs(q, "leadIds", fe),
		OrderIDs:  listquery.IDs(q, "orderIds", fe),
		UserIDs:   listquery.IDs(q, "userIds", fe),
		StatusIDs: listquery.IntIDs(q, "statusIds", fe),
		Period:    listquery.ParsePeriod(q, "createdAt", fe),
		Page:      listquery.ParsePage(q, fe),
	}
	if len(f.LeadIDs) == 0 && len(f.OrderIDs) == 0 && !fe.Has("leadIds[]") && !fe.Has("orderIds[]") {
		fe.Add("leadIds[]", "required when orderIds[] is absent")
		fe.Add("orderIds[]", "required when leadIds[] is absent")
	}
	return f, fe.Err()
}
