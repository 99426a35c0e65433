// Package idempotency makes a POST safe to retry: a request carrying an Idempotency-Key is run once
// per caller and key; the same key and body within the retention window replays the stored
// response, the same key with another body is a 409.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// ReplayedHeader marks a response that was replayed from storage.
const ReplayedHeader = "Idempotent-Replayed"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the table this package needs, to be applied in each service's own schema.
func Migrations() db.Migrations {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder is fixed at build time
	}
	return db.Migrations{Table: "idempotency_version", FS: sub}
}

// Store keeps keys and responses in the service's own database.
type Store struct {
	conn    *sqlx.DB
	replays prometheus.Counter
	// Retention is how long a key is remembered (24 h: docs/api.md, "Idempotency").
	Retention time.Duration
	// Abandoned is how long a claimed key may stay without a response before it is taken over: the
	// process that claimed it died mid-request.
	Abandoned time.Duration
	log       *zap.Logger
}

// New is a store with the standard 24 h retention.
func New(conn *sqlx.DB, log *zap.Logger) *Store {
	return &Store{conn: conn, Retention: 24 * time.Hour, Abandoned: time.Minute, log: log}
}

// replayKey is where ReplayAs leaves the answer to store in place of the one sent.
const replayKey = "idempotency.replay"

// ReplayAs makes a replay of this request answer data with message instead of the answer the
// handler sends now: an answer that shows a secret once (an API key, a signing secret) must not
// be stored, nor shown a second time to whoever holds the Idempotency-Key. data is the answer
// without the secret; message says why it is missing.
func ReplayAs(c *gin.Context, message string, data any) {
	c.Set(replayKey, web.Envelope{Success: true, Message: message, Data: data})
}

// storedBody is the body to keep for replays of c's request: the one ReplayAs set, else the one sent.
func storedBody(c *gin.Context, sent []byte) ([]byte, error) {
	v, ok := c.Get(replayKey)
	if !ok {
		return sent, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("idempotency: encode the answer to replay: %w", err)
	}
	return b, nil
}

// Middleware guards the route it is attached to.
func (s *Store) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader(Header)
		if key == "" {
			c.Next()
			return
		}
		if len(key) > 255 {
			web.Fail(c, apperr.Field(Header, "must be at most 255 characters"))
			return
		}
		body, err := web.ReadBody(c)
		if err != nil {
			web.Fail(c, err)
			return
		}
		sum := sha256.Sum256(append([]byte(c.Request.Method+" "+c.Request.URL.Path+"\n"), body...))
		owner := c.GetHeader(identity.HeaderUserID)
		ctx := c.Request.Context()

		replay, err := s.claim(ctx, owner, key, sum[:])
		if err != nil {
			web.Fail(c, err)
			return
		}
		if replay != nil {
			if s.replays != nil {
				s.replays.Inc()
			}
			c.Header(ReplayedHeader, "true")
			c.Data(replay.status, "application/json; charset=utf-8", replay.body)
			c.Abort()
			return
		}

		rec := &recorder{ResponseWriter: c.Writer}
		c.Writer = rec
		completed := false
		defer func() {
			status := rec.Status()
			if !completed {
				// The handler panicked: whatever it wrote, the key must not stay claimed, or every
				// retry would be refused as "still being processed".
				status = http.StatusInternalServerError
			}
			// The request's own context may be cancelled by now; the outcome must still be recorded.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			body, err := storedBody(c, rec.buf.Bytes())
			if err != nil {
				// Never the answer sent instead: it may hold a secret. Released, the key lets the
				// caller retry (and run the request again) rather than replay it.
				logging.From(ctx, s.logger()).Error("idempotency: the answer to replay", zap.Error(err))
				status, body = http.StatusInternalServerError, nil
			}
			if err := s.finish(sctx, owner, key, status, body); err != nil {
				logging.From(ctx, s.logger()).Warn("idempotency: record outcome, retrying in the background", zap.Error(err))
				// Left claimed, the key would refuse every retry as "still being processed" until
				// Abandoned, and then a success would run a second time: keep trying while the
				// claim holds (the database restarting is the usual cause).
				go s.finishLater(context.WithoutCancel(ctx), owner, key, status, bytes.Clone(body))
			}
		}()
		c.Next()
		completed = true
	}
}

func (s *Store) logger() *zap.Logger {
	if s.log == nil {
		return zap.NewNop()
	}
	return s.log
}

type stored struct {
	status int
	body   []byte
}

