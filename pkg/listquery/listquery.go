// Package listquery parses the query string of list operations with the contract's defaults and
// bounds: offset/limit, bracketed arrays (`orderIds[]=1&orderIds[]=2`) and the createdAt period.
package listquery

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
)

// Defaults and bounds of every list.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// Page is the slice of a list asked for.
type Page struct {
	Offset int
	Limit  int
}

// ParsePage reads offset (default 0, >= 0) and limit (default 50, 1..100).
func ParsePage(q url.Values, fe apperr.FieldErrors) Page {
	p := Page{Offset: 0, Limit: DefaultLimit}
	if raw, ok := single(q, "offset"); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			fe.Add("offset", "must be an integer >= 0")
		} else {
			p.Offset = n
		}
	}
	if raw, ok := single(q, "limit"); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > MaxLimit {
			fe.Addf("limit", "must be an integer from 1 to %d", MaxLimit)
		} else {
			p.Limit = n
		}
	}
	return p
}

func single(q url.Values, name string) (string, bool) {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[len(vs)-1]), true
}

// IDs reads a bracketed array of ids > 0 of a bigint column (`name[]=1&name[]=2`; a plain
// `name=1,2` and the indexed `name[0]=1&name[1]=2` are accepted too, and any value may hold
// several ids separated by commas). Duplicates are dropped; the order of first appearance is kept
// (indexed items in index order).
func IDs(q url.Values, name string, fe apperr.FieldErrors) []int64 {
	return ids(q, name, math.MaxInt64, "must be integers > 0", fe)
}

// IntIDs is IDs for the ids of an integer (int4) column: an id the column cannot hold is a 400
// here rather than an out-of-range error from the database.
func IntIDs(q url.Values, name string, fe apperr.FieldErrors) []int64 {
	return ids(q, name, math.MaxInt32, fmt.Sprintf("must be integers from 1 to %d", math.MaxInt32), fe)
}

func ids(q url.Values, name string, maxID int64, rule string, fe apperr.FieldErrors) []int64 {
	var raws []string
	raws = append(raws, q[name+"[]"]...)
	type indexed struct {
		i  int
		vs []string
	}
	var items []indexed
	for k, vs := range q {
		// Indexed form name[0]=..&name[1]=.. as some HTTP clients write arrays.
		if !strings.HasPrefix(k, name+"[") || k == name+"[]" || !strings.HasSuffix(k, "]") {
			continue
		}
		i, err := strconv.Atoi(k[len(name)+1 : len(k)-1])
		if err != nil || i < 0 {
			fe.Add(name+"[]", rule)
			return nil
		}
		items = append(items, indexed{i, vs})
	}
	sort.Slice(items, func(a, b int) bool { return items[a].i < items[b].i })
	for _, it := range items {
		raws = append(raws, it.vs...)
	}
	raws = append(raws, q[name]...)
	seen := map[int64]bool{}
	var out []int64
	for _, v := range raws {
		for _, r := range strings.Split(v, ",") {
			r = strings.TrimSpace(r)
			if r == "" {
				continue
			}
			n, err := strconv.ParseInt(r, 10, 64)
			if err != nil || n <= 0 || n > maxID {
				fe.Add(name+"[]", rule)
				return nil
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// Period is a half-open time range [From, To); a nil bound is open.
type Period struct {
	From *time.Time
	To   *time.Time
}

// ParsePeriod reads name[0] and name[1] as ISO 8601 times, each optional. An exact upper bound is
// inclusive ("until 10:00:00"); a date without a time as the upper bound means the whole of that
// day. A lower bound that is not before the upper one is an error.
func ParsePeriod(q url.Values, name string, fe apperr.FieldErrors) Period {
	var p Period
	if raw, ok := single(q, name+"[0]"); ok && raw != "" {
		t, _, err := ParseTime(raw)
		if err != nil {
			fe.Add(name+"[0]", timeRule(err))
		} else {
			p.From = &t
		}
	}
	var bound time.Time // the upper bound as the caller wrote it, or the end of a date-only day
	if raw, ok := single(q, name+"[1]"); ok && raw != "" {
		t, dateOnly, err := ParseTime(raw)
		switch {
		case err != nil:
			fe.Add(name+"[1]", timeRule(err))
		case dateOnly:
			end := t.AddDate(0, 0, 1)
			bound = end
			p.To = &end
		default:
			bound = t
			// An exact upper bound is inclusive ("until 10:00:00"). PostgreSQL keeps microseconds,
			// so the exclusive end is the next microsecond: a nanosecond past t would be rounded
			// back down to t and lose that very instant.
			end := t.Truncate(time.Microsecond).Add(time.Microsecond)
			p.To = &end
		}
	}
	if p.From != nil && p.To != nil && !p.From.Before(bound) {
		fe.Add(name+"[1]", "must be after "+name+"[0]")
	}
	return p
}

var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04",
}

// spacedOffset is a date-time whose zone offset lost its '+' to an unescaped query string:
// "2026-11-21T10:00:00 03:00".
var spacedOffset = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?) (\d{2}(?::?\d{2})?)$`)

// ErrTimeRange is ParseTime's error for a well-formed time outside apitime.InRange.
var ErrTimeRange = errors.New(apitime.RangeRule)

// timeRule is the field error of a time ParseTime refused.
func timeRule(err error) string {
	if errors.Is(err, ErrTimeRange) {
		return apitime.RangeRule
	}
	return "must be an ISO 8601 date or date-time"
}

// ParseTime reads an ISO 8601 date-time (zone optional, UTC assumed) or date; dateOnly tells which.
// A time outside the years 0001 to 9999 in UTC (apitime.InRange) is ErrTimeRange.
func ParseTime(raw string) (t time.Time, dateOnly bool, err error) {
	raw = strings.TrimSpace(raw)
	// A '+' in a query string arrives as a space when the client did not escape it.
	if m := spacedOffset.FindStringSubmatch(raw); m != nil {
		raw = m[1] + "+" + m[2]
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, raw); err == nil {
			if !apitime.InRange(t) {
				return time.Time{}, false, ErrTimeRange
			}
			return t.UTC(), false, nil
		}
	}
	t, err = time.Parse("2006-01-02", raw)
	if err != nil {
		return time.Time{}, false, err
	}
	if !apitime.InRange(t) {
		return time.Time{}, false, ErrTimeRange
	}
	return t, true, nil
}

// Result is the data of a paginated list.
type Result[T any] struct {
	List  []T `json:"list"`
	Next  int `json:"next"`
	Total int `json:"total"`
}

// NewResult fills next as offset + len(list) and never returns a null list.
func NewResult[T any](list []T, page Page, total int) Result[T] {
	if list == nil {
		list = []T{}
	}
	return Result[T]{List: list, Next: page.Offset + len(list), Total: total}
}

// ResultOf is NewResult of the views of items (view of each, in order): the answer of a list
// route whose store returns records.
func ResultOf[T, V any](items []T, view func(T) V, page Page, total int) Result[V] {
	list := make([]V, len(items))
	for i, it := range items {
		list[i] = view(it)
	}
	return NewResult(list, page, total)
}

// List is s as the API writes a list: [] for nil, never null.
func List[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
