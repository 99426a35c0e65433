package subscription

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Subscription is a stored subscription.
type Subscription struct {
	ID                  int64          `db:"id"`
	OwnerUserID         int64          `db:"owner_user_id"`
	OwnerGroup          string         `db:"owner_group"`
	URL                 string         `db:"url"`
	Events              pq.StringArray `db:"events"`
	OrderIDs            pq.Int64Array  `db:"order_ids"`
	Description         string         `db:"description"`
	Enabled             bool           `db:"enabled"`
	Secret              string         `db:"secret"`
	PreviousSecret      *string        `db:"previous_secret"`
	PreviousSecretUntil *time.Time     `db:"previous_secret_until"`
	FailingSince        *time.Time     `db:"failing_since"`
	DisabledReason      *string        `db:"disabled_reason"`
	CreatedAt           time.Time      `db:"created_at"`
	UpdatedAt           time.Time      `db:"updated_at"`
	// KeyScopes are the scopes of the key that created or last updated it (none: full rights).
	KeyScopes pq.StringArray `db:"key_scopes"`
}

// Fields are s's settable fields.
func (s Subscription) Fields() Fields {
	return Fields{URL: s.URL, Events: s.Events, Description: s.Description, Enabled: s.Enabled, OrderIDs: s.OrderIDs}
}

// Owner is who a subscription belongs to: the caller that creates it, with the scopes of the key
// it came with (none: the user's full rights).
type Owner struct {
	UserID int64
	Group  string
	Scopes []string
}

// Limits cap what one owner may subscribe (WEBHOOK_MAX_PER_OWNER, WEBHOOK_MAX_PER_URL): one event
// makes a delivery per subscription, so many subscriptions to one URL multiply the load on the
// platform and the endpoint. Zero is no cap.
type Limits struct {
	PerOwner int
	PerURL   int
}

// DefaultLimits are the caps when none are configured.
var DefaultLimits = Limits{PerOwner: 25, PerURL: 3}

// Store keeps subscriptions.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the webhook schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

const columns = `id, owner_user_id, owner_group, url, events, order_ids, description, enabled, secret,
    previous_secret, previous_secret_until, failing_since, disabled_reason, created_at, updated_at, key_scopes`

// Create stores a subscription of owner with f and secret, at now, within limits (a 409 naming the
// limit reached). The owner's subscriptions are counted under a lock of the owner's, so two
// creates at once cannot both take the last place.
func (s *Store) Create(ctx context.Context, owner Owner, f Fields, secret string, now time.Time, limits Limits) (Subscription, error) {
	const q = `
INSERT INTO subscriptions (owner_user_id, owner_group, url, events, order_ids, description, enabled, secret, created_at, updated_at, key_scopes)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10) RETURNING ` + columns
	var out Subscription
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		if err := checkLimits(ctx, tx, owner.UserID, 0, f.URL, limits); err != nil {
			return err
		}
		return tx.GetContext(ctx, &out, q, owner.UserID, owner.Group, f.URL, pq.StringArray(f.Events),
			pq.Int64Array(f.OrderIDs), f.Description, f.Enabled, secret, now, keyScopes(owner.Scopes))
	})
	if err != nil {
		return Subscription{}, fmt.Errorf("create subscription: %w", err)
	}
	return out, nil
}

// keyScopes is how scopes are stored: NULL for a key without scopes (full rights).
func keyScopes(scopes []string) pq.StringArray {
	if len(scopes) == 0 {
		return nil
	}
	return pq.StringArray(scopes)
}

// checkLimits locks owner's subscriptions for the transaction and refuses one more (other than
// subscription except, 0 for a new one) at url beyond limits.
func checkLimits(ctx context.Context, tx *sqlx.Tx, owner, except int64, url string, limits Limits) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('webhooks.subscriptions.owner'), hashtext($1::text))`, owner); err != nil {
		return fmt.Errorf("lock the subscriptions of user %d: %w", owner, err)
	}
	var n struct {
		All   int `db:"all_"`
		AtURL int `db:"at_url"`
	}
	err := tx.GetContext(ctx, &n, `SELECT count(*) AS all_, count(*) FILTER (WHERE url = $3) AS at_url
