package mq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// The behaviour every consumer of the platform gets from Pipeline, run once here against the real
// broker and the real database; a consumer's own tests are about its domain only.

// thing is the item of the suite's pipelines: a row of table things. n < 0 is refused by the
// table's CHECK; bad items make Check say Invalid.
type thing struct {
	ID   string `json:"id"`
	N    int    `json:"n"`
	Bad  bool   `json:"bad,omitempty"`
	Seen string `json:"-"` // set by Write after its commit
}

func openThings(t *testing.T) *sqlx.DB {
	t.Helper()
	u, drop, err := dbtest.Create("mq_pipeline")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })
	conn, err := db.Open(context.Background(), u, "things", 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = conn.Exec(`CREATE SCHEMA IF NOT EXISTS things; CREATE TABLE things.things (id text PRIMARY KEY, n int NOT NULL CHECK (n >= 0))`)
	require.NoError(t, err)
	return conn
}

// writeThings inserts items in one transaction; a row already there is left as it is.
func writeThings(conn *sqlx.DB) func(ctx context.Context, items []thing) error {
	return func(ctx context.Context, items []thing) error {
		err := db.InTx(ctx, conn, func(tx *sqlx.Tx) error {
			for _, it := range items {
				if _, err := tx.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ($1, $2) ON CONFLICT DO NOTHING`, it.ID, it.N); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			for i := range items {
				items[i].Seen = "written"
			}
		}
		return err
	}
}

func decodeThing(d Delivery) ([]thing, error) {
	var it thing
	if err := json.Unmarshal(d.Body, &it); err != nil {
		return nil, fmt.Errorf("undecodable thing: %w", err)
	}
	return []thing{it}, nil
}

// decodeThings reads a group of things; items that are not things are refused alone.
func decodeThings(d Delivery) ([]thing, error) {
	raws, err := SplitGroup(d.Body)
	if err != nil {
		return nil, err
	}
	var out []thing
	var bad [][]byte
	for _, r := range raws {
		var it thing
		if json.Unmarshal(r, &it) != nil || it.ID == "" {
			bad = append(bad, r)
			continue
		}
		out = append(out, it)
	}
	if len(bad) > 0 {
		return out, &PartlyInvalid{Items: bad, Reason: fmt.Sprintf("%d items are not things", len(bad))}
	}
	return out, nil
}

func checkThings(_ context.Context, items []thing) []error {
	errs := make([]error, len(items))
	for i, it := range items {
		if it.Bad {
			errs[i] = Invalid("thing %s is bad", it.ID)
		}
	}
	return errs
}

type suite struct {
	t    *testing.T
	q    string
	conn *Conn
	pub  *Publisher
	db   *sqlx.DB
}

func newSuite(t *testing.T) *suite {
	q := "t.pipe." + t.Name()
	c := dial(t, WorkQueue(q))
	p := NewPublisher(c)
	t.Cleanup(p.Close)
	return &suite{t: t, q: q, conn: c, pub: p, db: openThings(t)}
}

func (s *suite) send(id string, body any) {
	s.t.Helper()
	b, ok := body.([]byte)
	if !ok {
		var err error
		b, err = json.Marshal(body)
		require.NoError(s.t, err)
	}
	require.NoError(s.t, s.pub.Publish(context.Background(), "", s.q, Message{ID: id, Type: "thing", Body: b}))
}

// run consumes with p (and cfg's MaxAttempts, OnDeadLetter) until the test ends.
func (s *suite) run(p *Pipeline[thing], cfg ConsumerConfig) {
	cfg.Queue, cfg.Tag = s.q, "pipe"
	if cfg.BatchWait == 0 {
		cfg.BatchWait = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.conn.Consume(ctx, cfg, p.Handle)
	}()
	s.t.Cleanup(func() { cancel(); <-done })
}

// deadLetters waits for n dead-lettered copies and returns them by message id.
func (s *suite) deadLetters(n int) map[string]Delivery {
	s.t.Helper()
	ch, err := s.conn.Channel(context.Background())
	require.NoError(s.t, err)
	defer ch.Close()
	got := map[string]Delivery{}
	require.Eventually(s.t, func() bool {
		d, ok, err := ch.Get(s.q+DeadLetterSuffix, true)
		require.NoError(s.t, err)
		if ok {
			got[d.MessageId] = d
		}
		return len(got) >= n
	}, 20*time.Second, 20*time.Millisecond)
	return got
}

// rows waits until the table holds want rows (and reports what it holds).
func (s *suite) rows(want int) map[string]int {
	s.t.Helper()
	out := map[string]int{}
	require.Eventually(s.t, func() bool {
		var rs []struct {
			ID string `db:"id"`
			N  int    `db:"n"`
		}
		require.NoError(s.t, s.db.Select(&rs, `SELECT id, n FROM things`))
		out = map[string]int{}
		for _, r := range rs {
			out[r.ID] = r.N
		}
		return len(out) >= want
	}, 20*time.Second, 20*time.Millisecond)
	return out
}

// drained waits until the queue holds nothing, ready or unacked.
func (s *suite) drained() {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		_, n, err := s.conn.QueueConsumers(context.Background(), s.q)
		return err == nil && n == 0
	}, 20*time.Second, 50*time.Millisecond)
}

func reason(d Delivery) string {
	r, _ := d.Headers["x-dead-letter-reason"].(string)
	return r
}

func TestPipelineDeadLettersWhatCanNeverSucceedAndWritesTheRest(t *testing.T) {
	s := newSuite(t)
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThing, Check: checkThings, Write: writeThings(s.db)}, ConsumerConfig{BatchSize: 10})
	s.send("undecodable", []byte("{not json"))
	s.send("bad", thing{ID: "b", N: 1, Bad: true})
	s.send("refused", thing{ID: "r", N: -1}) // the table's CHECK refuses it, in a batch with others
	for i := range 5 {
		s.send(fmt.Sprint("ok-", i), thing{ID: fmt.Sprint("ok-", i), N: i})
	}
	dead := s.deadLetters(3)
	assert.Contains(t, reason(dead["undecodable"]), "undecodable thing")
	assert.Equal(t, "thing b is bad", reason(dead["bad"]))
	assert.Contains(t, reason(dead["refused"]), "refused by the database")
	assert.Contains(t, reason(dead["refused"]), "things_n_check")
	got := s.rows(5)
	assert.Equal(t, map[string]int{"ok-0": 0, "ok-1": 1, "ok-2": 2, "ok-3": 3, "ok-4": 4}, got)
	s.drained()
}

func TestPipelineRetriesATransientFaultWithoutCountingAttempts(t *testing.T) {
	s := newSuite(t)
	var tries atomic.Int32
	write := writeThings(s.db)
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThing,
		Write: func(ctx context.Context, items []thing) error {
			// The database "down" for more tries than MaxAttempts: a transient fault never
			// dead-letters.
			if tries.Add(1) <= 4 {
				return errors.New("connection refused")
			}
			return write(ctx, items)
		}}, ConsumerConfig{MaxAttempts: 2})
	s.send("a", thing{ID: "a", N: 1})
	assert.Equal(t, map[string]int{"a": 1}, s.rows(1))
	s.drained()
	assert.EqualValues(t, 5, tries.Load())
	ch, err := s.conn.Channel(context.Background())
	require.NoError(t, err)
	defer ch.Close()
	_, ok, err := ch.Get(s.q+DeadLetterSuffix, true)
	require.NoError(t, err)
	assert.False(t, ok, "nothing dead-lettered")
}

func TestPipelineBoundsAnErrorThatIsNotTransientButRepeats(t *testing.T) {
	s := newSuite(t)
	var checks atomic.Int32
	var recorded sync.Map
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThing, Write: writeThings(s.db),
		Check: func(_ context.Context, items []thing) []error {
			checks.Add(1)
			errs := make([]error, len(items))
			for i, it := range items {
				if it.ID == "x" {
					// A catalog the database refuses (a schema it lacks): no item can pass
					// until someone fixes it.
					errs[i] = &pq.Error{Code: "42P01", Message: `relation "catalog" does not exist`}
				} else {
					// An error db.Transient would retry for ever, said to be bounded.
					errs[i] = Bounded(errors.New("rules of order 7 unreadable"))
				}
			}
			return errs
		}}, ConsumerConfig{MaxAttempts: 3, OnDeadLetter: func(_ context.Context, d Delivery, body []byte, why string) error {
		recorded.Store(d.MessageId, why+"|"+string(body))
		return nil
	}})
	s.send("x", thing{ID: "x", N: 1})
	s.send("y", thing{ID: "y", N: 1})
	dead := s.deadLetters(2)
	assert.Contains(t, reason(dead["y"]), "failed 3 times: rules of order 7 unreadable")
	assert.Contains(t, reason(dead["x"]), "failed 3 times")
	assert.Contains(t, reason(dead["x"]), `relation "catalog" does not exist`)
	v, ok := recorded.Load("x")
	require.True(t, ok, "OnDeadLetter saw it")
	assert.Contains(t, v.(string), `|{"id":"x","n":1}`)
	assert.GreaterOrEqual(t, checks.Load(), int32(3))
	_, ok = recorded.Load("y")
	assert.True(t, ok)
	var n int
	require.NoError(t, s.db.Get(&n, `SELECT count(*) FROM things`))
	assert.Zero(t, n)
}

func TestPipelineKeepsOnlyTheRefusedItemsOfAGroup(t *testing.T) {
	s := newSuite(t)
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThings, Check: checkThings, Write: writeThings(s.db),
		Raw: func(it thing) ([]byte, error) { return json.Marshal(it) }}, ConsumerConfig{})
	group := JoinGroup([][]byte{
		[]byte(`{"id":"g1","n":1}`), []byte(`"not a thing"`), []byte(`{"id":"g2","n":-5}`),
		[]byte(`{"id":"g3","n":3,"bad":true}`), []byte(`{"id":"g4","n":4}`),
	})
	s.send("group", group)
	dead := s.deadLetters(1)
	d := dead["group"]
	items, err := SplitGroup(d.Body)
	require.NoError(t, err)
	var kept []string
	for _, it := range items {
		kept = append(kept, string(it))
	}
	assert.ElementsMatch(t, []string{`"not a thing"`, `{"id":"g2","n":-5}`, `{"id":"g3","n":3,"bad":true}`}, kept)
	assert.Contains(t, reason(d), "1 items are not things")
	assert.Contains(t, reason(d), "refused by the database")
	assert.Contains(t, reason(d), "thing g3 is bad")
	assert.Equal(t, map[string]int{"g1": 1, "g4": 4}, s.rows(2))
}

func TestPipelineRetriesWhatFailsAfterTheCommitAndWritesOnce(t *testing.T) {
	s := newSuite(t)
	var afters atomic.Int32
	var seen sync.Map
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThing, Write: writeThings(s.db),
		After: func(_ context.Context, items []thing) []error {
			errs := make([]error, len(items))
			for i, it := range items {
				seen.Store(it.ID, it.Seen)
				// The announcement of "b" is not confirmed the first time.
				if it.ID == "b" && afters.Add(1) == 1 {
					errs[i] = errors.New("not confirmed")
				}
			}
			return errs
		}}, ConsumerConfig{BatchSize: 10})
	s.send("a", thing{ID: "a", N: 1})
	s.send("b", thing{ID: "b", N: 2})
	assert.Equal(t, map[string]int{"a": 1, "b": 2}, s.rows(2))
	require.Eventually(t, func() bool { return afters.Load() == 2 }, 20*time.Second, 20*time.Millisecond, "b announced again after its retry")
	s.drained()
	v, _ := seen.Load("a")
	assert.Equal(t, "written", v, "After sees what Write set on the items")
	var n int
	require.NoError(t, s.db.Get(&n, `SELECT count(*) FROM things`))
	assert.Equal(t, 2, n)
}

func TestPipelineWritesAnItemDeliveredTwiceInABatchOnce(t *testing.T) {
	s := newSuite(t)
	var written sync.Map
	write := writeThings(s.db)
	var mu sync.Mutex
	var sizes []int
	s.run(&Pipeline[thing]{Name: "things", Log: zaptest.NewLogger(t), Decode: decodeThing, MaxWrite: 2,
		Key: func(it thing) string { return it.ID },
		Write: func(ctx context.Context, items []thing) error {
			mu.Lock()
			sizes = append(sizes, len(items))
			mu.Unlock()
			for _, it := range items {
				if _, dup := written.LoadOrStore(it.ID, true); dup {
					return fmt.Errorf("%s written twice", it.ID)
				}
			}
			return write(ctx, items)
		}}, ConsumerConfig{BatchSize: 10, BatchWait: 300 * time.Millisecond})
	for _, id := range []string{"a", "b", "a", "c", "b"} {
		s.send(id, thing{ID: id, N: 1})
	}
	assert.Len(t, s.rows(3), 3)
	s.drained()
	mu.Lock()
	defer mu.Unlock()
	for _, n := range sizes {
		assert.LessOrEqual(t, n, 2, "MaxWrite bounds a transaction")
	}
}
