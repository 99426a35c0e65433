// Package user holds the platform's users: their profile and call-center settings, the rules those
// fields obey, the store in the users schema, the public list and detail (listUsers, getUser), and
// the internal routes other services ask about users (reference checks, notification recipients).
package user

import (
	"slices"
	"strings"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"

	"github.com/lib/pq"
)

// AccessGroup decides what a user may do; the empty group means none was assigned. The names are
// the platform's (pkg/access), shared with the gateway that enforces them.
type AccessGroup = access.Group

// The access groups of the contract.
const (
	GroupNone             = access.None
	GroupClient           = access.Client
	GroupCallCenter       = access.CallCenter
	GroupCallCenterSenior = access.CallCenterSenior
	GroupArbitration      = access.Arbitration
	GroupModerator        = access.Moderator
	GroupAdmin            = access.Admin
)

// AccessGroups lists every named group (not GroupNone), in the contract's order.
func AccessGroups() []AccessGroup { return access.Groups() }

// PhoneMode is which calls the telephony sends to a user.
type PhoneMode string

// The phone modes of the contract.
const (
	PhoneDefault      PhoneMode = "default"
	PhoneOutgoingOnly PhoneMode = "outgoing-only"
	PhoneIncomingOnly PhoneMode = "incoming-only"
	PhonePredictive   PhoneMode = "predictive"
)

// Valid reports whether m is one of the contract's modes.
func (m PhoneMode) Valid() bool {
	switch m {
	case PhoneDefault, PhoneOutgoingOnly, PhoneIncomingOnly, PhonePredictive:
		return true
	}
	return false
}

// PriorityUrgent is the only value a notification priority setting takes besides null: with it the
// channel carries only urgent notifications.
const PriorityUrgent = "urgent"

// Languages are the language codes a user's interface and skills may use.
func Languages() []string { return []string{"ru", "gb"} }

// Auto-answer bounds: -1 answers at once, 0 never, n after n seconds.
const (
	AutoAnswerMin = -1
	AutoAnswerMax = 10
)

// User is one row of the users table and the value every use of a user starts from.
type User struct {
	ID                             int64          `db:"id"`
	Name                           *string        `db:"name"`
	LastName                       *string        `db:"last_name"`
	Email                          string         `db:"email"`
	IsActive                       bool           `db:"is_active"`
	AccessGroup                    AccessGroup    `db:"access_group"`
	WebRTCEnabled                  bool           `db:"web_rtc_enabled"`
	InterfaceLanguageCode          string         `db:"interface_language_code"`
	LanguageSkillsCode             pq.StringArray `db:"language_skills_code"`
	AutoAnswer                     int            `db:"auto_answer"`
	PhoneMode                      PhoneMode      `db:"phone_mode"`
	Avatar                         *string        `db:"avatar"`
	MessengerNotificationsEnabled  bool           `db:"messenger_notifications_enabled"`
	MessengerChatID                *string        `db:"messenger_chat_id"`
	MessengerNotificationsPriority *string        `db:"messenger_notifications_priority"`
	EmailNotificationsEnabled      bool           `db:"email_notifications_enabled"`
	EmailNotificationsPriority     *string        `db:"email_notifications_priority"`
	LastLoginAt                    *time.Time     `db:"last_login_at"`
	LastActivityAt                 *time.Time     `db:"last_activity_at"`
	CreatedAt                      time.Time      `db:"created_at"`
	UpdatedAt                      time.Time      `db:"updated_at"`
}

// NormalizeEmail trims and lower-cases an address, so that one mailbox is one user whatever case
// it was typed in.
func NormalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// Prepare normalizes u and checks every field against the contract's rules, reporting all broken
// fields at once under their wire names.
func Prepare(u User) (User, error) {
	u.Email = NormalizeEmail(u.Email)
	if u.LanguageSkillsCode == nil {
		u.LanguageSkillsCode = pq.StringArray{}
	}
	fe := apperr.FieldErrors{}
	if msg := emailRule(u.Email); msg != "" {
		fe.Add("email", msg)
	}
	if !u.AccessGroup.Valid() {
		fe.Addf("accessGroup", "must be empty or one of %s", joinGroups(AccessGroups()))
	}
	if !slices.Contains(Languages(), u.InterfaceLanguageCode) {
		fe.Addf("interfaceLanguageCode", "must be one of %s", strings.Join(Languages(), ", "))
	}
	for i, code := range u.LanguageSkillsCode {
		switch {
		case !slices.Contains(Languages(), code):
			fe.Addf("languageSkillsCode", "element %d: must be one of %s", i, strings.Join(Languages(), ", "))
		case slices.Contains(u.LanguageSkillsCode[:i], code):
			fe.Addf("languageSkillsCode", "element %d: %q is repeated", i, code)
		}
	}
	if u.AutoAnswer < AutoAnswerMin || u.AutoAnswer > AutoAnswerMax {
		fe.Addf("autoAnswer", "must be from %d to %d", AutoAnswerMin, AutoAnswerMax)
	}
	if !u.PhoneMode.Valid() {
		fe.Add("phoneMode", "must be one of default, outgoing-only, incoming-only, predictive")
	}
	if !priorityValid(u.MessengerNotificationsPriority) {
		fe.Add("messengerNotificationsPriority", "must be null or urgent")
	}
	if !priorityValid(u.EmailNotificationsPriority) {
		fe.Add("emailNotificationsPriority", "must be null or urgent")
	}
	return u, fe.Err()
}

func emailRule(email string) string {
	if email == "" {
		return "is required"
	}
	if len(email) > 254 {
		return "must be at most 254 characters"
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 || at == len(email)-1 || strings.ContainsAny(email, " \t\r\n") {
		return "must be an e-mail address"
	}
	return ""
}

func priorityValid(p *string) bool { return p == nil || *p == PriorityUrgent }

func joinGroups(gs []AccessGroup) string {
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = string(g)
	}
	return strings.Join(s, ", ")
}

// notFound is the error for an id that names no user.
func notFound(id int64) error {
	return apperr.NotFoundf("user %d: not found", id)
}

// emailNotFound is the error for an address that names no user.
func emailNotFound(email string) error {
	return apperr.NotFoundf("user with e-mail %s: not found", email)
}
