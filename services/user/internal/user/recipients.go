package user

import (
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
)

// RecipientsRequest is the body of POST /internal/users/recipients: who a notification goes to.
type RecipientsRequest struct {
	UserID optional.Value[int64]  `json:"userId"`
	All    optional.Value[bool]   `json:"all"`
	Group  optional.Value[string] `json:"group"`
}

// Target is a checked RecipientsRequest: exactly one of its fields is set.
type Target struct {
	UserID int64
	All    bool
	Group  AccessGroup
}

// Check turns the request into a Target. Exactly one way of naming recipients must be used, so a
// body that names two is refused instead of one of them being silently preferred.
func (r RecipientsRequest) Check() (Target, error) {
	fe := apperr.FieldErrors{}
	var t Target
	given := 0
	if r.UserID.Set {
		given++
		if !r.UserID.Present() || r.UserID.V <= 0 {
			fe.Add("userId", "must be an integer > 0")
		}
		t.UserID = r.UserID.V
	}
	if r.All.Set {
		if !r.All.Present() || !r.All.V {
			fe.Add("all", "must be true when sent")
		}
		given++
		t.All = true
	}
	if r.Group.Set {
		given++
		g := AccessGroup(r.Group.V)
		if !r.Group.Present() || g == GroupNone || !g.Valid() {
			fe.Addf("group", "must be one of %s", joinGroups(AccessGroups()))
		}
		t.Group = g
	}
	switch {
	case given == 0:
		fe.Add("body", "must name the recipients with one of userId, all or group")
	case given > 1:
		fe.Add("body", "must name the recipients with only one of userId, all or group")
	}
	if err := fe.Err(); err != nil {
		return Target{}, err
	}
	return t, nil
}
