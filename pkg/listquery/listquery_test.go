package listquery

import (
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func query(t *testing.T, raw string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(raw)
	require.NoError(t, err)
	return q
}

func TestParsePageDefaults(t *testing.T) {
	fe := apperr.FieldErrors{}
	p := ParsePage(url.Values{}, fe)
	assert.Empty(t, fe)
	assert.Equal(t, Page{Offset: 0, Limit: 50}, p)
}

func TestParsePageBounds(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		want   Page
		failed string
	}{
		{raw: "offset=10&limit=100", want: Page{Offset: 10, Limit: 100}},
		{raw: "limit=1", want: Page{Limit: 1}},
		{raw: "limit=%2020%20", want: Page{Limit: 20}},
		{raw: "limit=0", want: Page{Limit: 50}, failed: "limit"},
		{raw: "limit=101", want: Page{Limit: 50}, failed: "limit"},
		{raw: "limit=-1", want: Page{Limit: 50}, failed: "limit"},
		{raw: "limit=abc", want: Page{Limit: 50}, failed: "limit"},
		{raw: "limit=1.5", want: Page{Limit: 50}, failed: "limit"},
		{raw: "limit=", want: Page{Limit: 50}, failed: "limit"},
		{raw: "offset=-1", want: Page{Limit: 50}, failed: "offset"},
		{raw: "offset=abc", want: Page{Limit: 50}, failed: "offset"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			p := ParsePage(query(t, tc.raw), fe)
			assert.Equal(t, tc.want, p)
			if tc.failed == "" {
				assert.Empty(t, fe)
				return
			}
			require.Contains(t, fe, tc.failed)
			err := fe.Err()
			assert.Equal(t, apperr.Invalid, apperr.KindOf(err))
		})
	}
	fe := apperr.FieldErrors{}
	ParsePage(query(t, "limit=0"), fe)
	assert.Equal(t, "limit: must be an integer from 1 to 100", fe.Err().Error())
}

func TestIDs(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []int64
	}{
		{raw: "", want: nil},
		{raw: "orderIds[]=1&orderIds[]=2", want: []int64{1, 2}},
		{raw: "orderIds%5B%5D=3&orderIds%5B%5D=4", want: []int64{3, 4}},
		{raw: "orderIds=5,6", want: []int64{5, 6}},
		{raw: "orderIds=7&orderIds=8", want: []int64{7, 8}},
		{raw: "orderIds[]=1&orderIds[]=2&orderIds[]=1&orderIds=2,3", want: []int64{1, 2, 3}},
		{raw: "orderIds[]=1,2", want: []int64{1, 2}},
		{raw: "orderIds[]=&orderIds[]=%209%20", want: []int64{9}},
		{raw: "orderIds[1]=20&orderIds[0]=10&orderIds[2]=30&orderIds[10]=40", want: []int64{10, 20, 30, 40}},
		{raw: "otherIds[]=1", want: nil},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			assert.Equal(t, tc.want, IDs(query(t, tc.raw), "orderIds", fe))
			assert.Empty(t, fe)
		})
	}
}

func TestIndexedIDsKeepIndexOrder(t *testing.T) {
	// The indexed form comes from a map: the order must not depend on map iteration.
	for range 50 {
		fe := apperr.FieldErrors{}
		got := IDs(query(t, "ids[0]=1&ids[1]=2&ids[2]=3&ids[3]=4&ids[4]=5"), "ids", fe)
		require.Equal(t, []int64{1, 2, 3, 4, 5}, got)
	}
}

func TestInvalidIDs(t *testing.T) {
	for _, raw := range []string{"orderIds[]=abc", "orderIds[]=0", "orderIds[]=-1", "orderIds=1,x", "orderIds[]=1.5", "orderIds[x]=1", "orderIds[]=99999999999999999999"} {
		t.Run(raw, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			assert.Nil(t, IDs(query(t, raw), "orderIds", fe))
			assert.Equal(t, "must be integers > 0", fe["orderIds[]"])
		})
	}
}

