package db

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// Prepared is a statement prepared on first use and kept for the pool's life. Prepared,
// PostgreSQL plans a statement once per connection (database/sql prepares it on every pooled
// connection that runs it) and a call is Bind and Execute, still one round trip.
type Prepared struct {
	query string
	stmt  atomic.Pointer[sql.Stmt]
	mu    sync.Mutex // serialises the first preparation
}

// NewPrepared is query, to be prepared on its first Get.
func NewPrepared(query string) *Prepared { return &Prepared{query: query} }

// Get returns the prepared statement on conn, preparing it if no call has yet; a failed
// preparation is not kept, so the next call tries again. Every call must pass the same conn.
func (p *Prepared) Get(ctx context.Context, conn *sqlx.DB) (*sql.Stmt, error) {
	if st := p.stmt.Load(); st != nil {
		return st, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.stmt.Load(); st != nil {
		return st, nil
	}
	st, err := conn.PrepareContext(ctx, p.query)
	if err != nil {
		return nil, err
	}
	p.stmt.Store(st)
	return st, nil
}
