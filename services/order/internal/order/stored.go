package order

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/listquery"

	"github.com/lib/pq"
)

// field is the description of one field of an order (Order.fields).
type field struct {
	column string
	name   string
	// ptr points at the value in an Order: a scan destination and a statement argument.
	ptr    any
	writes writes
	// wire is the field's value on the wire when that is not the value itself.
	wire func(o *Order) any
}

// writes says who writes a column.
type writes int

const (
	// byBoth: the field is written by a create and by an update (the zero value).
	byBoth writes = iota
	// byCreate: written once, by the create (created_by).
	byCreate
	// byDatabase: never written; the database sets it (id, created_at).
	byDatabase
	// stamped: the database's default on create, now() on every update (updated_at).
	stamped
)

// statements are the store's SQL, built once from Order.fields (NewStore), the only place that
// names the columns.
type statements struct {
	// columns lists every column, in the order of Order.fields: what a read scans.
	columns string
	// insert writes a new order and returns its id; its arguments are insertArgs.
	insert string
	// update writes an order whose id is the last argument and returns it as stored (columns);
	// its arguments are updateArgs.
	update string
}

func statementsFor(fields []field) statements {
	var all, inserted, placeholders, set []string
	updated := 0
	for _, f := range fields {
		all = append(all, f.column)
		switch f.writes {
		case byBoth:
			updated++
			set = append(set, f.column+" = $"+strconv.Itoa(updated))
			fallthrough
		case byCreate:
			inserted = append(inserted, f.column)
			placeholders = append(placeholders, "$"+strconv.Itoa(len(inserted)))
		case stamped:
			set = append(set, f.column+" = now()")
		}
	}
	columns := strings.Join(all, ", ")
	return statements{
		columns: columns,
		insert: "INSERT INTO orders (" + strings.Join(inserted, ", ") + ") VALUES (" +
			strings.Join(placeholders, ", ") + ") RETURNING id",
		update: "UPDATE orders SET " + strings.Join(set, ", ") + " WHERE id = $" + strconv.Itoa(updated+1) +
			" RETURNING " + columns,
	}
}

// targets are the scan destinations of a read of statements.columns into o.
func (o *Order) targets() []any {
	fields := o.fields()
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = f.ptr
	}
	return out
}

// insertArgs are the arguments of statements.insert: o's fields that a create writes.
func (o *Order) insertArgs() []any { return o.args(byBoth, byCreate) }

// updateArgs are the arguments of statements.update: o's fields that an update writes, then id.
func (o *Order) updateArgs(id int64) []any { return append(o.args(byBoth), id) }

func (o *Order) args(by ...writes) []any {
	var out []any
	for _, f := range o.fields() {
		if slices.Contains(by, f.writes) {
			out = append(out, f.ptr)
		}
	}
	return out
}

// jsonText reads a jsonb column, which the driver hands over as text or bytes.
func jsonText(src any, what string) ([]byte, error) {
	switch v := src.(type) {
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	}
	return nil, fmt.Errorf("%s: unexpected column type %T", what, src)
}

// jsonValue is v as a jsonb argument. It is text, not []byte: the driver would send bytes as
// bytea.
func jsonValue(v any, what string) (driver.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return string(b), nil
}

// Value stores the schedule as the API returns it: always 7 days.
func (s Schedule) Value() (driver.Value, error) { return jsonValue(s.Padded(), "schedule") }

// Scan reads the jsonb column as stored, which may hold fewer than 7 days.
func (s *Schedule) Scan(src any) error {
	b, err := jsonText(src, "schedule")
	if err != nil {
		return err
	}
	*s = nil
	if err := json.Unmarshal(b, s); err != nil {
		return fmt.Errorf("decode schedule: %w", err)
	}
	return nil
}

// storedTransferNumbers are the transfer numbers as their jsonb column holds them: a list, [] when
// there are none.
type storedTransferNumbers []TransferNumber

// Value encodes the list.
func (t storedTransferNumbers) Value() (driver.Value, error) {
	return jsonValue(listquery.List([]TransferNumber(t)), "transfer numbers")
}

// Scan decodes the list.
func (t *storedTransferNumbers) Scan(src any) error {
	b, err := jsonText(src, "transfer numbers")
	if err != nil {
		return err
	}
	*t = nil
	if err := json.Unmarshal(b, (*[]TransferNumber)(t)); err != nil {
		return fmt.Errorf("decode transfer numbers: %w", err)
	}
	return nil
}

// storedCustomValues are the custom values as their jsonb column holds them: an object, {} when
// there are none.
type storedCustomValues map[string]json.RawMessage

// Value encodes the map.
func (c storedCustomValues) Value() (driver.Value, error) {
	if c == nil {
		return "{}", nil
	}
	return jsonValue(map[string]json.RawMessage(c), "custom values")
}

// Scan decodes the map.
func (c *storedCustomValues) Scan(src any) error {
	b, err := jsonText(src, "custom values")
	if err != nil {
		return err
	}
	*c = nil
	if err := json.Unmarshal(b, (*map[string]json.RawMessage)(c)); err != nil {
		return fmt.Errorf("decode custom values: %w", err)
	}
	return nil
}

// storedDates are dates (midnight UTC) as a date[] column holds them.
type storedDates []time.Time

// Value writes each date as yyyy-mm-dd.
func (d storedDates) Value() (driver.Value, error) {
	days := make(pq.StringArray, len(d))
	for i, t := range d {
		days[i] = t.Format(time.DateOnly)
	}
	return days.Value()
}

// Scan reads the dates, never nil.
func (d *storedDates) Scan(src any) error {
	var days pq.StringArray
	if err := days.Scan(src); err != nil {
		return fmt.Errorf("decode dates: %w", err)
	}
	out := make([]time.Time, 0, len(days))
	for _, s := range days {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return fmt.Errorf("decode date %q: %w", s, err)
		}
		out = append(out, t)
	}
	*d = out
	return nil
}

// storedIDs are ids as a bigint[] column holds them: '{}' when there are none.
type storedIDs []int64

// Value writes the array.
func (ids storedIDs) Value() (driver.Value, error) { return pq.Int64Array(listquery.List(ids)).Value() }

// Scan reads the array, never nil.
func (ids *storedIDs) Scan(src any) error {
	var a pq.Int64Array
	if err := a.Scan(src); err != nil {
		return fmt.Errorf("decode ids: %w", err)
	}
	*ids = listquery.List([]int64(a))
	return nil
}
