package lead

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/event"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/walrelay"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store reads and writes leads.
type Store struct {
	conn *sqlx.DB
	// create is Create's statement, prepared once: a sync create is the hottest statement of the
	// service, and unprepared PostgreSQL parses, analyses and plans its CTE, insert and
	// sub-selects on every call, about a third of its CPU per create.
	create *db.Prepared
}

// NewStore is a store on the service's schema.
func NewStore(conn *sqlx.DB) *Store {
	return &Store{conn: conn, create: db.NewPrepared(createLead)}
}

const columns = `id, order_id, order_code, phone, name, source_comment, ip, external_id_crm_a, external_id_crm_b,
external_id_crm_c, external_id_crm_d, status_id, lead_type, create_method, source, ad_campaign_id, is_secondary,
previous_lead_id, next_lead_id, planning_call_at, priority, utc_offset, social_network_id, social_login,
messenger_user_name, messenger_phone, messenger_id, custom_values, job_id, created_by, created_at, updated_at`

// doNotCall is the read-only do_not_call column of a lead: an active entry of the do-not-call list
// for its phone, in its order or in every order (internal/dnc; the dnc_entries_key index).
const doNotCall = `EXISTS (SELECT 1 FROM dnc_entries d WHERE d.phone = leads.phone
    AND coalesce(d.order_id, leads.order_id) = leads.order_id AND (d.expires_at IS NULL OR d.expires_at > now())) AS do_not_call`

// insertColumns are the columns an insert writes; created_at and updated_at take the default.
var insertColumns = strings.Split(strings.NewReplacer("\n", "", " ", "").Replace(
	strings.TrimSuffix(columns, ", created_at, updated_at")), ",")

// MaxInsertBatch is the most leads InsertBatch takes: PostgreSQL binds at most 65535 parameters
// in one statement.
var MaxInsertBatch = 65535 / len(insertColumns)

func insertArgs(l Lead) []any {
	return []any{l.ID, l.OrderID, l.OrderCode, l.Phone, l.Name, l.SourceComment, l.IP, l.ExternalIDCrmA,
		l.ExternalIDCrmB, l.ExternalIDCrmC, l.ExternalIDCrmD, l.StatusID, l.LeadType, l.CreateMethod, l.Source,
		l.AdCampaignID, l.IsSecondary, l.PreviousLeadID, l.NextLeadID, l.PlanningCallAt, l.Priority, l.UTCOffset,
		l.SocialNetworkID, l.SocialLogin, l.MessengerUserName, l.MessengerPhone, l.MessengerID, l.CustomValues,
		l.JobID, l.CreatedBy}
}

// createLead is Create's one statement: claim_lead_id (migration 00011) takes the key's lock, draws
// the id and links the previous lead, the insert stores the lead with its links, and its
// lead.created goes into the WAL (pg_logical_emit_message, pkg/walrelay's payload), all in one
// statement (one round trip, one implicit transaction) where BEGIN, the insert, the event and
// COMMIT would be four. The event is the one eventOf makes, prepared by the caller ($29 the
// envelope, $30 the lead's API form), completed here with what the database decided: the id, the
// link, the times and doNotCall, written as the detail route writes them (RFC 3339 in UTC, whole
// seconds). The final select reads e so that the emission runs.
var createLead = `
WITH c AS MATERIALIZED (SELECT new_id, previous_id FROM claim_lead_id($1, $2, $3, NULL)),
l AS (
INSERT INTO leads (id, is_secondary, previous_lead_id, order_id, phone, order_code, name, source_comment, ip,
    external_id_crm_a, external_id_crm_b, external_id_crm_c, external_id_crm_d, status_id, lead_type,
    create_method, source, ad_campaign_id, planning_call_at, priority, utc_offset, social_network_id,
    social_login, messenger_user_name, messenger_phone, messenger_id, custom_values, job_id, created_by)
VALUES ((SELECT new_id FROM c), (SELECT previous_id IS NOT NULL FROM c), (SELECT previous_id FROM c),
    $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
    $25, $26, $27)
RETURNING id, is_secondary, previous_lead_id, created_at, updated_at, ` + doNotCall + `),
e AS (
SELECT pg_logical_emit_message(true, $34::text, convert_to(` +
	walrelay.HeaderSQL("$28::text", "$31::text", "$32::text", "$31::text", "$33::text", "l.id::text") + ` || ($29::jsonb || jsonb_build_object(
    'occurredAt', to_char(l.updated_at AT TIME ZONE 'UTC', ` + apiTimeFormat + `),
    'data', $30::jsonb || jsonb_build_object('id', l.id, 'isSecondary', l.is_secondary,
        'createdAt', to_char(l.created_at AT TIME ZONE 'UTC', ` + apiTimeFormat + `), 'updatedAt', to_char(l.updated_at AT TIME ZONE 'UTC', ` + apiTimeFormat + `),
        'doNotCall', l.do_not_call)))::text, 'UTF8')) AS lsn
FROM l)
SELECT id, is_secondary, previous_lead_id, created_at, updated_at, do_not_call FROM l, e`

