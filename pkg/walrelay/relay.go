package walrelay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/requestid"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Defaults of the Relay's optional fields.
const (
	DefaultBatchSize      = 500
	DefaultLinger         = 5 * time.Millisecond
	DefaultMaxWait        = 50 * time.Millisecond
	DefaultPublishTimeout = 5 * time.Second
	DefaultRetry          = time.Second
	DefaultParallel       = 64
)

// statusEvery is how often a relay tells the server where it is even with nothing new to confirm:
// well inside wal_sender_timeout (60 s by default), after which the server drops a silent client.
const statusEvery = 5 * time.Second

// Relay publishes the messages emitted under Prefix in its database, holding the logical slot Slot.
// Any number of relays may run on one slot (one per replica): the slot takes one reader at a time,
// so one relay publishes and the others wait and try again every Retry, taking over when the
// holder stops or dies. Messages are published in commit order (Order keys apart, see Message) and
// the slot is advanced past a transaction only once the broker confirmed all of its messages.
type Relay struct {
	// DB is the database of the slot (for EnsureSlot); URL opens the relay's replication connection.
	DB  *sqlx.DB
	URL string
	// Name is the application name of the replication connection (which process holds the slot).
	Name        string
	Slot        string
	Publication string
	Prefix      string
	Publisher   *mq.Publisher
	Log         *zap.Logger
	Metrics     *Metrics
	// BatchSize bounds the messages of one batch; a batch ends at a transaction's commit, so one
	// transaction with more messages is one batch of its own.
	BatchSize int
	// Linger is how long the stream may stay quiet before a partial batch is published, and
	// MaxWait the longest a message waits for its batch to fill.
	Linger, MaxWait time.Duration
	// PublishTimeout bounds one publish before it is tried again (the broker down).
	PublishTimeout time.Duration
	// Retry is the pause before a relay tries the slot again (held by another, or failing).
	Retry time.Duration
	// Parallel bounds the publishes of one batch awaiting their confirms at once.
	Parallel int
	// GroupType, when set, joins the messages of a batch that share an exchange and routing key
	// into one message of this type (mq.JoinGroup of their bodies), whose id is its first
	// message's id and "+n". Consumers split groups and dedupe by each item's own id.
	GroupType string

	// published, when set (tests), runs after a batch is confirmed by the broker and before the
	// slot is told: where a relay that dies leaves published messages for the next one.
	published func()
}

func (r Relay) withDefaults() *Relay {
	r.BatchSize = cmp.Or(max(r.BatchSize, 0), DefaultBatchSize)
	r.Linger = cmp.Or(max(r.Linger, 0), DefaultLinger)
	r.MaxWait = cmp.Or(max(r.MaxWait, 0), DefaultMaxWait)
	r.PublishTimeout = cmp.Or(max(r.PublishTimeout, 0), DefaultPublishTimeout)
	r.Retry = cmp.Or(max(r.Retry, 0), DefaultRetry)
	r.Parallel = cmp.Or(max(r.Parallel, 0), DefaultParallel)
	r.Name = cmp.Or(r.Name, "walrelay")
	if r.Log == nil {
		r.Log = zap.NewNop()
	}
	if r.Metrics == nil {
		r.Metrics = NewMetrics(r.Slot)
	}
	return &r
}

// errHeld is a slot another relay reads.
var errHeld = errors.New("walrelay: the slot is held by another relay")

// Run relays until ctx is done: it takes the slot (waiting while another relay holds it) and
// publishes; a failure (database or broker down) ends the session, logged once per outage, and
// the relay starts again from the slot's last confirmed position, for as long as it takes.
func (r *Relay) Run(ctx context.Context) {
	r = r.withDefaults()
	failing, waiting := false, false
	held := func() {
		if failing || waiting {
			r.Log.Info("walrelay: relay took the slot", zap.String("slot", r.Slot))
		}
		failing, waiting = false, false
	}
	for ctx.Err() == nil {
		err := r.session(ctx, held)
		r.Metrics.holding.Set(0)
		r.Metrics.oldest.Store(0)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errHeld):
			if !waiting {
				r.Log.Info("walrelay: another relay holds the slot; waiting", zap.String("slot", r.Slot))
			}
			waiting = true
		default:
			if !failing {
				r.Log.Warn("walrelay: relay failing, retrying until it heals", zap.String("slot", r.Slot), zap.Error(err))
			}
			failing = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.Retry):
		}
	}
}

