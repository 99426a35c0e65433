package imports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// The states of an import.
const (
	StateQueued  = "queued"
	StateRunning = "running"
	StateDone    = "done"
	StateFailed  = "failed"
)

// The states of a row.
const (
	RowPending = "pending"
	RowCreated = "created"
	RowRefused = "refused"
)

// Import is an import's row in lead_imports.
type Import struct {
	ID          uuid.UUID  `db:"id"`
	State       string     `db:"state"`
	Format      string     `db:"format"`
	UserID      *int64     `db:"user_id"`
	AccessGroup string     `db:"access_group"`
	IP          *string    `db:"ip"`
	OrderID     *int64     `db:"order_id"`
	OrderCode   *string    `db:"order_code"`
	RowsTotal   int        `db:"rows_total"`
	RowsDone    int        `db:"rows_done"`
	RowsCreated int        `db:"rows_created"`
	RowsRefused int        `db:"rows_refused"`
	Error       *string    `db:"error"`
	CreatedAt   time.Time  `db:"created_at"`
	StartedAt   *time.Time `db:"started_at"`
	FinishedAt  *time.Time `db:"finished_at"`
}

// RowResult is a row's outcome in lead_import_rows.
type RowResult struct {
	Row    int    `db:"row_no"`
	Status string `db:"status"`
	LeadID *int64 `db:"lead_id"`
	Errors []byte `db:"errors"` // JSON; NULL scans only into a plain []byte
}

// Store keeps imports and their rows.
type Store struct {
	conn *sqlx.DB
}

// NewStore is a store on the lead service's schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{conn: conn} }

// Create stores imp and every row rows yields, in one transaction: an import exists, with all its
// rows, or not at all. At most maxRows rows are taken; a file error (or one row too many) rolls
// everything back. It returns imp as stored.
func (s *Store) Create(ctx context.Context, imp Import, rows Rows, maxRows int) (Import, error) {
	err := db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		const insert = `INSERT INTO lead_imports (id, format, user_id, access_group, ip, order_id, order_code, rows_total)
VALUES ($1, $2, $3, $4, $5, $6, $7, 0)`
		if _, err := tx.ExecContext(ctx, insert, imp.ID, imp.Format, imp.UserID, imp.AccessGroup, imp.IP,
			imp.OrderID, imp.OrderCode); err != nil {
			return fmt.Errorf("insert import: %w", err)
		}
		total, refused, err := copyRows(ctx, tx, imp.ID, rows, maxRows)
		if err != nil {
			return err
		}
		const counts = `UPDATE lead_imports SET rows_total = $2, rows_done = $3, rows_refused = $3 WHERE id = $1
RETURNING state, rows_total, rows_done, rows_refused, created_at`
		return tx.QueryRowxContext(ctx, counts, imp.ID, total, refused).
			Scan(&imp.State, &imp.RowsTotal, &imp.RowsDone, &imp.RowsRefused, &imp.CreatedAt)
	})
	if err != nil {
		return Import{}, err
	}
	// The COPY just wrote up to 200,000 pending rows the planner's statistics know nothing of:
	// it would then plan each chunk's claim as a bitmap scan and a sort of every pending row of
	// the import (28.8 ms a chunk at 100,000 rows, against 0.24 ms after ANALYZE; measured in
	// docs/performance.md, "Bulk import"). Autovacuum re-analyzes too late for an import of
	// seconds. ANALYZE samples a bounded number of rows (tens of ms); the import is stored
	// whether it succeeds or not, so its error is the caller's to log, not to answer.
	if _, aerr := s.conn.ExecContext(ctx, `ANALYZE lead_import_rows`); aerr != nil {
		return imp, fmt.Errorf("%w: %w", ErrStatsStale, aerr)
	}
	return imp, nil
}

// ErrStatsStale is Create's error when the import is stored but the table's statistics could not
// be refreshed: the import will run, more slowly.
var ErrStatsStale = errors.New("import stored; refreshing the planner statistics failed")

// copyRows streams rows into lead_import_rows with COPY: the rows never sit in memory together.
func copyRows(ctx context.Context, tx *sqlx.Tx, id uuid.UUID, rows Rows, maxRows int) (total, refused int, err error) {
	st, err := tx.PrepareContext(ctx, `COPY lead_import_rows (import_id, row_no, body, status, errors) FROM STDIN`)
	if err != nil {
		return 0, 0, fmt.Errorf("copy import rows: %w", err)
	}
	defer func() { _ = st.Close() }()
	for {
		r, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if total == maxRows {
			return 0, 0, apperr.Field("body", fmt.Sprintf("must have at most %d rows", maxRows))
		}
		total++
		var body, errs any
		status := RowPending
		if r.Errors != nil {
			status, errs = RowRefused, storableErrors(r.Errors)
			refused++
		} else {
			body = string(r.Body)
		}
		if _, err := st.ExecContext(ctx, id, r.No, body, status, errs); err != nil {
			return 0, 0, fmt.Errorf("copy import row %d: %w", r.No, err)
		}
	}
	if total == 0 {
		return 0, 0, apperr.Field("body", "must have at least one row")
	}
	if _, err := st.ExecContext(ctx); err != nil {
		return 0, 0, fmt.Errorf("copy import rows: %w", err)
	}
	return total, refused, nil
}

const importColumns = `id, state, format, user_id, access_group, ip, order_id, order_code, rows_total, rows_done,
rows_created, rows_refused, error, created_at, started_at, finished_at`

// Get is the import with an id.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (Import, error) {
	var imp Import
	err := s.conn.GetContext(ctx, &imp, `SELECT `+importColumns+` FROM lead_imports WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Import{}, apperr.NotFoundf("import %s does not exist", id)
	}
	if err != nil {
		return Import{}, fmt.Errorf("read import: %w", err)
	}
	return imp, nil
}

// Rows is a page of an import's rows in row order, only those of status when it is set, with
// the number of such rows.
func (s *Store) Rows(ctx context.Context, id uuid.UUID, status string, offset, limit int) ([]RowResult, int, error) {
	var total int
	const count = `SELECT count(*) FROM lead_import_rows WHERE import_id = $1 AND ($2 = '' OR status = $2)`
	if err := s.conn.GetContext(ctx, &total, count, id, status); err != nil {
		return nil, 0, fmt.Errorf("count import rows: %w", err)
	}
	var out []RowResult
	const page = `SELECT row_no, status, lead_id, errors FROM lead_import_rows
WHERE import_id = $1 AND ($2 = '' OR status = $2) ORDER BY row_no OFFSET $3 LIMIT $4`
	if err := s.conn.SelectContext(ctx, &out, page, id, status, offset, limit); err != nil {
		return nil, 0, fmt.Errorf("read import rows: %w", err)
	}
	return out, total, nil
}

// EachRow calls fn with every row of an import (of status, when set) in row order, reading them
// as a stream.
func (s *Store) EachRow(ctx context.Context, id uuid.UUID, status string, fn func(RowResult) error) error {
	const all = `SELECT row_no, status, lead_id, errors FROM lead_import_rows
WHERE import_id = $1 AND ($2 = '' OR status = $2) ORDER BY row_no`
	rows, err := s.conn.QueryxContext(ctx, all, id, status)
	if err != nil {
		return fmt.Errorf("read import rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r RowResult
		if err := rows.StructScan(&r); err != nil {
			return fmt.Errorf("read import row: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