// claim either reserves the key for this request (nil, nil) or returns the response to replay.
func (s *Store) claim(ctx context.Context, owner, key string, hash []byte) (*stored, error) {
	for range 3 {
		res, err := s.conn.ExecContext(ctx,
			`INSERT INTO idempotency_keys (owner, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT (owner, key) DO NOTHING`,
			owner, key, hash)
		if err != nil {
			return nil, fmt.Errorf("idempotency claim: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil, nil
		}
		var row struct {
			Hash      []byte     `db:"request_hash"`
			Status    *int       `db:"status"`
			Response  []byte     `db:"response"`
			CreatedAt time.Time  `db:"created_at"`
			Completed *time.Time `db:"completed_at"`
		}
		err = s.conn.GetContext(ctx, &row,
			`SELECT request_hash, status, response, created_at, completed_at FROM idempotency_keys WHERE owner = $1 AND key = $2`,
			owner, key)
		if db.IsNoRows(err) {
			continue // finished with an error and released between our insert and select
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency lookup: %w", err)
		}
		age := time.Since(row.CreatedAt)
		if age > s.Retention || (row.Completed == nil && age > s.Abandoned) {
			if _, err := s.conn.ExecContext(ctx,
				`DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2 AND created_at = $3`, owner, key, row.CreatedAt); err != nil {
				return nil, fmt.Errorf("idempotency expire: %w", err)
			}
			continue
		}
		if !bytes.Equal(row.Hash, hash) {
			return nil, apperr.Conflictf("%s: already used with a different request", Header)
		}
		if row.Completed == nil || row.Status == nil {
			return nil, apperr.Conflictf("%s: a request with this key is still being processed", Header)
		}
		return &stored{status: *row.Status, body: row.Response}, nil
	}
	return nil, apperr.Conflictf("%s: a request with this key is still being processed", Header)
}

// finish stores a success for replay; any failure releases the key so the caller may retry.
func (s *Store) finish(ctx context.Context, owner, key string, status int, body []byte) error {
	if status >= http.StatusOK && status < http.StatusMultipleChoices {
		_, err := s.conn.ExecContext(ctx,
			`UPDATE idempotency_keys SET status = $3, response = $4, completed_at = now() WHERE owner = $1 AND key = $2`,
			owner, key, status, body)
		return err
	}
	_, err := s.conn.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE owner = $1 AND key = $2`, owner, key)
	return err
}

// finishLater retries finish until it succeeds or the claim would count as abandoned anyway.
func (s *Store) finishLater(ctx context.Context, owner, key string, status int, body []byte) {
	deadline := time.Now().Add(s.Abandoned)
	wait := 100 * time.Millisecond
	for time.Now().Before(deadline) {
		time.Sleep(wait)
		wait = min(2*wait, 2*time.Second)
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := s.finish(fctx, owner, key, status, body)
		cancel()
		if err == nil {
			logging.From(ctx, s.logger()).Info("idempotency: outcome recorded after a retry")
			return
		}
	}
	logging.From(ctx, s.logger()).Error("idempotency: outcome never recorded; the key stays claimed until it is abandoned")
}

// Purge drops keys past retention; services call it now and then.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	res, err := s.conn.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < now() - $1::interval`,
		fmt.Sprintf("%d microseconds", s.Retention.Microseconds()))
	if err != nil {
		return 0, fmt.Errorf("idempotency purge: %w", err)
	}
	return res.RowsAffected()
}

// PurgeEvery runs Purge at each interval until ctx is done, so the table stays small.
func (s *Store) PurgeEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Purge(ctx); err != nil && ctx.Err() == nil && s.log != nil {
				s.log.Warn("purge idempotency keys", zap.Error(err))
			}
		}
	}
}

// PurgeHourly is the purge every service with keyed creates runs, as a task (app.Tasks.Background):
// PurgeEvery hour until ctx is done.
func (s *Store) PurgeHourly(ctx context.Context) error {
	s.PurgeEvery(ctx, time.Hour)
	return nil
}

type recorder struct {
	gin.ResponseWriter
	buf bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.buf.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.buf.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}

// CountReplays registers idempotency_replays_total on reg and counts every replayed answer in it.
func (s *Store) CountReplays(reg prometheus.Registerer) *Store {
	s.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "idempotency_replays_total",
		Help: "Requests answered from a stored answer because their Idempotency-Key was used before.",
	})
	reg.MustRegister(s.replays)
	return s
}
