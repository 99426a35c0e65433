package user

import (
	"context"
	"fmt"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/services/user/internal/idcheck"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes users in the users schema.
type Store struct {
	db *sqlx.DB
}

// NewStore is a store over a connection whose search_path is the users schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{db: conn} }

// columns is every column of users, in the order of the User struct.
const columns = `id, name, last_name, email, is_active, access_group, web_rtc_enabled,
	interface_language_code, language_skills_code, auto_answer, phone_mode, avatar,
	messenger_notifications_enabled, messenger_chat_id, messenger_notifications_priority,
	email_notifications_enabled, email_notifications_priority, last_login_at, last_activity_at,
	created_at, updated_at`

// Get reads one user; an unknown id is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (User, error) {
	const q = `SELECT ` + columns + ` FROM users WHERE id = $1`
	var u User
	if err := db.OneRow(s.db.GetContext(ctx, &u, q, id), notFound(id), "get user %d", id); err != nil {
		return User{}, err
	}
	return u, nil
}

// GetByEmail reads the user with an address (compared case-insensitively); none is NotFound.
func (s *Store) GetByEmail(ctx context.Context, email string) (User, error) {
	const q = `SELECT ` + columns + ` FROM users WHERE email = $1`
	email = NormalizeEmail(email)
	var u User
	if err := db.OneRow(s.db.GetContext(ctx, &u, q, email), emailNotFound(email), "get user by e-mail"); err != nil {
		return User{}, err
	}
	return u, nil
}

// GetMany reads the users with the given ids, ordered by id; unknown ids are left out (Missing
// names them).
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]User, error) {
	const q = `SELECT ` + columns + ` FROM users WHERE id = ANY($1::bigint[]) ORDER BY id`
	users := []User{}
	if len(ids) == 0 {
		return users, nil
	}
	if err := s.db.SelectContext(ctx, &users, q, pq.Array(idcheck.Unique(ids))); err != nil {
		return nil, fmt.Errorf("get users: %w", err)
	}
	return users, nil
}

// Missing returns the ids that name no user, each once, in the order they were asked for. Other
// services use it to check references (an order's agents) without reading this schema.
func (s *Store) Missing(ctx context.Context, ids []int64) ([]int64, error) {
	missing, err := idcheck.Missing(ctx, s.db, "users", ids)
	if err != nil {
		return nil, fmt.Errorf("check user ids: %w", err)
	}
	return missing, nil
}

// Filter narrows a user listing; nil fields do not filter. Limit 0 means no limit.
type Filter struct {
	AccessGroup *AccessGroup
	IsActive    *bool
	Offset      int
	Limit       int
	// OnlyID, when set, narrows the list to that one user: what a caller who may see only
	// themselves is shown.
	OnlyID *int64
}