FROM subscriptions WHERE owner_user_id = $1 AND id <> $2`, owner, except, url)
	if err != nil {
		return fmt.Errorf("count the subscriptions of user %d: %w", owner, err)
	}
	if except == 0 && limits.PerOwner > 0 && n.All >= limits.PerOwner {
		return apperr.Conflictf("limit reached: a user may have at most %d webhook subscriptions (delete one first)", limits.PerOwner)
	}
	if limits.PerURL > 0 && n.AtURL >= limits.PerURL {
		return apperr.Conflictf("url: limit reached: a user may have at most %d webhook subscriptions to one URL (subscribe one to several events instead)", limits.PerURL)
	}
	return nil
}

// Get is subscription id; NotFound when it does not exist or the viewer may not see it (the same
// answer, so ids of others' subscriptions reveal nothing).
func (s *Store) Get(ctx context.Context, v Viewer, id int64) (Subscription, error) {
	var out Subscription
	err := s.conn.GetContext(ctx, &out, `SELECT `+columns+` FROM subscriptions WHERE id = $1 AND ($2 OR owner_user_id = $3)`,
		id, v.All, v.UserID)
	return out, oneRow(err, id, "read subscription")
}

// oneRow is the error of a statement on subscription id (doing names it): NotFound when no row
// was found (missing, or not the viewer's: the same answer, so others' ids reveal nothing).
func oneRow(err error, id int64, doing string) error {
	return db.OneRow(err, apperr.NotFoundf("webhook %d does not exist", id), "%s %d", doing, id)
}

// Viewer is whose subscriptions a caller sees: their own, or all (staff).
type Viewer struct {
	UserID int64
	All    bool
}

// List is a page of the subscriptions v sees, newest first, and their total.
func (s *Store) List(ctx context.Context, v Viewer, offset, limit int) ([]Subscription, int, error) {
	var total int
	if err := s.conn.GetContext(ctx, &total, `SELECT count(*) FROM subscriptions WHERE $1 OR owner_user_id = $2`, v.All, v.UserID); err != nil {
		return nil, 0, fmt.Errorf("count subscriptions: %w", err)
	}
	out := []Subscription{}
	err := s.conn.SelectContext(ctx, &out, `SELECT `+columns+` FROM subscriptions WHERE $1 OR owner_user_id = $2
ORDER BY id DESC OFFSET $3 LIMIT $4`, v.All, v.UserID, offset, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list subscriptions: %w", err)
	}
	return out, total, nil
}

// Update writes f to subscription id at now, by a key of scopes (which the subscription keeps),
// within limits (owner's; a new URL counts against the per-URL cap). Enabling it again clears its
// failure record.
func (s *Store) Update(ctx context.Context, v Viewer, cur Subscription, f Fields, scopes []string, now time.Time, limits Limits) (Subscription, error) {
	const q = `
UPDATE subscriptions SET url = $3, events = $4, order_ids = $5, description = $6, enabled = $7, updated_at = $8,
    failing_since = CASE WHEN $7 AND NOT enabled THEN NULL ELSE failing_since END,
    disabled_reason = CASE WHEN $7 THEN NULL ELSE disabled_reason END,
    key_scopes = $10
WHERE id = $1 AND ($2 OR owner_user_id = $9) RETURNING ` + columns
	var out Subscription
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		if f.URL != cur.URL {
			if err := checkLimits(ctx, tx, cur.OwnerUserID, cur.ID, f.URL, Limits{PerURL: limits.PerURL}); err != nil {
				return err
			}
		}
		return tx.GetContext(ctx, &out, q, cur.ID, v.All, f.URL, pq.StringArray(f.Events), pq.Int64Array(f.OrderIDs),
			f.Description, f.Enabled, now, v.UserID, keyScopes(scopes))
	})
	return out, oneRow(err, cur.ID, "update subscription")
}

// Delete removes subscription id with its deliveries.
//
// Its deliveries are locked first (in id order, so two deletes queue up instead of crossing): the
// dispatcher records a batch's results on the deliveries and then on their subscriptions, so a
// delete that locked the subscription first and cascaded into a delivery the dispatcher holds
// would deadlock with it. A
// delivery fanned out between the two steps can still meet such a cycle; PostgreSQL breaks it and
// the delete runs again.
func (s *Store) Delete(ctx context.Context, v Viewer, id int64) error {
	return db.InTxRetrying(ctx, s.conn, func(tx *sqlx.Tx) error {
		const lock = `SELECT d.id FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
WHERE s.id = $1 AND ($2 OR s.owner_user_id = $3) ORDER BY d.id FOR UPDATE OF d`
		if _, err := tx.ExecContext(ctx, lock, id, v.All, v.UserID); err != nil {
			return fmt.Errorf("lock deliveries of subscription %d: %w", id, err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = $1 AND ($2 OR owner_user_id = $3)`, id, v.All, v.UserID)
		if err != nil {
			return fmt.Errorf("delete subscription %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return apperr.NotFoundf("webhook %d does not exist", id)
		}
		return nil
	})
}

// Rotate makes secret the signing secret of subscription id; the current one keeps signing beside
// it until overlapUntil.
func (s *Store) Rotate(ctx context.Context, v Viewer, id int64, secret string, now, overlapUntil time.Time) (Subscription, error) {
	const q = `
UPDATE subscriptions SET previous_secret = secret, previous_secret_until = $4, secret = $3, updated_at = $5
WHERE id = $1 AND ($2 OR owner_user_id = $6) RETURNING ` + columns
	var out Subscription
	err := s.conn.GetContext(ctx, &out, q, id, v.All, secret, overlapUntil, now, v.UserID)
	return out, oneRow(err, id, "rotate secret of subscription")
}

// Matching are the enabled subscriptions that asked for events of type typ.
func (s *Store) Matching(ctx context.Context, q sqlx.QueryerContext, typ string) ([]Subscription, error) {
	out := []Subscription{}
	if err := sqlx.SelectContext(ctx, q, &out, `SELECT `+columns+` FROM subscriptions WHERE enabled AND events @> ARRAY[$1]`, typ); err != nil {
		return nil, fmt.Errorf("subscriptions of %s: %w", typ, err)
	}
	return out, nil
}
