package order

import (
	"context"
	"net/http"

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
