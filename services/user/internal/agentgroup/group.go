// Package agentgroup holds agent groups: named sets of agents that orders are assigned to as a
// whole. It has the body and query rules of createAgentGroup, updateAgentGroup and
// listAgentGroups, the store in the users schema, and the internal check other services use to
// validate references to groups.
package agentgroup

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/optional"
	"ccplatform/services/user/internal/idcheck"
)

// Bounds of a group's fields.
const (
	MaxNameLength = 255
	// MaxAgents bounds one group; a call-center team is far smaller, the bound only keeps one
	// request from binding an unbounded number of rows.
	MaxAgents = 1000
)

// Names are a group's names by interface language.
type Names struct {
	RU string `json:"ru"`
	GB string `json:"gb"`
}

// Group is an agent group as stored.
type Group struct {
	ID        int64
	Names     Names
	AgentIDs  []int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// View is the contract's Agent group object, as the list returns it.
type View struct {
	ID        int64   `json:"id"`
	Names     Names   `json:"names"`
	AgentIDs  []int64 `json:"agentIds"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

// ViewOf is g as the contract shows it; agentIds is [] rather than null for a group without agents.
func ViewOf(g Group) View {
	return View{
		ID:        g.ID,
		Names:     g.Names,
		AgentIDs:  listquery.List(g.AgentIDs),
		CreatedAt: apitime.String(g.CreatedAt),
		UpdatedAt: apitime.String(g.UpdatedAt),
	}
}

// NamesInput is the names object of a body; each language may be absent (update only).
type NamesInput struct {
	RU optional.Value[string] `json:"ru"`
	GB optional.Value[string] `json:"gb"`
}

// Input is the body of createAgentGroup and updateAgentGroup.
type Input struct {
	Names    optional.Value[NamesInput] `json:"names"`
	AgentIDs optional.Value[[]int64]    `json:"agentIds"`
}

// Changes is a checked body: a nil field is left as it is (update) and is never nil on create.
type Changes struct {
	NameRU   *string
	NameGB   *string
	AgentIDs *[]int64
	// By is who makes the change (the verified caller; nil for none). Not read from the body.
	By *int64
}

// Empty reports a body that changes nothing.
func (c Changes) Empty() bool { return c.NameRU == nil && c.NameGB == nil && c.AgentIDs == nil }

// CheckCreate applies createAgentGroup's rules: names.ru, names.gb and agentIds are all required.
func (in Input) CheckCreate() (Changes, error) {
	return in.check(true)
}

// CheckUpdate applies updateAgentGroup's rules: every field is optional, and names may carry only
// one language, the other keeping its value. agentIds, when sent, replaces the whole set.
func (in Input) CheckUpdate() (Changes, error) {
	return in.check(false)
}

func (in Input) check(create bool) (Changes, error) {
	fe := apperr.FieldErrors{}
	var ch Changes
	switch {
	case !in.Names.Set:
		if create {
			fe.Add("names", "is required")
		}
	case in.Names.Null:
		fe.Add("names", "must be an object with ru and gb, not null")
	default:
		ch.NameRU = name(fe, "names.ru", in.Names.V.RU, create)
		ch.NameGB = name(fe, "names.gb", in.Names.V.GB, create)
	}
	switch {
	case !in.AgentIDs.Set:
		if create {
			fe.Add("agentIds", "is required")
		}
	case in.AgentIDs.Null:
		fe.Add("agentIds", "must be an array of user ids, not null")
	default:
		if ids, ok := agentIDs(fe, in.AgentIDs.V); ok {
			ch.AgentIDs = &ids
		}
	}
	if err := fe.Err(); err != nil {
		return Changes{}, err
	}
	return ch, nil
}

// name checks one language's name: trimmed, non-empty, at most MaxNameLength characters.
func name(fe apperr.FieldErrors, field string, v optional.Value[string], required bool) *string {
	switch {
	case !v.Set:
		if required {
			fe.Add(field, "is required")
		}
		return nil
	case v.Null:
		fe.Add(field, "must be a non-empty string, not null")
		return nil
	}
	s := strings.TrimSpace(v.V)
	switch {
	case s == "":
		fe.Add(field, "must not be empty")
		return nil
	case utf8.RuneCountInString(s) > MaxNameLength:
		fe.Addf(field, "must be at most %d characters", MaxNameLength)
		return nil
	}
	return &s
}

// agentIDs checks the ids (> 0, at most MaxAgents) and drops repeats, keeping the first one.
func agentIDs(fe apperr.FieldErrors, ids []int64) ([]int64, bool) {
	if len(ids) > MaxAgents {
		fe.Addf("agentIds", "must have at most %d elements", MaxAgents)
		return nil, false
	}
	for _, id := range ids {
		if id <= 0 {
			fe.Add("agentIds", "must contain only integers > 0")
			return nil, false
		}
	}
	return idcheck.Unique(ids), true
}

// Filter narrows a listing; a nil AgentID does not filter. Limit 0 means no limit.
type Filter struct {
	AgentID *int64
	Offset  int
	Limit   int
}

// ParseListQuery reads listAgentGroups' query: agentId (> 0; sent empty it does not filter) and
// the page.
func ParseListQuery(q url.Values) (Filter, listquery.Page, error) {
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(q, fe)
	f := Filter{Offset: page.Offset, Limit: page.Limit}
	if vs := q["agentId"]; len(vs) > 0 {
		if raw := strings.TrimSpace(vs[len(vs)-1]); raw != "" {
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id <= 0 {
				fe.Add("agentId", "must be an integer > 0")
			} else {
				f.AgentID = &id
			}
		}
	}
	return f, page, fe.Err()
}

// notFound is the error for an id that names no group.
func notFound(id int64) error {
	return apperr.NotFoundf("agent group %d: not found", id)
}

// joinIDs writes ids as "3, 7" for messages.
func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}
