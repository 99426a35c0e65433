package notification

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes notification records.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

type row struct {
	ID        int64      `db:"id"`
	UserID    int64      `db:"user_id"`
	Title     string     `db:"title"`
	Text      string     `db:"text"`
	Priority  string     `db:"priority"`
	Level     string     `db:"level"`
	CreatedAt time.Time  `db:"created_at"`
	ReadAt    *time.Time `db:"read_at"`
}

func (r row) notification() Notification {
	return Notification{ID: r.ID, UserID: r.UserID, CreatedAt: r.CreatedAt, ReadAt: r.ReadAt,
		Content: Content{Title: r.Title, Text: r.Text, Priority: Priority(r.Priority), Level: Level(r.Level)}}
}

// InsertForRecipients stores one record of c per user in tx and returns the records it created.
// Users who already have a record of this command get none: a redelivered command stores nothing
// twice, and its deliveries are not planned again.
func InsertForRecipients(ctx context.Context, tx sqlx.ExtContext, commandID string, c Content, userIDs []int64) ([]Notification, error) {
	const q = `
INSERT INTO notifications (command_id, user_id, title, text, priority, level)
SELECT $1, u, $3, $4, $5, $6 FROM unnest($2::bigint[]) AS u
ON CONFLICT (command_id, user_id) DO NOTHING
RETURNING id, user_id, title, text, priority, level, created_at, read_at`
	if len(userIDs) == 0 {
		return nil, nil
	}
	var rows []row
	if err := sqlx.SelectContext(ctx, tx, &rows, q, commandID, pq.Int64Array(userIDs), c.Title, c.Text, c.Priority, c.Level); err != nil {
		return nil, fmt.Errorf("insert notifications of command %s: %w", commandID, err)
	}
	out := make([]Notification, len(rows))
	for i, r := range rows {
		out[i] = r.notification()
	}
	return out, nil
}

// Filter narrows a user's inbox.
type Filter struct {
	UserID     int64
	UnreadOnly bool
	Offset     int
	Limit      int
}

// List is a page of the user's notifications, newest first, and how many match in all.
func (s *Store) List(ctx context.Context, f Filter) ([]Notification, int, error) {
	const (
		page = `
SELECT id, user_id, title, text, priority, level, created_at, read_at
FROM notifications
WHERE user_id = $1 AND (NOT $2 OR read_at IS NULL)
ORDER BY id DESC
LIMIT $3 OFFSET $4`
		count = `SELECT count(*) FROM notifications WHERE user_id = $1 AND (NOT $2 OR read_at IS NULL)`
	)
	var rows []row
	if err := s.conn.SelectContext(ctx, &rows, page, f.UserID, f.UnreadOnly, f.Limit, f.Offset); err != nil {
		return nil, 0, fmt.Errorf("list notifications of user %d: %w", f.UserID, err)
	}
	var total int
	if err := s.conn.GetContext(ctx, &total, count, f.UserID, f.UnreadOnly); err != nil {
		return nil, 0, fmt.Errorf("count notifications of user %d: %w", f.UserID, err)
	}
	out := make([]Notification, len(rows))
	for i, r := range rows {
		out[i] = r.notification()
	}
	return out, total, nil
}

// MarkRead marks the user's notification id read; the first read time is kept when it is marked
// again. Another user's notification is NotFound, as if it did not exist.
func (s *Store) MarkRead(ctx context.Context, userID, id int64) error {
	const q = `UPDATE notifications SET read_at = COALESCE(read_at, now()) WHERE id = $1 AND user_id = $2`
	res, err := s.conn.ExecContext(ctx, q, id, userID)
	if err != nil {
		return fmt.Errorf("mark notification %d read: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.NotFoundf("notification %d not found", id)
	}
	return nil
}
