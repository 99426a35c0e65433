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
}

// Fields are s's settable fields.
func (s Subscription) Fields() Fields {
	return Fields{URL: s.URL, Events: s.Events, Description: s.Description, Enabled: s.Enabled, OrderIDs: s.OrderIDs}
}

// Owner is who a subscription belongs to: the caller that creates it.
type Owner struct {
	UserID int64
	Group  string
}

// Store keeps subscriptions.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the webhook schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

const columns = `id, owner_user_id, owner_group, url, events, order_ids, description, enabled, secret,
    previous_secret, previous_secret_until, failing_since, disabled_reason, created_at, updated_at`

// Create stores a subscription of owner with f and secret, at now.
func (s *Store) Create(ctx context.Context, owner Owner, f Fields, secret string, now time.Time) (Subscription, error) {
	const q = `
INSERT INTO subscriptions (owner_user_id, owner_group, url, events, order_ids, description, enabled, secret, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ` + columns
	var out Subscription
	err := s.conn.GetContext(ctx, &out, q, owner.UserID, owner.Group, f.URL, pq.StringArray(f.Events),
		pq.Int64Array(f.OrderIDs), f.Description, f.Enabled, secret, now)
	if err != nil {
		return Subscription{}, fmt.Errorf("create subscription: %w", err)
	}
	return out, nil
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

// Update writes f to subscription id at now. Enabling it again clears its failure record.
func (s *Store) Update(ctx context.Context, v Viewer, id int64, f Fields, now time.Time) (Subscription, error) {
	const q = `
UPDATE subscriptions SET url = $3, events = $4, order_ids = $5, description = $6, enabled = $7, updated_at = $8,
    failing_since = CASE WHEN $7 AND NOT enabled THEN NULL ELSE failing_since END,
    disabled_reason = CASE WHEN $7 THEN NULL ELSE disabled_reason END
WHERE id = $1 AND ($2 OR owner_user_id = $9) RETURNING ` + columns
	var out Subscription
	err := s.conn.GetContext(ctx, &out, q, id, v.All, f.URL, pq.StringArray(f.Events), pq.Int64Array(f.OrderIDs),
		f.Description, f.Enabled, now, v.UserID)
	return out, oneRow(err, id, "update subscription")
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