// session holds the slot and relays until ctx ends or something fails.
func (r *Relay) session(ctx context.Context, held func()) error {
	// A relay waiting for the slot asks over its ordinary pool first: a replication connection
	// per try would take one of the server's walsenders (max_wal_senders, which the standbys need
	// too) every second from every waiting replica.
	var active bool
	err := r.DB.GetContext(ctx, &active, `SELECT coalesce((SELECT active FROM pg_replication_slots WHERE slot_name = $1), false)`, r.Slot)
	if err != nil {
		return fmt.Errorf("walrelay: look at slot %s: %w", r.Slot, err)
	}
	if active {
		return errHeld
	}
	dsn, err := replicationURL(r.URL, r.Name)
	if err != nil {
		return err
	}
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("walrelay: replication connection: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	err = pglogrepl.StartReplication(ctx, conn, r.Slot, 0, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication,
		PluginArgs: []string{"proto_version '1'", "publication_names '" + r.Publication + "'",
			"messages 'true'"},
	})
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55006": // object_in_use: another walsender reads it
		return errHeld
	case errors.As(err, &pgErr) && pgErr.Code == "42704": // undefined_object: the slot is gone
		created, cerr := EnsureSlot(ctx, r.DB, r.Slot, r.Publication)
		if cerr != nil {
			return cerr
		}
		if created {
			r.Metrics.recreated.Inc()
			r.Log.Error("walrelay: the slot was missing and is made anew: what was committed while it was missing was not relayed (docs/operations.md, a dropped or invalidated slot)",
				zap.String("slot", r.Slot))
		}
		return fmt.Errorf("walrelay: slot %s was missing: %w", r.Slot, err)
	case errors.As(err, &pgErr) && pgErr.Code == "55000": // object_not_in_prerequisite_state, as for an invalidated slot
		return r.replaceLost(ctx, err)
	case err != nil:
		return fmt.Errorf("walrelay: start replication on %s: %w", r.Slot, err)
	}
	r.Metrics.holding.Set(1)
	held()
	s := &stream{r: r, conn: conn}
	return s.run(ctx)
}

// replaceLost drops the slot if the server invalidated it and makes it anew, so that the messages
// emitted from then on are relayed again; an operator replays the ones in between from the tables
// (docs/operations.md, "A dropped or invalidated slot"). startErr is why the slot could not be
// read; any other cause of it is returned as it is.
func (r *Relay) replaceLost(ctx context.Context, startErr error) error {
	dropped, confirmed, err := DropLost(ctx, r.DB, r.Slot)
	if err != nil {
		return err
	}
	if !dropped {
		return fmt.Errorf("walrelay: start replication on %s: %w", r.Slot, startErr)
	}
	if _, err := EnsureSlot(ctx, r.DB, r.Slot, r.Publication); err != nil {
		return err
	}
	r.Metrics.recreated.Inc()
	r.Log.Error("walrelay: the slot was invalidated past max_slot_wal_keep_size and is made anew: what was committed after its last confirmed position was not relayed (docs/operations.md, a dropped or invalidated slot)",
		zap.String("slot", r.Slot), zap.String("confirmed_lsn", confirmed))
	return fmt.Errorf("walrelay: slot %s was invalidated: %w", r.Slot, startErr)
}

// item is one message as decoded.
type item struct {
	h    header
	body []byte
}

// stream is one session's state: the messages of the transaction being received (open), those of
// whole transactions received but not yet published (pending, up to pendingEnd), and the position
// the server was last told is done with (confirmed).
type stream struct {
	r    *Relay
	conn *pgconn.PgConn

	inTx       bool
	open       []item
	pending    []item
	pendingEnd pglogrepl.LSN
	firstAt    time.Time
	confirmed  pglogrepl.LSN
	quiet      bool
}

