package order

import (
	"context"
	"errors"
	"fmt"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes orders and the languages catalog.
type Store struct {
	conn *sqlx.DB
	sql  statements
}

// NewStore is a store on the service's schema. Its statements are built here, once, from the
// description of an order's fields (Order.fields).
func NewStore(conn *sqlx.DB) *Store {
	return &Store{conn: conn, sql: statementsFor((&Order{}).fields())}
}

// maxCodeAttempts bounds the retries of a generated code that another request took meanwhile.
const maxCodeAttempts = 10

// Create stores o and returns its id and code. When o.Code is empty the code is generated from the
// title; if a concurrent create takes the same code first, the unique index refuses ours and the
// next free code is tried. An explicit code that is taken is a conflict.
func (s *Store) Create(ctx context.Context, o Order) (id int64, code string, err error) {
	generate := o.Code == ""
	base := CodeFromTitle(o.Title)
	for range maxCodeAttempts {
		if generate {
			taken, err := s.codesFrom(ctx, base)
			if err != nil {
				return 0, "", err
			}
			o.Code = FirstFreeCode(base, taken)
		}
		err := s.conn.QueryRowContext(ctx, s.sql.insert, o.insertArgs()...).Scan(&id)
		if c, ok := db.UniqueViolation(err); ok && c == "orders_code_key" && generate {
			continue
		}
		if err != nil {
			return 0, "", writeError("create order", o.Code, err)
		}
		return id, o.Code, nil
	}
	return 0, "", fmt.Errorf("create order: no free code from %q after %d attempts", base, maxCodeAttempts)
}

// codesFrom lists the codes that a code generated from base could collide with: base itself and
// base-<anything>. A prefix compare, not LIKE, because '_' in base is a LIKE wildcard.
func (s *Store) codesFrom(ctx context.Context, base string) ([]string, error) {
	const q = `SELECT code FROM orders WHERE code = $1 OR left(code, length($1) + 1) = $1 || '-'`
	var codes []string
	if err := s.conn.SelectContext(ctx, &codes, q, base); err != nil {
		return nil, fmt.Errorf("codes from %q: %w", base, err)
	}
	return codes, nil
}

// Get reads one order; an unknown id is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (Order, error) {
	var o Order
	err := s.conn.QueryRowContext(ctx, `SELECT `+s.sql.columns+` FROM orders WHERE id = $1`, id).Scan(o.targets()...)
	if err := db.OneRow(err, notFound(id), "get order %d", id); err != nil {
		return Order{}, err
	}
	return o, nil
}

// Update changes order id by fn inside one transaction, with the row locked so that concurrent
// partial updates of different fields do not undo each other, and records order.updated in the
// same transaction (published by the outbox relay after the commit). It returns the order as stored.
func (s *Store) Update(ctx context.Context, id int64, fn func(o *Order) error) (Order, error) {
	lock := `SELECT ` + s.sql.columns + ` FROM orders WHERE id = $1 FOR UPDATE`
	var out Order
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		var o Order
		err := tx.QueryRowContext(ctx, lock, id).Scan(o.targets()...)
		if err := db.OneRow(err, notFound(id), "lock order %d", id); err != nil {
			return err
		}
		if err := fn(&o); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, s.sql.update, o.updateArgs(id)...).Scan(out.targets()...); err != nil {
			return writeError(fmt.Sprintf("update order %d", id), o.Code, err)
		}
		return announceUpdate(ctx, tx, out)
	})
	if err != nil {
		return Order{}, err
	}
	return out, nil
}

// Languages lists the codes of the available languages.
func (s *Store) Languages(ctx context.Context) ([]string, error) {
	const q = `SELECT code FROM languages ORDER BY code`
	var codes []string
	if err := s.conn.SelectContext(ctx, &codes, q); err != nil {
		return nil, fmt.Errorf("list languages: %w", err)
	}
	return codes, nil
}

func notFound(id int64) error {
	return apperr.NotFoundf("order %d does not exist", id)
}

// CodeTaken is the conflict of an explicit code that another order has.
func CodeTaken(code string) error {
	const rule = "is already used by another order"
	return &apperr.Error{Kind: apperr.Conflict, Message: "code: " + rule, Fields: apperr.FieldErrors{"code": rule}}
}

// writeError classifies a failed write: a taken code is a conflict, and a reference that vanished
// between its check and the write (a foreign key) is reported like a reference that never existed.
func writeError(op, code string, err error) error {
	if c, ok := db.UniqueViolation(err); ok && c == "orders_code_key" {
		return CodeTaken(code)
	}
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23503" {
		switch pe.Constraint {
		case "orders_call_attempt_group_id_fkey":
			return apperr.Field("callAttemptGroupId", "no call-attempt group has this id")
		case "orders_ai_default_language_fkey":
			return apperr.Field("aiDefaultLanguage", "is not an available language")
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// visible is the one statement of who sees which orders, when the caller does not see them all
// (SeesAll): a client its own, an agent (senior or not) those they or their agent groups work in.
// The detail check and the scope other services read both run it, so the rule is written once.
// $1 client?, $2 user id, $3 agent?, $4 the agent's groups, $5 one order id or NULL for all.
const visible = `SELECT id, show_lead_contacts_to_agent FROM orders
	WHERE (($1 AND client_user_id = $2) OR ($3 AND ($2 = ANY(agent_user_ids) OR agent_group_ids && $4::bigint[])))
	AND ($5::bigint IS NULL OR id = $5)
	ORDER BY id`

// VisibleTo lists, by id, the orders c may see when c does not see them all (SeesAll), all of them
// or only order *only when it is set; hidden are those of them whose lead contacts c may not see (an
// agent, in an order with showLeadContactsToAgent off).
func (s *Store) VisibleTo(ctx context.Context, c Actor, only *int64) (ids, hidden []int64, err error) {
	groups := c.GroupIDs
	if groups == nil {
		groups = []int64{}
	}
	var rows []struct {
		ID   int64 `db:"id"`
		Show bool  `db:"show_lead_contacts_to_agent"`
	}
	if err := s.conn.SelectContext(ctx, &rows, visible, c.Group == access.Client, c.UserID, c.isAgent(), pq.Array(groups), only); err != nil {
		return nil, nil, fmt.Errorf("orders visible to user %d: %w", c.UserID, err)
	}
	ids, hidden = []int64{}, []int64{}
	for _, r := range rows {
		ids = append(ids, r.ID)
		if c.isAgent() && !r.Show {
			hidden = append(hidden, r.ID)
		}
	}
	return ids, hidden, nil
}
