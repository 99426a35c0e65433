package subscription

import (
	"time"
)

// timeLayout is RFC 3339 with a numeric zone, as the API writes instants.
const timeLayout = "2006-01-02T15:04:05-07:00"

// View is a subscription as the API returns it. The secret is never in it after creation and
// rotation (SecretView).
type View struct {
	ID             int64    `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	OrderIDs       []int64  `json:"orderIds"`
	Description    string   `json:"description"`
	Enabled        bool     `json:"enabled"`
	OwnerUserID    int64    `json:"ownerUserId"`
	FailingSince   *string  `json:"failingSince"`
	DisabledReason *string  `json:"disabledReason"`
	// PreviousSecretExpiresAt is when the secret rotated out stops signing (null: none signs).
	PreviousSecretExpiresAt *string `json:"previousSecretExpiresAt"`
	CreatedAt               string  `json:"createdAt"`
	UpdatedAt               string  `json:"updatedAt"`
}

// SecretView is a subscription with its signing secret: the answer of create and rotate-secret,
// the only times the secret is shown.
type SecretView struct {
	View
	Secret string `json:"secret"`
}

// ViewOf is s as the API returns it.
func ViewOf(s Subscription) View {
	return View{
		ID: s.ID, URL: s.URL, Events: nonNil(s.Events), OrderIDs: nonNilIDs(s.OrderIDs), Description: s.Description,
		Enabled: s.Enabled, OwnerUserID: s.OwnerUserID, FailingSince: format(s.FailingSince),
		DisabledReason: s.DisabledReason, PreviousSecretExpiresAt: format(s.PreviousSecretUntil),
		CreatedAt: s.CreatedAt.UTC().Format(timeLayout), UpdatedAt: s.UpdatedAt.UTC().Format(timeLayout),
	}
}

// WithSecret is s as create and rotate-secret return it.
func WithSecret(s Subscription) SecretView { return SecretView{View: ViewOf(s), Secret: s.Secret} }

func format(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(timeLayout)
	return &s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilIDs(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}