// apiTimeFormat is to_char's pattern of an instant in UTC as the API writes it (TimeLayout).
const apiTimeFormat = `'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'`

// Create stores one lead and its lead.created event in one statement and returns the lead with
// its id and links, under the same per-key lock and with the same links as InsertBatch.
func (s *Store) Create(ctx context.Context, l Lead) (Lead, error) {
	st, err := s.create.Get(ctx, s.conn)
	if err != nil {
		return Lead{}, fmt.Errorf("prepare lead insert: %w", err)
	}
	id, head, data, err := createdTemplate(l)
	if err != nil {
		return Lead{}, err
	}
	var reqID *string
	if id := requestid.From(ctx); id != "" {
		reqID = &id
	}
	row := st.QueryRowContext(ctx, KeyOf(l).LockID(), l.OrderID, l.Phone, l.OrderCode, l.Name,
		l.SourceComment, l.IP, l.ExternalIDCrmA, l.ExternalIDCrmB, l.ExternalIDCrmC, l.ExternalIDCrmD, l.StatusID,
		l.LeadType, l.CreateMethod, l.Source, l.AdCampaignID, l.PlanningCallAt, l.Priority, l.UTCOffset,
		l.SocialNetworkID, l.SocialLogin, l.MessengerUserName, l.MessengerPhone, l.MessengerID, l.CustomValues,
		l.JobID, l.CreatedBy, event.Exchange, string(head), string(data), EventCreated, id, reqID, EventsPrefix)
	if err := row.Scan(&l.ID, &l.IsSecondary, &l.PreviousLeadID, &l.CreatedAt, &l.UpdatedAt, &l.DoNotCall); err != nil {
		return Lead{}, fmt.Errorf("insert lead: %w", err)
	}
	l.NextLeadID = nil
	return l, nil
}

// InsertBatch stores leads (in the given order) and their lead.created events inside tx and returns
// them as stored, with their ids and the secondary-lead links, which claim_lead_ids decides by the
// rule of Create's claim_lead_id.
func InsertBatch(ctx context.Context, tx *sqlx.Tx, leads []Lead) ([]Lead, error) {
	if len(leads) == 0 {
		return nil, nil
	}
	if len(leads) > MaxInsertBatch {
		return nil, fmt.Errorf("insert %d leads at once: at most %d fit in one statement", len(leads), MaxInsertBatch)
	}
	out := append([]Lead(nil), leads...)
	if err := claimIDs(ctx, tx, out); err != nil {
		return nil, err
	}

	var q strings.Builder
	q.WriteString("INSERT INTO leads (" + strings.Join(insertColumns, ", ") + ") VALUES ")
	args := make([]any, 0, len(out)*len(insertColumns))
	for i, l := range out {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for j := range insertColumns {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString("$" + strconv.Itoa(len(args)+j+1))
		}
		q.WriteByte(')')
		args = append(args, insertArgs(l)...)
	}
	q.WriteString(" RETURNING id, created_at, updated_at, " + doNotCall)
	if err := insertReturning(ctx, tx, q.String(), args, out); err != nil {
		return nil, err
	}
	return out, recordCreated(ctx, tx, out)
}

