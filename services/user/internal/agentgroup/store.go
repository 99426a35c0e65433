package agentgroup

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/services/user/internal/idcheck"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes agent groups in the users schema.
type Store struct {
	db *sqlx.DB
}

// NewStore is a store over a connection whose search_path is the users schema.
func NewStore(conn *sqlx.DB) *Store { return &Store{db: conn} }

// row is one group with its agents aggregated in their stored order.
type row struct {
	ID        int64         `db:"id"`
	NameRU    string        `db:"name_ru"`
	NameGB    string        `db:"name_gb"`
	AgentIDs  pq.Int64Array `db:"agent_ids"`
	CreatedAt time.Time     `db:"created_at"`
	UpdatedAt time.Time     `db:"updated_at"`
}

func (r row) group() Group {
	return Group{
		ID: r.ID, Names: Names{RU: r.NameRU, GB: r.NameGB}, AgentIDs: []int64(r.AgentIDs),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// selectGroups reads groups with their agents; callers add WHERE, ORDER and paging.
const selectGroups = `SELECT g.id, g.name_ru, g.name_gb, g.created_at, g.updated_at,
		COALESCE((SELECT array_agg(m.user_id ORDER BY m.position) FROM agent_group_members m
			WHERE m.group_id = g.id), '{}') AS agent_ids
	FROM agent_groups g`

// agentFilter is the WHERE of the agentId filter; $1 is the agent id or NULL.
const agentFilter = ` WHERE ($1::bigint IS NULL OR EXISTS (
		SELECT 1 FROM agent_group_members f WHERE f.group_id = g.id AND f.user_id = $1))`

// Get reads one group; an unknown id is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (Group, error) {
	const q = selectGroups + ` WHERE g.id = $1`
	var r row
	if err := db.OneRow(s.db.GetContext(ctx, &r, q, id), notFound(id), "get agent group %d", id); err != nil {
		return Group{}, err
	}
	return r.group(), nil
}

// List reads the groups that match f, ordered by id.
func (s *Store) List(ctx context.Context, f Filter) ([]Group, error) {
	const q = selectGroups + agentFilter + ` ORDER BY g.id OFFSET $2 LIMIT NULLIF($3::int, 0)`
	var rows []row
	if err := s.db.SelectContext(ctx, &rows, q, f.AgentID, f.Offset, f.Limit); err != nil {
		return nil, fmt.Errorf("list agent groups: %w", err)
	}
	groups := make([]Group, len(rows))
	for i, r := range rows {
		groups[i] = r.group()
	}
	return groups, nil
}

// Count is how many groups match f's filter (Offset and Limit ignored), for a list's total.
func (s *Store) Count(ctx context.Context, f Filter) (int, error) {
	const q = `SELECT count(*) FROM agent_groups g` + agentFilter
	var n int
	if err := s.db.GetContext(ctx, &n, q, f.AgentID); err != nil {
		return 0, fmt.Errorf("count agent groups: %w", err)
	}
	return n, nil
}

// Create inserts a group with its agents; ch must come from CheckCreate and its agents must have
// been checked to be users.
func (s *Store) Create(ctx context.Context, ch Changes) (int64, error) {
	const q = `INSERT INTO agent_groups (name_ru, name_gb, created_by, updated_by) VALUES ($1, $2, $3, $3) RETURNING id`
	if ch.NameRU == nil || ch.NameGB == nil || ch.AgentIDs == nil {
		return 0, errors.New("create agent group: names and agents are required")
	}
	var id int64
	err := db.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := tx.QueryRowxContext(ctx, q, *ch.NameRU, *ch.NameGB, ch.By).Scan(&id); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		return setAgents(ctx, tx, id, *ch.AgentIDs)
	})
	if err != nil {
		return 0, fmt.Errorf("create agent group: %w", err)
	}
	return id, nil
}

