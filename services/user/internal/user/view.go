package user

import (
	"net/url"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/listquery"
)

// ActivityTimeLayout is how the User object writes login and activity times: the contract gives
// them as `yyyy-mm-dd hh:mm:ss`, and every other time as the API's instants (apitime.String).
const ActivityTimeLayout = "2006-01-02 15:04:05"

// DefaultAvatarPlaceholder is the image a user without an avatar is shown with, unless the
// deployment configures its own (AVATAR_PLACEHOLDER_URL).
const DefaultAvatarPlaceholder = "https://static.example.com/avatars/placeholder.png"

// View is the contract's User object, as listUsers and getUser return it and as other services
// receive it (notification recipients).
type View struct {
	ID                             int64    `json:"id"`
	Name                           *string  `json:"name"`
	LastName                       *string  `json:"lastName"`
	Email                          string   `json:"email"`
	IsActive                       bool     `json:"isActive"`
	AccessGroup                    string   `json:"accessGroup"`
	WebRtcIsEnabled                bool     `json:"webRtcIsEnabled"`
	InterfaceLanguageCode          string   `json:"interfaceLanguageCode"`
	LanguageSkillsCode             []string `json:"languageSkillsCode"`
	AutoAnswer                     int      `json:"autoAnswer"`
	PhoneMode                      string   `json:"phoneMode"`
	Avatar                         string   `json:"avatar"`
	MessengerNotificationsEnabled  bool     `json:"messengerNotificationsEnabled"`
	MessengerChatID                *string  `json:"messengerChatId"`
	MessengerNotificationsPriority *string  `json:"messengerNotificationsPriority"`
	EmailNotificationsEnabled      bool     `json:"emailNotificationsEnabled"`
	EmailNotificationsPriority     *string  `json:"emailNotificationsPriority"`
	LastLoginAt                    *string  `json:"lastLoginAt"`
	LastActivityAt                 *string  `json:"lastActivityAt"`
	CreatedAt                      string   `json:"createdAt"`
}

// ViewOf is u as the contract shows it. A user without an avatar (none or an empty link) gets the
// placeholder, since the contract promises a link in every case.
func ViewOf(u User, avatarPlaceholder string) View {
	avatar := avatarPlaceholder
	if u.Avatar != nil && strings.TrimSpace(*u.Avatar) != "" {
		avatar = *u.Avatar
	}
	return View{
		ID:                             u.ID,
		Name:                           u.Name,
		LastName:                       u.LastName,
		Email:                          u.Email,
		IsActive:                       u.IsActive,
		AccessGroup:                    string(u.AccessGroup),
		WebRtcIsEnabled:                u.WebRTCEnabled,
		InterfaceLanguageCode:          u.InterfaceLanguageCode,
		LanguageSkillsCode:             listquery.List([]string(u.LanguageSkillsCode)),
		AutoAnswer:                     u.AutoAnswer,
		PhoneMode:                      string(u.PhoneMode),
		Avatar:                         avatar,
		MessengerNotificationsEnabled:  u.MessengerNotificationsEnabled,
		MessengerChatID:                u.MessengerChatID,
		MessengerNotificationsPriority: u.MessengerNotificationsPriority,
		EmailNotificationsEnabled:      u.EmailNotificationsEnabled,
		EmailNotificationsPriority:     u.EmailNotificationsPriority,
		LastLoginAt:                    activityTime(u.LastLoginAt),
		LastActivityAt:                 activityTime(u.LastActivityAt),
		CreatedAt:                      apitime.String(u.CreatedAt),
	}
}

// activityTime is t in UTC as `yyyy-mm-dd hh:mm:ss`, or nil for a time that never happened.
func activityTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(ActivityTimeLayout)
	return &s
}

// ParseListQuery reads the filters and page of listUsers. A filter sent empty
// (`accessGroup=`) does not filter, like one not sent; any other value must be one the contract
// lists, so a typo is a 400 rather than a silently unfiltered or empty list.
func ParseListQuery(q url.Values) (Filter, listquery.Page, error) {
	fe := apperr.FieldErrors{}
	page := listquery.ParsePage(q, fe)
	f := Filter{Offset: page.Offset, Limit: page.Limit}
	if raw := lastValue(q, "accessGroup"); raw != "" {
		g := AccessGroup(raw)
		if g.Valid() {
			f.AccessGroup = &g
		} else {
			fe.Addf("accessGroup", "unknown group %q, must be one of %s", raw, joinGroups(AccessGroups()))
		}
	}
	if raw := lastValue(q, "isActive"); raw != "" {
		switch strings.ToLower(raw) {
		case "1", "true":
			active := true
			f.IsActive = &active
		case "0", "false":
			active := false
			f.IsActive = &active
		default:
			fe.Addf("isActive", "must be 1, 0, true or false, not %q", raw)
		}
	}
	return f, page, fe.Err()
}

// lastValue is the parameter's last value, trimmed: a repeated parameter counts as its last value,
// as listquery reads offset and limit.
func lastValue(q url.Values, name string) string {
	vs := q[name]
	if len(vs) == 0 {
		return ""
	}
	return strings.TrimSpace(vs[len(vs)-1])
}