// claimIDs sets the id and the links of each of leads, in their order, from claim_lead_ids
// (migration 00011), which also points the stored leads they repeat at them.
func claimIDs(ctx context.Context, tx *sqlx.Tx, leads []Lead) error {
	locks, orders, phones := make([]int64, len(leads)), make([]int64, len(leads)), make([]string, len(leads))
	for i, l := range leads {
		k := KeyOf(l)
		locks[i], orders[i], phones[i] = k.LockID(), k.OrderID, k.Phone
	}
	var rows []struct {
		N        int    `db:"ordinality"`
		ID       int64  `db:"new_id"`
		Previous *int64 `db:"previous_id"`
		Next     *int64 `db:"next_id"`
	}
	const q = `SELECT c.ordinality, c.new_id, c.previous_id, c.next_id FROM claim_lead_ids($1, $2, $3) WITH ORDINALITY AS c`
	if err := tx.SelectContext(ctx, &rows, q, pq.Int64Array(locks), pq.Int64Array(orders), pq.StringArray(phones)); err != nil {
		return fmt.Errorf("claim lead ids: %w", err)
	}
	if len(rows) != len(leads) {
		return fmt.Errorf("claim lead ids: %d rows for %d leads", len(rows), len(leads))
	}
	for _, r := range rows {
		l := &leads[r.N-1]
		l.ID, l.IsSecondary, l.PreviousLeadID, l.NextLeadID = r.ID, r.Previous != nil, r.Previous, r.Next
	}
	return nil
}

// insertReturning runs the insert q of leads and sets on each what the database decided.
func insertReturning(ctx context.Context, tx *sqlx.Tx, q string, args []any, leads []Lead) error {
	var rows []struct {
		ID        int64     `db:"id"`
		CreatedAt time.Time `db:"created_at"`
		UpdatedAt time.Time `db:"updated_at"`
		DoNotCall bool      `db:"do_not_call"`
	}
	if err := tx.SelectContext(ctx, &rows, q, args...); err != nil {
		return fmt.Errorf("insert leads: %w", err)
	}
	// Matched by id: PostgreSQL does not promise RETURNING in the order of VALUES.
	at := make(map[int64]int, len(leads))
	for i, l := range leads {
		at[l.ID] = i
	}
	for _, r := range rows {
		l := &leads[at[r.ID]]
		l.CreatedAt, l.UpdatedAt, l.DoNotCall = r.CreatedAt, r.UpdatedAt, r.DoNotCall
	}
	return nil
}

// Get reads one lead; a lead that does not exist is NotFound.
func (s *Store) Get(ctx context.Context, id int64) (Lead, error) {
	var l Lead
	err := s.conn.GetContext(ctx, &l, `SELECT `+columns+`, `+doNotCall+` FROM leads WHERE id = $1`, id)
	if db.IsNoRows(err) {
		return Lead{}, apperr.NotFoundf("lead %d does not exist", id)
	}
	if err != nil {
		return Lead{}, fmt.Errorf("get lead %d: %w", id, err)
	}
	return l, nil
}

// Update changes a lead under a row lock, so concurrent partial updates of different fields all
// survive: change gets the stored lead and edits it. by is who changes it (nil: no caller). The
// events of the change (lead.updated, lead.status_changed) are recorded in the same transaction.
func (s *Store) Update(ctx context.Context, id int64, by *int64, change func(*Lead) error) error {
	return db.InTx(ctx, s.conn, func(tx *sqlx.Tx) error {
		var before Lead
		err := tx.GetContext(ctx, &before, `SELECT `+columns+` FROM leads WHERE id = $1 FOR UPDATE`, id)
		if db.IsNoRows(err) {
			return apperr.NotFoundf("lead %d does not exist", id)
		}
		if err != nil {
			return fmt.Errorf("lock lead %d: %w", id, err)
		}
		l := before
		if err := change(&l); err != nil {
			return err
		}
		after, err := update(ctx, tx, l, by)
		if err != nil {
			return err
		}
		evs, err := updateEvents(before, after, by)
		if err != nil {
			return err
		}
		ids := make([]int64, len(evs))
		for i := range ids {
			ids[i] = id
		}
		return Emit(ctx, tx, evs, ids)
	})
}

