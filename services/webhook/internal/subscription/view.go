package subscription

import (
	"ccplatform/pkg/apitime"
	"ccplatform/pkg/listquery"
)

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
		ID: s.ID, URL: s.URL, Events: listquery.List(s.Events), OrderIDs: listquery.List(s.OrderIDs), Description: s.Description,
		Enabled: s.Enabled, OwnerUserID: s.OwnerUserID, FailingSince: apitime.StringOrNull(s.FailingSince),
		DisabledReason: s.DisabledReason, PreviousSecretExpiresAt: apitime.StringOrNull(s.PreviousSecretUntil),
		CreatedAt: apitime.String(s.CreatedAt), UpdatedAt: apitime.String(s.UpdatedAt),
	}
}

// WithSecret is s as create and rotate-secret return it.
func WithSecret(s Subscription) SecretView { return SecretView{View: ViewOf(s), Secret: s.Secret} }