// A list reads only numbers and times, so text the database cannot hold (a NUL, a byte that is no
// UTF-8, a broken character) is a field error of its reader too, even where web.WholeQuery did not
// run first: nothing of it reaches a statement.
func TestTextThatIsNotTextIsRefusedByEveryReader(t *testing.T) {
	for _, bad := range []string{"%00", "%ff", "%c3%28", "1%00", "2026-01-01%00"} {
		t.Run(bad, func(t *testing.T) {
			q := query(t, "offset="+bad+"&limit="+bad+"&orderIds[]="+bad+"&statusIds[]="+bad+
				"&createdAt[0]="+bad+"&createdAt[1]="+bad)
			fe := apperr.FieldErrors{}
			ParsePage(q, fe)
			assert.Nil(t, IDs(q, "orderIds", fe))
			assert.Nil(t, IntIDs(q, "statusIds", fe))
			p := ParsePeriod(q, "createdAt", fe)
			assert.Nil(t, p.From)
			assert.Nil(t, p.To)
			assert.ElementsMatch(t, []string{"offset", "limit", "orderIds[]", "statusIds[]", "createdAt[0]", "createdAt[1]"}, keys(fe))
		})
	}
}

func keys(fe apperr.FieldErrors) []string {
	out := make([]string, 0, len(fe))
	for k := range fe {
		out = append(out, k)
	}
	return out
}

func TestIntIDsStayInAnIntegerColumn(t *testing.T) {
	fe := apperr.FieldErrors{}
	assert.Equal(t, []int64{1, 2147483647}, IntIDs(query(t, "statusIds[]=1&statusIds[]=2147483647"), "statusIds", fe))
	assert.Empty(t, fe)
	for _, raw := range []string{"statusIds[]=2147483648", "statusIds[]=9223372036854775807", "statusIds[]=9223372036854775808", "statusIds[]=0"} {
		t.Run(raw, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			assert.Nil(t, IntIDs(query(t, raw), "statusIds", fe))
			assert.Equal(t, "must be integers from 1 to 2147483647", fe["statusIds[]"])
		})
	}
	// A bigint column takes 2^63-1.
	fe = apperr.FieldErrors{}
	assert.Equal(t, []int64{9223372036854775807}, IDs(query(t, "orderIds[]=9223372036854775807"), "orderIds", fe))
	assert.Empty(t, fe)
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v.UTC()
}

func TestParsePeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		raw      string
		from, to string // RFC 3339, "" for open
	}{
		{name: "open", raw: ""},
		{name: "offset escaped", raw: "createdAt[0]=2026-11-21T10:00:00%2B03:00", from: "2026-11-21T07:00:00Z"},
		{name: "plus unescaped", raw: "createdAt[0]=2026-11-21T10:00:00+03:00", from: "2026-11-21T07:00:00Z"},
		{name: "plus unescaped with fraction", raw: "createdAt[0]=2026-11-21T10:00:00.5+03:00", from: "2026-11-21T07:00:00.5Z"},
		{name: "plus unescaped without seconds", raw: "createdAt[0]=2026-11-21T10:00+03:00", from: "2026-11-21T07:00:00Z"},
		{name: "plus unescaped compact offset", raw: "createdAt[0]=2026-11-21T10:00:00+0300", from: "2026-11-21T07:00:00Z"},
		{name: "plus unescaped space separator", raw: "createdAt[0]=2026-11-21 10:00:00+03:00", from: "2026-11-21T07:00:00Z"},
		{name: "negative offset", raw: "createdAt[0]=2026-11-21T10:00:00-02:00", from: "2026-11-21T12:00:00Z"},
		{name: "zulu", raw: "createdAt[0]=2026-11-21T10:00:00Z", from: "2026-11-21T10:00:00Z"},
		{name: "no zone is UTC", raw: "createdAt[0]=2026-11-21T10:00:00", from: "2026-11-21T10:00:00Z"},
		{name: "space separator no zone", raw: "createdAt[0]=2026-11-21 10:00", from: "2026-11-21T10:00:00Z"},
		{name: "date-only lower", raw: "createdAt[0]=2026-11-21", from: "2026-11-21T00:00:00Z"},
		{name: "date-only upper is the whole day", raw: "createdAt[1]=2026-11-21", to: "2026-11-22T00:00:00Z"},
		{name: "exact upper is inclusive", raw: "createdAt[1]=2026-11-21T10:00:00Z", to: "2026-11-21T10:00:00.000001Z"},
		{name: "one whole day", raw: "createdAt[0]=2026-11-21&createdAt[1]=2026-11-21", from: "2026-11-21T00:00:00Z", to: "2026-11-22T00:00:00Z"},
		{name: "both", raw: "createdAt[0]=2026-11-01T00:00:00Z&createdAt[1]=2026-11-30", from: "2026-11-01T00:00:00Z", to: "2026-12-01T00:00:00Z"},
		{name: "encoded brackets", raw: "createdAt%5B0%5D=2026-11-01", from: "2026-11-01T00:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			p := ParsePeriod(query(t, tc.raw), "createdAt", fe)
			require.Empty(t, fe)
			if tc.from == "" {
				assert.Nil(t, p.From)
			} else {
				require.NotNil(t, p.From)
				assert.True(t, mustTime(t, tc.from).Equal(*p.From), "from %s", p.From)
				assert.Equal(t, time.UTC, p.From.Location())
			}
			if tc.to == "" {
				assert.Nil(t, p.To)
			} else {
				require.NotNil(t, p.To)
				assert.True(t, mustTime(t, tc.to).Equal(*p.To), "to %s", p.To)
			}
		})
	}
}

