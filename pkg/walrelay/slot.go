package walrelay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"strings"

	"ccplatform/pkg/mq"

	"github.com/jackc/pglogrepl"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Plugin is the output plugin of the slots: PostgreSQL's own, which passes logical decoding
// messages on with its `messages` option.
const Plugin = "pgoutput"

var unsafeName = regexp.MustCompile(`[^a-z0-9_]+`)

// SlotName is the slot of prefix in the database named database. Slot names are cluster-wide
// while a slot reads one database, so the name carries the database's; a name past PostgreSQL's
// 63 bytes keeps its start and a hash of the whole.
func SlotName(prefix, database string) string {
	name := unsafeName.ReplaceAllString(strings.ToLower(prefix+"_"+database), "_")
	if len(name) <= 63 {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%s_%08x", name[:63-9], h.Sum32())
}

// DatabaseOf is the database name of a connection URL (or key=value string).
func DatabaseOf(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		for _, kv := range strings.Fields(raw) {
			if v, ok := strings.CutPrefix(kv, "dbname="); ok {
				return v, nil
			}
		}
		return "", errors.New("walrelay: the database url names no dbname")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("walrelay: database url: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return "", errors.New("walrelay: the database url names no database")
	}
	return name, nil
}

// EnsureSlot creates the publication and the logical slot if they do not exist and says whether
// it made the slot. A slot only keeps the messages emitted after its creation, so every process
// that emits calls this before it writes (safe from any number at once: the loser of a race finds
// them made). The publication comes first: pgoutput looks it up in the catalog as it was at each
// decoded position, and a slot older than its publication cannot be read.
func EnsureSlot(ctx context.Context, conn *sqlx.DB, slot, publication string) (created bool, err error) {
	var pubExists bool
	if err := conn.GetContext(ctx, &pubExists, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, publication); err != nil {
		return false, fmt.Errorf("walrelay: look for publication %s: %w", publication, err)
	}
	if !pubExists {
		// No table: pgoutput passes the logical messages on (its `messages` option), no row change.
		_, err := conn.ExecContext(ctx, `CREATE PUBLICATION `+pq.QuoteIdentifier(publication))
		if err != nil && !isDuplicate(err) {
			return false, fmt.Errorf("walrelay: create publication %s: %w", publication, err)
		}
	}
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, slot); err != nil {
		return false, fmt.Errorf("walrelay: look for slot %s: %w", slot, err)
	}
	if exists {
		return false, nil
	}
	_, err = conn.ExecContext(ctx, `SELECT pg_create_logical_replication_slot($1, $2)`, slot, Plugin)
	if isDuplicate(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("walrelay: create slot %s: %w", slot, err)
	}
	return true, nil
}

// DropLost drops slot if the server invalidated it (`wal_status` lost: it fell more than
// max_slot_wal_keep_size behind and the WAL it needed is gone) and nobody reads it. It says whether
// it dropped the slot, and up to where the slot's messages had been confirmed: what was committed
// after that was never relayed. An invalidated slot can never be read again, and until it is made
// anew every message emitted is lost with it; the condition and the drop are one statement, so a
// slot another relay made anew meanwhile is never dropped.
func DropLost(ctx context.Context, conn *sqlx.DB, slot string) (dropped bool, confirmed string, err error) {
	var rows []struct {
		Confirmed string `db:"confirmed"`
		Dropped   string `db:"dropped"`
	}
	err = conn.SelectContext(ctx, &rows, `SELECT coalesce(confirmed_flush_lsn::text, '') AS confirmed,
       pg_drop_replication_slot(slot_name)::text AS dropped
  FROM pg_replication_slots WHERE slot_name = $1 AND wal_status = 'lost' AND NOT active`, slot)
	if err != nil {
		return false, "", fmt.Errorf("walrelay: drop invalidated slot %s: %w", slot, err)
	}
	if len(rows) == 0 {
		return false, "", nil
	}
	return true, rows[0].Confirmed, nil
}

// isDuplicate is the error of an object made meanwhile by another process: duplicate_object, or
// unique_violation on the catalog when both created it at once.
func isDuplicate(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && (pqErr.Code == "42710" || pqErr.Code == "23505")
}

// DropSlot drops the slot if it exists, waiting for a relay that holds it to let go (test
// cleanup, and a database dropped with its slots).
func DropSlot(ctx context.Context, conn *sqlx.DB, slot string) error {
	_, err := conn.ExecContext(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot)
	if err != nil {
		return fmt.Errorf("walrelay: drop slot %s: %w", slot, err)
	}
	return nil
}

// replicationURL is raw for a replication connection of the pgx driver: replication=database and
// the application name, without the settings only lib/pq knows.
func replicationURL(raw, appName string) (string, error) {
	if !strings.Contains(raw, "://") {
		var kept []string
		for _, kv := range strings.Fields(raw) {
			if !strings.HasPrefix(kv, "binary_parameters=") && !strings.HasPrefix(kv, "search_path=") {
				kept = append(kept, kv)
			}
		}
		return strings.Join(append(kept, "replication=database", "application_name="+appName), " "), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("walrelay: database url: %w", err)
	}
	q := u.Query()
	q.Del("binary_parameters")
	q.Del("search_path")
	q.Set("replication", "database")
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Peek returns the messages under prefix that slot holds (committed, not yet confirmed by a
// relay), oldest first, without consuming them: for inspecting a stalled slot, and for tests. It
// fails while a relay holds the slot.
func Peek(ctx context.Context, conn *sqlx.DB, slot, publication, prefix string) ([]Message, error) {
	var rows [][]byte
	err := conn.SelectContext(ctx, &rows, `SELECT data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL,
		'proto_version', '1', 'publication_names', $2, 'messages', 'true')`, slot, publication)
	if err != nil {
		return nil, fmt.Errorf("walrelay: peek %s: %w", slot, err)
	}
	var out []Message
	for _, data := range rows {
		msg, err := pglogrepl.Parse(data)
		if err != nil {
			continue
		}
		m, ok := msg.(*pglogrepl.LogicalDecodingMessage)
		if !ok || m.Prefix != prefix {
			continue
		}
		h, body, err := parse(m.Content)
		if err != nil {
			return nil, err
		}
		out = append(out, Message{Exchange: h.Exchange, Key: h.Key, Order: h.Order,
			Msg: mq.Message{ID: h.ID, Type: h.Type, Body: body}})
	}
	return out, nil
}