func (s *stream) run(ctx context.Context) error {
	r := s.r
	nextStatus := time.Now().Add(statusEvery)
	for {
		if ctx.Err() != nil {
			// What is pending was not confirmed: it waits in the slot for the next holder.
			return ctx.Err()
		}
		now := time.Now()
		if len(s.pending) > 0 && (s.quiet || len(s.pending) >= r.BatchSize || now.Sub(s.firstAt) >= r.MaxWait) {
			if err := s.flush(ctx); err != nil {
				return err
			}
			nextStatus = time.Now().Add(statusEvery)
			continue
		}
		if !now.Before(nextStatus) {
			if err := s.sendStatus(); err != nil {
				return err
			}
			nextStatus = now.Add(statusEvery)
		}
		deadline := nextStatus
		if len(s.pending) > 0 {
			deadline = minTime(deadline, now.Add(r.Linger), s.firstAt.Add(r.MaxWait))
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		raw, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				s.quiet = true
				continue
			}
			return fmt.Errorf("walrelay: receive: %w", err)
		}
		s.quiet = false
		switch m := raw.(type) {
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				k, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return fmt.Errorf("walrelay: keepalive: %w", err)
				}
				// Everything before the server's position was sent before this keepalive: with
				// nothing pending or open, the slot may move up to it (other transactions of the
				// database, which the slot holds back too, are passed over).
				if !s.inTx && len(s.pending) == 0 && k.ServerWALEnd > s.confirmed {
					s.confirmed = k.ServerWALEnd
				}
				if k.ReplyRequested {
					nextStatus = time.Time{}
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return fmt.Errorf("walrelay: xlog data: %w", err)
				}
				if err := s.decode(x.WALData); err != nil {
					return err
				}
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("walrelay: stream: %w", pgconn.ErrorResponseToPgError(m))
		default:
			return fmt.Errorf("walrelay: unexpected message %T on the stream", raw)
		}
	}
}

func minTime(t time.Time, ts ...time.Time) time.Time {
	for _, u := range ts {
		if u.Before(t) {
			t = u
		}
	}
	return t
}

// decode takes one pgoutput message: a transaction's begin, one of its logical messages, or its
// commit, which moves its messages to pending.
func (s *stream) decode(data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return nil // a kind of message the relay does not read (the publication has no tables)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		s.inTx, s.open = true, nil
	case *pglogrepl.LogicalDecodingMessage:
		if m.Prefix != s.r.Prefix {
			return nil
		}
		// The stream's buffer is reused by the next receive.
		h, body, err := parse(append([]byte(nil), m.Content...))
		if err != nil {
			s.r.Metrics.invalid.Inc()
			s.r.Log.Error("walrelay: a message that cannot be published is passed over", zap.String("lsn", m.LSN.String()), zap.Error(err))
			return nil
		}
		s.open = append(s.open, item{h: h, body: body})
	case *pglogrepl.CommitMessage:
		s.inTx = false
		switch {
		case len(s.open) > 0:
			if len(s.pending) == 0 {
				s.firstAt = time.Now()
				s.r.Metrics.oldest.Store(m.CommitTime.UnixNano())
			}
			s.pending = append(s.pending, s.open...)
			s.pendingEnd = m.TransactionEndLSN
			s.open = nil
		case len(s.pending) == 0 && m.TransactionEndLSN > s.confirmed:
			s.confirmed = m.TransactionEndLSN
		}
	}
	return nil
}

// sendStatus tells the server the position up to which everything was published.
func (s *stream) sendStatus() error {
	if s.confirmed == 0 {
		// Nothing known yet: a keepalive of position 0 leaves the slot where it is.
		return pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: 0})
	}
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.confirmed})
	if err != nil {
		return fmt.Errorf("walrelay: status update: %w", err)
	}
	return nil
}

