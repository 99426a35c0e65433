package apikey

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Key is a stored API key: everything but the secret.
type Key struct {
	ID         int64          `db:"id"`
	UserID     int64          `db:"user_id"`
	Name       string         `db:"name"`
	Prefix     string         `db:"prefix"`
	Scopes     pq.StringArray `db:"scopes"`
	ExpiresAt  *time.Time     `db:"expires_at"`
	CreatedAt  time.Time      `db:"created_at"`
	RevokedAt  *time.Time     `db:"revoked_at"`
	LastUsedAt *time.Time     `db:"last_used_at"`
}

// keyColumns are the columns of Key.
const keyColumns = `id, user_id, name, prefix, scopes, expires_at, created_at, revoked_at, last_used_at`

// New is what a key is made with besides its user.
type New struct {
	Name string
	// Scopes narrow the key; none means the user's full rights.
	Scopes []access.Scope
	// ExpiresAt, when set, ends the key.
	ExpiresAt *time.Time
}

// Identity is who a verified key speaks for, with the key's id and scopes; the gateway forwards
// it to the services. ExpiresAt (nil: never) is the instant the key ends, to the nanosecond: the
// gateway trusts its cached answer no longer.
type Identity struct {
	UserID      int64      `json:"userId"`
	AccessGroup string     `json:"accessGroup"`
	KeyID       int64      `json:"keyId"`
	Scopes      []string   `json:"scopes"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

// ErrUnauthorized is the answer for every key that does not verify. One message for every reason
// (unknown, revoked, inactive user) tells a caller nothing about which keys exist.
func ErrUnauthorized() error {
	return apperr.New(apperr.Unauthorized, "X-Api-Key: unknown or revoked key")
}

// touchEvery bounds how often last_used_at is written: once a minute per key is precise enough for
// operators and keeps verification from writing on every cache miss.
const touchEvery = time.Minute

// Store keeps API keys in the users schema.
type Store struct {
	db  *sqlx.DB
	now func() time.Time
}

// NewStore is a store over a connection whose search_path is the users schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{db: conn, now: time.Now} }

// Create makes a key for a user and returns it with the key itself, which is not stored and
// cannot be shown again. An unknown user is NotFound. It knows no cap: operators (user-admin) make
// what they decide; the self-service route goes through CreateWithin.
func (s *Store) Create(ctx context.Context, userID int64, n New) (Key, string, error) {
	return s.CreateWithin(ctx, userID, n, 0)
}

// DefaultMaxActive caps a user's active keys when nothing else is configured (API_KEY_MAX_ACTIVE):
// each key has a rate limit of its own, so keys without end would multiply a user's limit.
const DefaultMaxActive = 10

// CreateWithin is Create refusing (409, naming the limit) a key beyond maxActive active keys
// (neither revoked nor expired) of the user; 0 is no cap. The user's row is locked while the keys
// are counted, so two creates at once cannot both take the last place.
func (s *Store) CreateWithin(ctx context.Context, userID int64, n New, maxActive int) (Key, string, error) {
	const q = `INSERT INTO api_keys (user_id, name, prefix, hash, scopes, expires_at)
		SELECT u.id, $2, $3, $4, $5, $6 FROM users u WHERE u.id = $1
		RETURNING ` + keyColumns
	plain, err := Generate()
	if err != nil {
		return Key{}, "", err
	}
	scopes := make(pq.StringArray, 0, len(n.Scopes))
	for _, sc := range n.Scopes {
		scopes = append(scopes, string(sc))
	}
	var k Key
	err = db.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if maxActive > 0 {
			if _, err := tx.ExecContext(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, userID); err != nil {
				return fmt.Errorf("lock user %d: %w", userID, err)
			}
			var active int
			err := tx.GetContext(ctx, &active, `SELECT count(*) FROM api_keys
WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`, userID, s.now())
			if err != nil {
				return fmt.Errorf("count the keys of user %d: %w", userID, err)
			}
			if active >= maxActive {
				return apperr.Conflictf("limit reached: a user may have at most %d active API keys (revoke one first)", maxActive)
			}
		}
		return tx.GetContext(ctx, &k, q, userID, n.Name, Prefix(plain), Hash(plain), scopes, n.ExpiresAt)
	})
	if err = db.OneRow(err, apperr.NotFoundf("user %d: not found", userID), "create key for user %d", userID); err != nil {
		return Key{}, "", err
	}
	return k, plain, nil
}

// Verify resolves a key to its user. It is one lookup by the unique hash index joined to the
// user's row, so a revoked or expired key or a deactivated user is refused on the very next call.
func (s *Store) Verify(ctx context.Context, plain string) (Identity, error) {
	const q = `SELECT k.id, k.last_used_at, k.scopes, k.expires_at, u.id AS user_id, u.access_group
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2) AND u.is_active`
	if !WellFormed(plain) {
		return Identity{}, ErrUnauthorized()
	}
	var row struct {
		ID          int64          `db:"id"`
		LastUsedAt  *time.Time     `db:"last_used_at"`
		Scopes      pq.StringArray `db:"scopes"`
		ExpiresAt   *time.Time     `db:"expires_at"`
		UserID      int64          `db:"user_id"`
		AccessGroup string         `db:"access_group"`
	}
	if err := db.OneRow(s.db.GetContext(ctx, &row, q, Hash(plain), s.now()), ErrUnauthorized(), "verify key"); err != nil {
		return Identity{}, err
	}
	now := s.now()
	if row.LastUsedAt == nil || now.Sub(*row.LastUsedAt) >= touchEvery {
		if err := s.touch(ctx, row.ID, now); err != nil {
			return Identity{}, err
		}
	}
	scopes := []string(row.Scopes)
	if scopes == nil {
		scopes = []string{}
	}
	return Identity{UserID: row.UserID, AccessGroup: row.AccessGroup, KeyID: row.ID, Scopes: scopes, ExpiresAt: row.ExpiresAt}, nil
}

func (s *Store) touch(ctx context.Context, id int64, now time.Time) error {
	// The condition repeats the staleness test so that replicas verifying at once write only once.
	const q = `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`
	if _, err := s.db.ExecContext(ctx, q, id, now, now.Add(-touchEvery)); err != nil {
		return fmt.Errorf("verify key: record use: %w", err)
	}
	return nil
}

// Revoke stops a key from working. Revoking a revoked key keeps its first revocation time; an
// unknown id is NotFound.
func (s *Store) Revoke(ctx context.Context, id int64) error { return s.RevokeOwned(ctx, id, 0) }

// RevokeOwned is Revoke for a key of owner only (0: any owner); another's key is NotFound, as if it
// did not exist.
func (s *Store) RevokeOwned(ctx context.Context, id, owner int64) error {
	const q = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND ($2 = 0 OR user_id = $2)`
	res, err := s.db.ExecContext(ctx, q, id, owner)
	if err != nil {
		return fmt.Errorf("revoke key %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("revoke key %d: %w", id, err)
	}
	if n == 0 {
		return apperr.NotFoundf("api key %d: not found", id)
	}
	return nil
}

// RevokeKey is Revoke for the key itself, for an operator who holds the key but not its id. It
// returns the id of the revoked key.
func (s *Store) RevokeKey(ctx context.Context, plain string) (int64, error) {
	const q = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE hash = $1 RETURNING id`
	var id int64
	err := s.db.GetContext(ctx, &id, q, Hash(plain))
	if err = db.OneRow(err, apperr.NotFoundf("api key %s...: not found", Prefix(plain)), "revoke key"); err != nil {
		return 0, err
	}
	return id, nil
}

// List reads the keys of the given users (every key when userIDs is empty), newest first.
func (s *Store) List(ctx context.Context, userIDs []int64) ([]Key, error) {
	const q = `SELECT ` + keyColumns + ` FROM api_keys
		WHERE cardinality($1::bigint[]) = 0 OR user_id = ANY($1::bigint[])
		ORDER BY id DESC`
	if userIDs == nil {
		userIDs = []int64{}
	}
	keys := []Key{}
	if err := s.db.SelectContext(ctx, &keys, q, pq.Array(userIDs)); err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}