// update writes l's fields inside tx and returns the lead as stored: the values are read back, so
// that the events compare and carry what the detail route will answer.
func update(ctx context.Context, tx *sqlx.Tx, l Lead, by *int64) (Lead, error) {
	const q = `
UPDATE leads SET phone = $2, name = $3, source_comment = $4, external_id_crm_a = $5, external_id_crm_b = $6,
    external_id_crm_c = $7, external_id_crm_d = $8, status_id = $9, source = $10, ad_campaign_id = $11,
    planning_call_at = $12, priority = $13, utc_offset = $14, social_network_id = $15, social_login = $16,
    messenger_user_name = $17, messenger_phone = $18, messenger_id = $19, custom_values = $20, updated_at = now(),
    updated_by = $21,
    status_changed_at = CASE WHEN status_id = $9 THEN status_changed_at ELSE now() END
WHERE id = $1
RETURNING ` + columns + `, ` + doNotCall
	var after Lead
	err := tx.GetContext(ctx, &after, q, l.ID, l.Phone, l.Name, l.SourceComment, l.ExternalIDCrmA, l.ExternalIDCrmB,
		l.ExternalIDCrmC, l.ExternalIDCrmD, l.StatusID, l.Source, l.AdCampaignID, l.PlanningCallAt, l.Priority,
		l.UTCOffset, l.SocialNetworkID, l.SocialLogin, l.MessengerUserName, l.MessengerPhone, l.MessengerID,
		l.CustomValues, by)
	if err != nil {
		return Lead{}, fmt.Errorf("update lead %d: %w", l.ID, err)
	}
	return after, nil
}

// Filter selects leads for the list.
type Filter struct {
	OrderIDs  []int64
	StatusIDs []int64
	Period    listquery.Period
}

// where builds the filter's condition and arguments. One order is compared with = rather than
// ANY, so that the (order_id, created_at) index also gives the page its order without a sort.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	switch len(f.OrderIDs) {
	case 0:
	case 1:
		conds = append(conds, "order_id = "+arg(f.OrderIDs[0]))
	default:
		conds = append(conds, "order_id = ANY("+arg(pq.Int64Array(f.OrderIDs))+")")
	}
	switch len(f.StatusIDs) {
	case 0:
	case 1:
		conds = append(conds, "status_id = "+arg(f.StatusIDs[0]))
	default:
		conds = append(conds, "status_id = ANY("+arg(pq.Int64Array(f.StatusIDs))+")")
	}
	if f.Period.From != nil {
		conds = append(conds, "created_at >= "+arg(*f.Period.From))
	}
	if f.Period.To != nil {
		// PostgreSQL keeps microseconds: an upper bound a nanosecond past an instant (an
		// inclusive bound) must be rounded up, not down, to keep that instant in.
		to := f.Period.To.Add(time.Microsecond - 1).Truncate(time.Microsecond)
		conds = append(conds, "created_at < "+arg(to))
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List is a page of the leads that pass f, newest first (created_at, then id, both descending:
// a stable order, since ids never repeat), and how many pass f in all. The count is a query of
// its own: an index-only count is many times cheaper than count(*) OVER () on every row.
func (s *Store) List(ctx context.Context, f Filter, page listquery.Page) ([]Lead, int, error) {
	where, args := f.where()
	var total int
	if err := s.conn.GetContext(ctx, &total, `SELECT count(*) FROM leads`+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count leads: %w", err)
	}
	list := []Lead{}
	if total == 0 || page.Offset >= total {
		return list, total, nil
	}
	n := len(args)
	q := `SELECT ` + columns + `, ` + doNotCall + ` FROM leads` + where +
		` ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2)
	if err := s.conn.SelectContext(ctx, &list, q, append(args, page.Limit, page.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list leads: %w", err)
	}
	return list, total, nil
}

// Brief is a lead as other services need it to make up call events.
type Brief struct {
	ID      int64  `json:"id" db:"id"`
	Phone   string `json:"phone" db:"phone"`
	OrderID int64  `json:"orderId" db:"order_id"`
}

// Briefs are up to limit leads, oldest first, of one order (orderID > 0) or of all.
func (s *Store) Briefs(ctx context.Context, orderID int64, limit int) ([]Brief, error) {
	const q = `SELECT id, phone, order_id FROM leads WHERE ($1 = 0 OR order_id = $1) ORDER BY id LIMIT $2`
	list := []Brief{}
	if err := s.conn.SelectContext(ctx, &list, q, orderID, limit); err != nil {
		return nil, fmt.Errorf("list lead briefs: %w", err)
	}
	return list, nil
}

// CalledRecently reports whether user handled a call with lead that ended at or after since
// (recorded by the call results of lead-worker).
func (s *Store) CalledRecently(ctx context.Context, lead, user int64, since time.Time) (bool, error) {
	const q = `SELECT EXISTS (SELECT 1 FROM lead_call_results WHERE lead_id = $1 AND user_id = $2 AND ended_at >= $3)`
	var ok bool
	if err := s.conn.GetContext(ctx, &ok, q, lead, user, since); err != nil {
		return false, fmt.Errorf("recent calls of lead %d: %w", lead, err)
	}
	return ok, nil
}
