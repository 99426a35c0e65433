package recipient

import (
	"context"
	"fmt"
	"net/http"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
)

// Directory asks the user service who the recipients of a target are.
type Directory struct {
	client *svcclient.Client
}

// NewDirectory asks through client.
func NewDirectory(client *svcclient.Client) *Directory { return &Directory{client: client} }

// Resolve lists the recipients of t with their settings. An unknown user id is NotFound; the user
// service down is Unavailable.
func (d *Directory) Resolve(ctx context.Context, t Target) ([]User, error) {
	var out struct {
		List []User `json:"list"`
	}
	if err := d.client.Do(ctx, http.MethodPost, "/internal/users/recipients", t, &out); err != nil {
		return nil, fmt.Errorf("resolve recipients: %w", err)
	}
	return Filter(t, out.List), nil
}

// Lookup reports whether user id exists and whether it is active. The user service down is
// Unavailable (503): the target cannot be checked, which is not the caller's fault.
func (d *Directory) Lookup(ctx context.Context, id int64) (found, active bool, err error) {
	users, err := d.Resolve(ctx, Target{UserID: id})
	if err == nil {
		return true, len(users) == 1 && users[0].IsActive, nil
	}
	switch apperr.KindOf(err) {
	case apperr.NotFound:
		return false, false, nil
	case apperr.Unavailable:
		return false, false, apperr.Wrap(apperr.Unavailable, err, "userId: cannot be checked now, the user service is unavailable")
	}
	// Any other refusal (a wrong internal token, say) is this deployment's fault, not the caller's.
	return false, false, apperr.Wrap(apperr.Internal, err, "check user %d", id)
}