// flush publishes the pending messages (every one confirmed, trying again while the broker is
// away) and then advances the slot past their transactions. A stop (ctx done) lets the publishes
// under way finish and be confirmed to the slot, rather than leave them for the next relay to
// publish again; only a broker that does not confirm is given up on then.
func (s *stream) flush(ctx context.Context) error {
	for _, seg := range s.r.segments(s.pending) {
		if err := s.publishSegment(ctx, seg); err != nil {
			return err
		}
	}
	if s.r.published != nil {
		s.r.published()
	}
	s.r.Metrics.published.Add(float64(len(s.pending)))
	s.confirmed = max(s.confirmed, s.pendingEnd)
	s.pending, s.firstAt = nil, time.Time{}
	s.r.Metrics.oldest.Store(0)
	return s.sendStatus()
}

// publishSegment publishes units until the broker confirmed every one. Between tries the server
// hears from the relay, so that a long broker outage does not cost the slot's connection.
func (s *stream) publishSegment(ctx context.Context, units []unit) error {
	failing := false
	for {
		failed, err := s.r.publishAll(context.WithoutCancel(ctx), units)
		if err == nil {
			if failing {
				s.r.Log.Info("walrelay: publishing again")
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !failing {
			s.r.Log.Warn("walrelay: publish failing; the slot holds the messages until the broker confirms", zap.Error(err))
		}
		failing = true
		if err := s.sendStatus(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.r.Retry):
		}
		units = failed
	}
}

// unit is one message to publish.
type unit struct {
	h    header
	body []byte
}

// segments cuts items (in commit order) into runs in which no Order appears twice, and each run
// into its units: the units of a run may be published side by side, the runs one after the other,
// so that the messages of one Order reach the broker in commit order.
func (r *Relay) segments(items []item) [][]unit {
	var out [][]unit
	seen := map[string]bool{}
	start := 0
	for i, it := range items {
		if it.h.Order != "" && seen[it.h.Order] {
			out = append(out, r.units(items[start:i]))
			clear(seen)
			start = i
		}
		if it.h.Order != "" {
			seen[it.h.Order] = true
		}
	}
	return append(out, r.units(items[start:]))
}

// units are the messages of items: one each, or with GroupType one per exchange and routing key
// (in the order of their first item).
func (r *Relay) units(items []item) []unit {
	if r.GroupType == "" {
		out := make([]unit, len(items))
		for i, it := range items {
			out[i] = unit(it)
		}
		return out
	}
	var out []unit
	bodies := map[int][][]byte{}
	at := map[[2]string]int{}
	for _, it := range items {
		k := [2]string{it.h.Exchange, it.h.Key}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			h := it.h
			h.Type = r.GroupType
			out = append(out, unit{h: h})
		}
		bodies[i] = append(bodies[i], it.body)
	}
	for i := range out {
		out[i].body = mq.JoinGroup(bodies[i])
		out[i].h.ID += "+" + strconv.Itoa(len(bodies[i]))
	}
	return out
}

// publishAll publishes units, Parallel at a time, and returns those the broker did not confirm
// with the first failure.
func (r *Relay) publishAll(ctx context.Context, units []unit) ([]unit, error) {
	var (
		mu     sync.Mutex
		first  error
		failed []unit
		wg     sync.WaitGroup
	)
	sem := make(chan struct{}, r.Parallel)
	for _, u := range units {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := r.publish(ctx, u); err != nil {
				mu.Lock()
				defer mu.Unlock()
				first = cmp.Or(first, err)
				failed = append(failed, u)
			}
		})
	}
	wg.Wait()
	return failed, first
}

func (r *Relay) publish(ctx context.Context, u unit) error {
	if u.h.RequestID != nil {
		ctx = requestid.With(ctx, *u.h.RequestID)
	}
	pctx, cancel := context.WithTimeout(ctx, r.PublishTimeout)
	defer cancel()
	msg := mq.Message{ID: u.h.ID, Type: u.h.Type, Body: u.body}
	if err := r.Publisher.Publish(pctx, u.h.Exchange, u.h.Key, msg); err != nil {
		return fmt.Errorf("walrelay: publish %s %s: %w", u.h.Key, u.h.ID, err)
	}
	return nil
}
