package dnc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/listquery"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes dnc_entries.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the lead service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Counts is what a create did: entries added, and entries that existed and took the new reason
// and expiry.
type Counts struct {
	Added   int `json:"added"`
	Updated int `json:"updated"`
}

// Add puts ch's phones on the list for its order (or every order): one statement, so a lease
// running at the same moment sees all of them or none.
func (s *Store) Add(ctx context.Context, ch Change, by *int64) (Counts, error) {
	const q = `
INSERT INTO dnc_entries (phone, order_id, reason, expires_at, created_by)
SELECT p, $2, $3, $4, $5 FROM unnest($1::text[]) AS p
ON CONFLICT (phone, (coalesce(order_id, 0))) DO UPDATE
    SET reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at, updated_at = now()
RETURNING xmax = 0 AS inserted`
	var inserted []bool
	if err := s.conn.SelectContext(ctx, &inserted, q, pq.StringArray(ch.Phones), ch.OrderID, ch.Reason, ch.ExpiresAt, by); err != nil {
		return Counts{}, fmt.Errorf("add do-not-call entries: %w", err)
	}
	var c Counts
	for _, ins := range inserted {
		if ins {
			c.Added++
		} else {
			c.Updated++
		}
	}
	return c, nil
}

// Remove takes ch's phones off the list of exactly its order (nil: the every-order entries) and
// returns how many entries it removed.
func (s *Store) Remove(ctx context.Context, ch Change) (int64, error) {
	const q = `DELETE FROM dnc_entries WHERE phone = ANY($1) AND coalesce(order_id, 0) = coalesce($2::bigint, 0)`
	res, err := s.conn.ExecContext(ctx, q, pq.StringArray(ch.Phones), ch.OrderID)
	if err != nil {
		return 0, fmt.Errorf("remove do-not-call entries: %w", err)
	}
	return res.RowsAffected()
}

// Filter selects entries for the list.
type Filter struct {
	Phone string
	// OrderIDs keeps the entries of these orders; Global keeps the every-order entries too. Neither
	// set: every entry.
	OrderIDs []int64
	Global   bool
	// Restricted means OrderIDs and Global are the whole of what may be listed (a client's scope).
	Restricted bool
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if f.Phone != "" {
		conds = append(conds, "phone = "+arg(f.Phone))
	}
	if f.Restricted || len(f.OrderIDs) > 0 {
		var alts []string
		if len(f.OrderIDs) > 0 {
			alts = append(alts, "order_id = ANY("+arg(pq.Int64Array(f.OrderIDs))+")")
		}
		if f.Global {
			alts = append(alts, "order_id IS NULL")
		}
		if len(alts) == 0 {
			alts = append(alts, "false")
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List is a page of the entries that pass f, newest first, and how many pass f in all.
func (s *Store) List(ctx context.Context, f Filter, page listquery.Page) ([]Entry, int, error) {
	where, args := f.where()
	var total int
	if err := s.conn.GetContext(ctx, &total, `SELECT count(*) FROM dnc_entries`+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count do-not-call entries: %w", err)
	}
	list := []Entry{}
	if total == 0 || page.Offset >= total {
		return list, total, nil
	}
	n := len(args)
	q := `SELECT id, phone, order_id, reason, expires_at, created_by, created_at, updated_at FROM dnc_entries` + where +
		` ORDER BY id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2)
	if err := s.conn.SelectContext(ctx, &list, q, append(args, page.Limit, page.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list do-not-call entries: %w", err)
	}
	return list, total, nil
}

// Listed reports whether phone has an entry active at now for the order (orderID nil: none), or,
// when everyOrder, an every-order entry: a caller who may not see the every-order list (a client)
// checks its order's entries only.
func (s *Store) Listed(ctx context.Context, phone string, orderID *int64, everyOrder bool, now time.Time) (bool, error) {
	const q = `
SELECT EXISTS (SELECT 1 FROM dnc_entries WHERE phone = $1
    AND (order_id = $2 OR ($3 AND order_id IS NULL))
    AND (expires_at IS NULL OR expires_at > $4))`
	var ok bool
	if err := s.conn.GetContext(ctx, &ok, q, phone, orderID, everyOrder, now); err != nil {
		return false, fmt.Errorf("check do-not-call list: %w", err)
	}
	return ok, nil
}
