package order

import (
	"context"
	"net/http"
	"strconv"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
)

// UserDirectory answers whether the users and agent groups an order names exist. Both live in the
// user service; this service never reads that service's schema.
type UserDirectory struct {
	client *svcclient.Client
}

// NewUserDirectory asks the user service through client.
func NewUserDirectory(client *svcclient.Client) *UserDirectory {
	return &UserDirectory{client: client}
}

// MissingUsers returns the ids among ids that name no user. The user service being down is
// Unavailable (503): the order cannot be checked, which is not the caller's fault.
func (d *UserDirectory) MissingUsers(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out struct {
		Missing []int64 `json:"missing"`
	}
	err := d.client.Do(ctx, http.MethodPost, "/internal/users/check", map[string][]int64{"ids": ids}, &out)
	if err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return nil, apperr.Wrap(apperr.Unavailable, err, "agentUserIds: cannot be checked now, the user service is unavailable")
		}
		// Any other refusal (a wrong internal token, say) is this deployment's fault, not the caller's.
		return nil, apperr.Wrap(apperr.Internal, err, "check users")
	}
	return out.Missing, nil
}

// MissingAgentGroups returns the ids among ids that name no agent group, asking the user service
// as MissingUsers does; the user service being down is Unavailable (503).
func (d *UserDirectory) MissingAgentGroups(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out struct {
		Missing []int64 `json:"missing"`
	}
	err := d.client.Do(ctx, http.MethodPost, "/internal/agent-groups/check", map[string][]int64{"ids": ids}, &out)
	if err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return nil, apperr.Wrap(apperr.Unavailable, err, "agentGroupIds: cannot be checked now, the user service is unavailable")
		}
		return nil, apperr.Wrap(apperr.Internal, err, "check agent groups")
	}
	return out.Missing, nil
}

// clientRule is the rule an order's owner must meet.
const clientRule = "must be an active user of the client access group"

// IsActiveClient reports whether user id exists, is active and belongs to the client group. The
// user service being down is Unavailable (503).
func (d *UserDirectory) IsActiveClient(ctx context.Context, id int64) (bool, error) {
	var out struct {
		List []struct {
			IsActive    bool   `json:"isActive"`
			AccessGroup string `json:"accessGroup"`
		} `json:"list"`
	}
	err := d.client.Do(ctx, http.MethodPost, "/internal/users/recipients", map[string]int64{"userId": id}, &out)
	switch {
	case apperr.KindOf(err) == apperr.NotFound:
		return false, nil
	case apperr.KindOf(err) == apperr.Unavailable:
		return false, apperr.Wrap(apperr.Unavailable, err, "clientUserId: cannot be checked now, the user service is unavailable")
	case err != nil:
		return false, apperr.Wrap(apperr.Internal, err, "check client %d", id)
	}
	return len(out.List) == 1 && out.List[0].IsActive && out.List[0].AccessGroup == "client", nil
}

// AgentGroupsOf lists the agent groups user is in. The user service being down is Unavailable.
func (d *UserDirectory) AgentGroupsOf(ctx context.Context, user int64) ([]int64, error) {
	var out struct {
		List []struct {
			ID int64 `json:"id"`
		} `json:"list"`
	}
	path := "/v2/agent-group?limit=100&agentId=" + strconv.FormatInt(user, 10)
	if err := d.client.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return nil, apperr.Wrap(apperr.Unavailable, err, "the caller's agent groups cannot be read now, the user service is unavailable")
		}
		return nil, apperr.Wrap(apperr.Internal, err, "agent groups of user %d", user)
	}
	ids := make([]int64, len(out.List))
	for i, g := range out.List {
		ids[i] = g.ID
	}
	return ids, nil
}
