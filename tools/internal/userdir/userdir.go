// Package userdir reads the users and agent groups of the user service through its API, with the
// internal token as every service does. The tools name demo agents by e-mail and groups by name,
// and act for the demo admin, but the other services take ids: this is where the ids come from.
// The tools are clients of the platform, so they never read the users schema themselves.
package userdir

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/svcclient"
)

// Directory asks one user service.
type Directory struct {
	client *svcclient.Client
	// pageSize is how many items each request of a list asks for.
	pageSize int
}

// New is a directory of the user service c talks to.
func New(c *svcclient.Client) *Directory {
	return &Directory{client: c, pageSize: listquery.MaxLimit}
}

// ByEmails finds the users with these e-mail addresses (compared as the user service stores them:
// trimmed, lower-case), keyed by the address as given. An address no user has is a NotFound error
// naming it.
func (d *Directory) ByEmails(ctx context.Context, emails ...string) (map[string]ccapi.User, error) {
	// The user list filters by group and state only: the addresses are looked up in one pass over
	// every user, few in a demo or test database and a handful of pages in any other.
	all, err := d.users(ctx, url.Values{})
	if err != nil {
		return nil, err
	}
	byEmail := make(map[string]ccapi.User, len(all))
	for _, u := range all {
		byEmail[normalize(u.Email)] = u
	}
	out := make(map[string]ccapi.User, len(emails))
	for _, e := range emails {
		u, ok := byEmail[normalize(e)]
		if !ok {
			return nil, apperr.NotFoundf("no user has the e-mail %s", e)
		}
		out[e] = u
	}
	return out, nil
}

// ByEmail finds the user with this e-mail address; none is a NotFound error.
func (d *Directory) ByEmail(ctx context.Context, email string) (ccapi.User, error) {
	found, err := d.ByEmails(ctx, email)
	if err != nil {
		return ccapi.User{}, err
	}
	return found[email], nil
}

// Active lists the active users of the groups, in id order, group by group; no group lists every
// active user.
func (d *Directory) Active(ctx context.Context, groups ...access.Group) ([]ccapi.User, error) {
	if len(groups) == 0 {
		return d.users(ctx, url.Values{"isActive": {"true"}})
	}
	var out []ccapi.User
	for _, g := range groups {
		users, err := d.users(ctx, url.Values{"isActive": {"true"}, "accessGroup": {string(g)}})
		if err != nil {
			return nil, err
		}
		out = append(out, users...)
	}
	return out, nil
}

// AgentGroups lists every agent group, oldest first.
func (d *Directory) AgentGroups(ctx context.Context) ([]ccapi.AgentGroup, error) {
	return listAll(d, "/v2/agent-group", url.Values{}, func(path string) ([]ccapi.AgentGroup, int, int, error) {
		var page ccapi.AgentGroupPage
		err := d.client.Do(ctx, http.MethodGet, path, nil, &page.Data)
		return page.Data.List, page.Data.Next, page.Data.Total, err
	})
}

// users reads every page of the user list with the filters q.
func (d *Directory) users(ctx context.Context, q url.Values) ([]ccapi.User, error) {
	return listAll(d, "/v2/user/list", q, func(path string) ([]ccapi.User, int, int, error) {
		var page ccapi.UserPage
		err := d.client.Do(ctx, http.MethodGet, path, nil, &page.Data)
		return page.Data.List, page.Data.Next, page.Data.Total, err
	})
}

// listAll reads every page of one of the user service's list operations. Each operation's page
// has a generated type of its own, so read decodes one (path holds its query) and gives back its
// items, the next offset and the total.
func listAll[T any](d *Directory, path string, q url.Values, read func(path string) (list []T, next, total int, err error)) ([]T, error) {
	var out []T
	q.Set("limit", strconv.Itoa(d.pageSize))
	for offset := 0; ; {
		q.Set("offset", strconv.Itoa(offset))
		list, next, total, err := read(path + "?" + q.Encode())
		if err != nil {
			return nil, fmt.Errorf("user service %s: %w", path, err)
		}
		out = append(out, list...)
		if len(list) == 0 || next >= total {
			return out, nil
		}
		offset = next
	}
}

func normalize(email string) string { return strings.ToLower(strings.TrimSpace(email)) }
