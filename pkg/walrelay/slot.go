package walrelay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"strings"

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

// EnsureSlot creates the logical slot if it does not exist and says whether it did. A slot only
// keeps the messages emitted after its creation, so every process that emits calls this before
// it writes (safe from any number at once: the loser of a race finds the slot made).
func EnsureSlot(ctx context.Context, conn *sqlx.DB, slot string) (created bool, err error) {
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, slot); err != nil {
		return false, fmt.Errorf("walrelay: look for slot %s: %w", slot, err)
	}
	if exists {
		return false, nil
	}
	_, err = conn.ExecContext(ctx, `SELECT pg_create_logical_replication_slot($1, $2)`, slot, Plugin)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "42710" { // duplicate_object: made meanwhile
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("walrelay: create slot %s: %w", slot, err)
	}
	return true, nil
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