// Update applies ch to a group: a nil name keeps its value, non-nil agents replace the set. The
// UPDATE locks the group's row, so concurrent updates of one group apply one after the other and
// a name changed by one is not undone by the other.
func (s *Store) Update(ctx context.Context, id int64, ch Changes) error {
	const q = `UPDATE agent_groups SET
			name_ru = COALESCE($2, name_ru),
			name_gb = COALESCE($3, name_gb),
			updated_at = CASE WHEN $4 THEN now() ELSE updated_at END,
			updated_by = CASE WHEN $4 THEN $5 ELSE updated_by END
		WHERE id = $1`
	return db.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, q, id, ch.NameRU, ch.NameGB, !ch.Empty(), ch.By)
		if err != nil {
			return fmt.Errorf("update agent group %d: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("update agent group %d: %w", id, err)
		}
		if n == 0 {
			return notFound(id)
		}
		if ch.AgentIDs == nil {
			return nil
		}
		if err := setAgents(ctx, tx, id, *ch.AgentIDs); err != nil {
			return fmt.Errorf("update agent group %d: %w", id, err)
		}
		return nil
	})
}

// setAgents replaces the group's agents with ids, keeping their order.
func setAgents(ctx context.Context, tx *sqlx.Tx, groupID int64, ids []int64) error {
	const del = `DELETE FROM agent_group_members WHERE group_id = $1`
	const ins = `INSERT INTO agent_group_members (group_id, user_id, position)
		SELECT $1, x.id, x.n FROM unnest($2::bigint[]) WITH ORDINALITY AS x(id, n)`
	if _, err := tx.ExecContext(ctx, del, groupID); err != nil {
		return fmt.Errorf("clear agents: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, ins, groupID, pq.Array(ids)); err != nil {
		if isForeignKeyViolation(err) {
			// Checked before the write; only a user removed in between gets here.
			return apperr.Field("agentIds", "contains an id that is not a user")
		}
		return fmt.Errorf("bind agents: %w", err)
	}
	return nil
}

func isForeignKeyViolation(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "23503"
}

// Missing returns the ids that name no group, each once, in the order they were asked for. Other
// services use it to check references (an order's agent groups) without reading this schema.
func (s *Store) Missing(ctx context.Context, ids []int64) ([]int64, error) {
	missing, err := idcheck.Missing(ctx, s.db, "agent_groups", ids)
	if err != nil {
		return nil, fmt.Errorf("check agent group ids: %w", err)
	}
	return missing, nil
}

// Ensure makes a group with exactly these names exist with exactly these agents: the oldest group
// with both names is updated, or a new one is made. Loading fixed data (demo groups) with it can be
// repeated any number of times, also by two processes at once (they are serialized by a lock on
// the names), without making a second group.
func (s *Store) Ensure(ctx context.Context, names Names, agentIDs []int64) (int64, error) {
	const lock = `SELECT pg_advisory_xact_lock($1)`
	const find = `SELECT id FROM agent_groups WHERE name_ru = $1 AND name_gb = $2 ORDER BY id LIMIT 1`
	const insert = `INSERT INTO agent_groups (name_ru, name_gb) VALUES ($1, $2) RETURNING id`
	const touch = `UPDATE agent_groups SET updated_at = now() WHERE id = $1`
	var id int64
	err := db.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, lock, namesLock(names)); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		err := tx.GetContext(ctx, &id, find, names.RU, names.GB)
		switch {
		case db.IsNoRows(err):
			if err := tx.QueryRowxContext(ctx, insert, names.RU, names.GB).Scan(&id); err != nil {
				return fmt.Errorf("insert: %w", err)
			}
		case err != nil:
			return fmt.Errorf("find: %w", err)
		default:
			if _, err := tx.ExecContext(ctx, touch, id); err != nil {
				return fmt.Errorf("touch: %w", err)
			}
		}
		return setAgents(ctx, tx, id, idcheck.Unique(agentIDs))
	})
	if err != nil {
		return 0, fmt.Errorf("ensure agent group %q: %w", names.GB, err)
	}
	return id, nil
}

func namesLock(n Names) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("ccplatform.agentgroup." + n.RU + "\x00" + n.GB))
	return int64(h.Sum64())
}