// List reads the users that match f, ordered by id.
func (s *Store) List(ctx context.Context, f Filter) ([]User, error) {
	const q = `SELECT ` + columns + ` FROM users
		WHERE ($1::text IS NULL OR access_group = $1) AND ($2::boolean IS NULL OR is_active = $2)
			AND ($5::bigint IS NULL OR id = $5)
		ORDER BY id OFFSET $3 LIMIT NULLIF($4::int, 0)`
	users := []User{}
	if err := s.db.SelectContext(ctx, &users, q, f.AccessGroup, f.IsActive, f.Offset, f.Limit, f.OnlyID); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

// Count is how many users match f's filters (Offset and Limit ignored), for a list's total.
func (s *Store) Count(ctx context.Context, f Filter) (int, error) {
	const q = `SELECT count(*) FROM users
		WHERE ($1::text IS NULL OR access_group = $1) AND ($2::boolean IS NULL OR is_active = $2)
			AND ($3::bigint IS NULL OR id = $3)`
	var n int
	if err := s.db.GetContext(ctx, &n, q, f.AccessGroup, f.IsActive, f.OnlyID); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// Create checks u and inserts it; an e-mail already taken is a Conflict.
func (s *Store) Create(ctx context.Context, u User) (int64, error) {
	const q = `INSERT INTO users (name, last_name, email, is_active, access_group, web_rtc_enabled,
			interface_language_code, language_skills_code, auto_answer, phone_mode, avatar,
			messenger_notifications_enabled, messenger_chat_id, messenger_notifications_priority,
			email_notifications_enabled, email_notifications_priority, last_login_at, last_activity_at)
		VALUES (:name, :last_name, :email, :is_active, :access_group, :web_rtc_enabled,
			:interface_language_code, :language_skills_code, :auto_answer, :phone_mode, :avatar,
			:messenger_notifications_enabled, :messenger_chat_id, :messenger_notifications_priority,
			:email_notifications_enabled, :email_notifications_priority, :last_login_at, :last_activity_at)
		RETURNING id`
	u, err := Prepare(u)
	if err != nil {
		return 0, err
	}
	id, err := s.insertReturningID(ctx, q, u)
	if err != nil {
		if _, ok := db.UniqueViolation(err); ok {
			return 0, apperr.Conflictf("email: %s is already used by another user", u.Email)
		}
		return 0, fmt.Errorf("create user: %w", err)
	}
	return id, nil
}

// Upsert checks u and writes it under its e-mail: a new user is inserted, an existing one gets
// every field of u (its id and created_at are kept). Loading fixed data (demo users) with it can
// be repeated any number of times.
func (s *Store) Upsert(ctx context.Context, u User) (int64, error) {
	const q = `INSERT INTO users (name, last_name, email, is_active, access_group, web_rtc_enabled,
			interface_language_code, language_skills_code, auto_answer, phone_mode, avatar,
			messenger_notifications_enabled, messenger_chat_id, messenger_notifications_priority,
			email_notifications_enabled, email_notifications_priority, last_login_at, last_activity_at)
		VALUES (:name, :last_name, :email, :is_active, :access_group, :web_rtc_enabled,
			:interface_language_code, :language_skills_code, :auto_answer, :phone_mode, :avatar,
			:messenger_notifications_enabled, :messenger_chat_id, :messenger_notifications_priority,
			:email_notifications_enabled, :email_notifications_priority, :last_login_at, :last_activity_at)
		ON CONFLICT (email) DO UPDATE SET
			name = EXCLUDED.name,
			last_name = EXCLUDED.last_name,
			is_active = EXCLUDED.is_active,
			access_group = EXCLUDED.access_group,
			web_rtc_enabled = EXCLUDED.web_rtc_enabled,
			interface_language_code = EXCLUDED.interface_language_code,
			language_skills_code = EXCLUDED.language_skills_code,
			auto_answer = EXCLUDED.auto_answer,
			phone_mode = EXCLUDED.phone_mode,
			avatar = EXCLUDED.avatar,
			messenger_notifications_enabled = EXCLUDED.messenger_notifications_enabled,
			messenger_chat_id = EXCLUDED.messenger_chat_id,
			messenger_notifications_priority = EXCLUDED.messenger_notifications_priority,
			email_notifications_enabled = EXCLUDED.email_notifications_enabled,
			email_notifications_priority = EXCLUDED.email_notifications_priority,
			last_login_at = EXCLUDED.last_login_at,
			last_activity_at = EXCLUDED.last_activity_at,
			updated_at = now()
		RETURNING id`
	u, err := Prepare(u)
	if err != nil {
		return 0, err
	}
	id, err := s.insertReturningID(ctx, q, u)
	if err != nil {
		return 0, fmt.Errorf("upsert user %s: %w", u.Email, err)
	}
	return id, nil
}

func (s *Store) insertReturningID(ctx context.Context, namedQuery string, u User) (int64, error) {
	q, args, err := s.db.BindNamed(namedQuery, u)
	if err != nil {
		return 0, fmt.Errorf("bind: %w", err)
	}
	var id int64
	if err := s.db.QueryRowxContext(ctx, q, args...).Scan(&id); err != nil {
		return 0, err
	}
	return id, nil
}

// SetActive switches a user on or off. An inactive user's API keys stop working at once, because
// key verification reads this flag on every cache miss.
func (s *Store) SetActive(ctx context.Context, id int64, active bool) error {
	const q = `UPDATE users SET is_active = $2, updated_at = now() WHERE id = $1`
	res, err := s.db.ExecContext(ctx, q, id, active)
	if err != nil {
		return fmt.Errorf("set user %d active: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("set user %d active: %w", id, err)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

// Owner is the access group and activity of user id, as the API-key routes need them; an unknown
// user is NotFound.
func (s *Store) Owner(ctx context.Context, id int64) (AccessGroup, bool, error) {
	u, err := s.Get(ctx, id)
	if err != nil {
		return "", false, err
	}
	return u.AccessGroup, u.IsActive, nil
}
