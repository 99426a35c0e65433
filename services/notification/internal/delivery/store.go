package delivery

import (
	"context"
	"fmt"
	"time"

	"ccplatform/services/notification/internal/notification"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store keeps the deliveries table.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Insert stores planned deliveries in tx, due now; the notification's own transaction, so a
// record never exists without its deliveries.
func Insert(ctx context.Context, tx sqlx.ExtContext, planned []Planned) error {
	const q = `
INSERT INTO deliveries (notification_id, channel, destination)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
ON CONFLICT (notification_id, channel) DO NOTHING`
	if len(planned) == 0 {
		return nil
	}
	ids := make(pq.Int64Array, len(planned))
	chans := make(pq.StringArray, len(planned))
	dests := make(pq.StringArray, len(planned))
	for i, p := range planned {
		ids[i], chans[i], dests[i] = p.NotificationID, string(p.Channel), p.Destination
	}
	if _, err := tx.ExecContext(ctx, q, ids, chans, dests); err != nil {
		return fmt.Errorf("insert deliveries: %w", err)
	}
	return nil
}

// Claim takes up to limit due pending deliveries of ch for this process: their attempt is counted
// and they are not due again for lease, so another worker skips them while this one sends, and a
// worker that dies mid-send leaves them to be retried when the lease ends.
func (s *Store) Claim(ctx context.Context, ch Channel, limit int, lease time.Duration) ([]Delivery, error) {
	const q = `
WITH due AS (
    SELECT notification_id, channel FROM deliveries
    WHERE channel = $1 AND status = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE deliveries d
SET attempts = d.attempts + 1, next_attempt_at = now() + $3 * interval '1 microsecond', updated_at = now()
FROM due, notifications n
WHERE d.notification_id = due.notification_id AND d.channel = due.channel AND n.id = d.notification_id
RETURNING d.notification_id, d.channel, d.destination, d.attempts,
          n.user_id, n.title, n.text, n.priority, n.level, n.created_at, n.read_at`
	var rows []struct {
		NotificationID int64      `db:"notification_id"`
		Channel        string     `db:"channel"`
		Destination    string     `db:"destination"`
		Attempts       int        `db:"attempts"`
		UserID         int64      `db:"user_id"`
		Title          string     `db:"title"`
		Text           string     `db:"text"`
		Priority       string     `db:"priority"`
		Level          string     `db:"level"`
		CreatedAt      time.Time  `db:"created_at"`
		ReadAt         *time.Time `db:"read_at"`
	}
	if err := s.conn.SelectContext(ctx, &rows, q, string(ch), limit, lease.Microseconds()); err != nil {
		return nil, fmt.Errorf("claim %s deliveries: %w", ch, err)
	}
	out := make([]Delivery, len(rows))
	for i, r := range rows {
		out[i] = Delivery{
			Notification: notification.Notification{ID: r.NotificationID, UserID: r.UserID, CreatedAt: r.CreatedAt, ReadAt: r.ReadAt,
				Content: notification.Content{Title: r.Title, Text: r.Text, Priority: notification.Priority(r.Priority), Level: notification.Level(r.Level)}},
			Channel: Channel(r.Channel), Destination: r.Destination, Attempt: r.Attempts,
		}
	}
	return out, nil
}

// MarkSent records a delivery as done.
func (s *Store) MarkSent(ctx context.Context, d Delivery) error {
	const q = `
UPDATE deliveries SET status = 'sent', sent_at = now(), last_error = NULL, updated_at = now()
WHERE notification_id = $1 AND channel = $2`
	if _, err := s.conn.ExecContext(ctx, q, d.ID, string(d.Channel)); err != nil {
		return fmt.Errorf("mark %s delivery of %d sent: %w", d.Channel, d.ID, err)
	}
	return nil
}

// Retry records a failed attempt and makes the delivery due again after wait.
func (s *Store) Retry(ctx context.Context, d Delivery, wait time.Duration, cause error) error {
	const q = `
UPDATE deliveries SET next_attempt_at = now() + $3 * interval '1 microsecond', last_error = $4, updated_at = now()
WHERE notification_id = $1 AND channel = $2`
	if _, err := s.conn.ExecContext(ctx, q, d.ID, string(d.Channel), wait.Microseconds(), cause.Error()); err != nil {
		return fmt.Errorf("reschedule %s delivery of %d: %w", d.Channel, d.ID, err)
	}
	return nil
}

// MarkFailed gives a delivery up, keeping the last error for whoever looks.
func (s *Store) MarkFailed(ctx context.Context, d Delivery, cause error) error {
	const q = `
UPDATE deliveries SET status = 'failed', last_error = $3, updated_at = now()
WHERE notification_id = $1 AND channel = $2`
	if _, err := s.conn.ExecContext(ctx, q, d.ID, string(d.Channel), cause.Error()); err != nil {
		return fmt.Errorf("mark %s delivery of %d failed: %w", d.Channel, d.ID, err)
	}
	return nil
}