func TestParsePeriodErrors(t *testing.T) {
	for _, tc := range []struct {
		name, raw, field string
	}{
		{name: "garbage lower", raw: "createdAt[0]=yesterday", field: "createdAt[0]"},
		{name: "garbage upper", raw: "createdAt[1]=2026-13-01", field: "createdAt[1]"},
		{name: "year 0000", raw: "createdAt[0]=0000-06-01T00:00:00Z", field: "createdAt[0]"},
		{name: "past 9999 once in UTC", raw: "createdAt[1]=9999-12-31T23:59:59-14:00", field: "createdAt[1]"},
		{name: "from after to", raw: "createdAt[0]=2026-11-22&createdAt[1]=2026-11-21", field: "createdAt[1]"},
		{name: "from equals to", raw: "createdAt[0]=2026-11-21T10:00:00Z&createdAt[1]=2026-11-21T10:00:00Z", field: "createdAt[1]"},
		{name: "from after to across zones", raw: "createdAt[0]=2026-11-21T10:00:00Z&createdAt[1]=2026-11-21T12:00:00%2B03:00", field: "createdAt[1]"},
		{name: "from after a whole day", raw: "createdAt[0]=2026-11-22T00:00:00Z&createdAt[1]=2026-11-21", field: "createdAt[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := apperr.FieldErrors{}
			ParsePeriod(query(t, tc.raw), "createdAt", fe)
			assert.Contains(t, fe, tc.field)
			assert.Len(t, fe, 1)
		})
	}
}

func TestParseTime(t *testing.T) {
	tm, dateOnly, err := ParseTime(" 2026-11-21 ")
	require.NoError(t, err)
	assert.True(t, dateOnly)
	assert.Equal(t, "2026-11-21T00:00:00Z", tm.Format(time.RFC3339))

	tm, dateOnly, err = ParseTime("2026-11-21T10:00:00.123456+03:00")
	require.NoError(t, err)
	assert.False(t, dateOnly)
	assert.Equal(t, "2026-11-21T07:00:00.123456Z", tm.Format(time.RFC3339Nano))

	_, _, err = ParseTime("21.11.2026")
	assert.Error(t, err)
	for _, raw := range []string{"0000-06-01T00:00:00Z", "0000-06-01", "9999-12-31T23:59:59-14:00", "0001-01-01T00:30:00+01:00"} {
		_, _, err = ParseTime(raw)
		assert.ErrorIs(t, err, ErrTimeRange, raw)
	}
	tm, _, err = ParseTime("9999-12-31T23:59:59+00:00")
	require.NoError(t, err)
	assert.Equal(t, 9999, tm.Year())
	_, _, err = ParseTime("")
	assert.Error(t, err)
}

func TestNewResult(t *testing.T) {
	r := NewResult[int](nil, Page{Offset: 20, Limit: 10}, 25)
	assert.Equal(t, 20, r.Next)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"list":[],"next":20,"total":25}`, string(out))

	r2 := NewResult([]string{"a", "b", "c"}, Page{Offset: 5, Limit: 3}, 100)
	assert.Equal(t, 8, r2.Next)
	assert.Equal(t, 100, r2.Total)
	out, err = json.Marshal(r2)
	require.NoError(t, err)
	assert.JSONEq(t, `{"list":["a","b","c"],"next":8,"total":100}`, string(out))
}

func TestResultOf(t *testing.T) {
	r := ResultOf([]int{1, 2}, func(n int) string { return strconv.Itoa(n * 10) }, Page{Offset: 4, Limit: 2}, 9)
	assert.Equal(t, Result[string]{List: []string{"10", "20"}, Next: 6, Total: 9}, r)
	out, err := json.Marshal(ResultOf[int, string](nil, strconv.Itoa, Page{}, 0))
	require.NoError(t, err)
	assert.JSONEq(t, `{"list":[],"next":0,"total":0}`, string(out))
}
