package imports

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldsOf answers a header's custom fields from a fixed catalog.
func fieldsOf(catalog map[int64]customfield.Field) func([]int64) (map[int64]customfield.Field, error) {
	return func(ids []int64) (map[int64]customfield.Field, error) {
		out := map[int64]customfield.Field{}
		for _, id := range ids {
			if f, ok := catalog[id]; ok {
				out[id] = f
			}
		}
		return out, nil
	}
}

func readAll(t *testing.T, rows Rows) []Row {
	t.Helper()
	var out []Row
	for {
		r, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, r)
	}
}

func TestCSVRowsBecomeV2CreateBodies(t *testing.T) {
	catalog := map[int64]customfield.Field{
		3: {ID: 3, Type: customfield.TypeInteger},
		4: {ID: 4, Type: customfield.TypeBoolean},
		5: {ID: 5, Type: customfield.TypeString},
		6: {ID: 6, Type: customfield.TypeNumber},
	}
	file := "\ufeffphone,leadType,orderId,priority,name,planningCallDateTime,customValues.3,customValues.4,customValues.5,customValues.6,customValues.9\n" +
		"+79001234567,straight,12,5,\"Ann, \"\"the\"\" first\",1767225600,42,true,007,1.5,x\n" +
		"+79001234568,selection,,,,2026-12-01T10:00:00+03:00,,,,,\n" +
		"+79001234569,straight,twelve,high,Bob,,4.2,yes,,NaN,\n"
	rows, err := newCSV(strings.NewReader(file), charset{}, fieldsOf(catalog))
	require.NoError(t, err)
	got := readAll(t, rows)
	require.Len(t, got, 3)

	assert.Equal(t, 2, got[0].No, "rows are numbered by their line in the file")
	assert.JSONEq(t, `{"phone":"+79001234567","leadType":"straight","orderId":12,"priority":5,"name":"Ann, \"the\" first",
		"planningCallDateTime":1767225600,"customValues":{"3":42,"4":true,"5":"007","6":1.5,"9":"x"}}`, string(got[0].Body))
	assert.JSONEq(t, `{"phone":"+79001234568","leadType":"selection","planningCallDateTime":"2026-12-01T10:00:00+03:00"}`,
		string(got[1].Body), "an empty cell is a field not sent")
	// A cell that does not read as its field's type is sent as a string, which the field's rule
	// refuses by name.
	assert.JSONEq(t, `{"phone":"+79001234569","leadType":"straight","orderId":"twelve","priority":"high","name":"Bob",
		"customValues":{"3":"4.2","4":"yes","6":"NaN"}}`, string(got[2].Body))
}

func TestCSVHeaderMistakesRefuseTheFile(t *testing.T) {
	for name, tc := range map[string]struct {
		file, field, rule string
	}{
		"unknown column":  {"phone,colour\n", "header column 2", `"colour" is not a field of a v2 lead create`},
		"twice":           {"phone,name,phone\n", "header column 3", `"phone" appears twice`},
		"bad custom":      {"phone,customValues.x\n", "header column 2", "customValues.<field id>"},
		"no rows at all":  {"", "body", "must have a header row"},
		"broken quote":    {"phone,name\n+7900,\"Ann\n", "body", "must be CSV (RFC 4180): line 2"},
		"bare quote":      {"phone,name\n+7900,An\"n\n", "body", "must be CSV (RFC 4180): line 2"},
		"header is blank": {"\n\n", "body", "must have a header row"},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := newCSV(strings.NewReader(tc.file), charset{}, fieldsOf(nil))
			if err == nil {
				_, err = rows.Next()
				_, err2 := rows.Next()
				if err == nil {
					err = err2
				}
			}
			e, ok := apperr.As(err)
			require.True(t, ok, "an apperr: %v", err)
			require.Equal(t, apperr.Invalid, e.Kind)
			assert.Contains(t, e.Fields[tc.field], tc.rule)
		})
	}
}

func TestCSVRowOfTheWrongWidthIsThatRowsError(t *testing.T) {
	rows, err := newCSV(strings.NewReader("phone,name\n+79001234567\n+79001234568,Bob\n\n"), charset{}, fieldsOf(nil))
	require.NoError(t, err)
	got := readAll(t, rows)
	require.Len(t, got, 2)
	assert.Equal(t, map[string]string{"row": "must have 2 cells like the header, not 1"}, got[0].Errors)
	assert.Nil(t, got[0].Body)
	assert.JSONEq(t, `{"phone":"+79001234568","name":"Bob"}`, string(got[1].Body))
}

func TestNDJSONRowsAreNumberedByLine(t *testing.T) {
	long := `{"name":"` + strings.Repeat("a", maxLine) + `"}`
	file := `{"phone":"+79001234567"}` + "\n\n" + `[1,2]` + "\n" + `{"phone":` + "\n" + long + "\n" +
		"{\"name\":\"\xff\"}\n" + `  {"phone":"+79001234568"}  ` // no newline at the end
	got := readAll(t, newNDJSON(strings.NewReader(file)))
	require.Len(t, got, 6, "the blank line is no row")
	assert.Equal(t, Row{No: 1, Body: []byte(`{"phone":"+79001234567"}`)}, got[0])
	assert.Equal(t, 3, got[1].No)
	assert.Equal(t, map[string]string{"row": "must be one JSON object (a v2 create body)"}, got[1].Errors)
	assert.Equal(t, map[string]string{"row": "must be one JSON object (a v2 create body)"}, got[2].Errors)
	assert.Equal(t, map[string]string{"row": "must be at most 1048576 bytes"}, got[3].Errors)
	assert.Equal(t, map[string]string{"row": "must be UTF-8 text"}, got[4].Errors)
	assert.Equal(t, Row{No: 7, Body: []byte(`{"phone":"+79001234568"}`)}, got[5])
}

func TestFileOverTheLimitIs413(t *testing.T) {
	body := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(strings.Repeat(`{"a":1}`+"\n", 100))), 64)
	rows := newNDJSON(body)
	var err error
	for err == nil {
		_, err = rows.Next()
	}
	e, ok := apperr.As(err)
	require.True(t, ok, "an apperr: %v", err)
	assert.Equal(t, apperr.TooLarge, e.Kind)
	assert.Equal(t, "body: must be at most 64 bytes", e.Message)

	csvBody := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("phone\n"+strings.Repeat("+79001234567\n", 100))), 64)
	cr, err := newCSV(csvBody, charset{}, fieldsOf(nil))
	require.NoError(t, err)
	for err == nil {
		_, err = cr.Next()
	}
	assert.Equal(t, apperr.TooLarge, apperr.KindOf(err))
}

func TestOrderDefaultsAreChecked(t *testing.T) {
	fe := apperr.FieldErrors{}
	id, code := orderDefaults("12", "shop-12", fe)
	require.Empty(t, fe)
	assert.Equal(t, int64(12), *id)
	assert.Equal(t, "shop-12", *code)

	id, code = orderDefaults("-1", strings.Repeat("c", 101), fe)
	assert.Nil(t, id)
	assert.Nil(t, code)
	assert.Equal(t, apperr.FieldErrors{"orderId": "must be an integer > 0", "orderCode": "must be at most 100 characters"}, fe)
}

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A header of millions of columns is refused by its size before it is split into cells, one of a
// few hundred by its count before any column is looked at.
func TestCSVHeaderIsBoundedBeforeItsColumnsAreRead(t *testing.T) {
	for _, commas := range []int{1 << 20, 5 << 20} {
		file := "phone,leadType,name" + strings.Repeat(",", commas) + "\n+79001234567,straight,Ann\n"
		var err error
		n := allocated(func() { _, err = newCSV(strings.NewReader(file), charset{}, fieldsOf(nil)) })
		e, ok := apperr.As(err)
		require.True(t, ok, "an apperr: %v", err)
		assert.Equal(t, map[string]string{"body": fmt.Sprintf("the header row must have at most %d columns (the v2 create fields and 100 custom fields)", maxColumns)},
			map[string]string(e.Fields))
		assert.Less(t, n, uint64(1<<20), "%d commas: bytes allocated", commas)
	}

	wide := "phone" + strings.Repeat(",name", maxColumns)
	_, err := newCSV(strings.NewReader(wide+"\n"), charset{}, fieldsOf(nil))
	assert.EqualError(t, err, fmt.Sprintf("body: the header row must have at most %d columns (the v2 create fields and 100 custom fields)", maxColumns))
	long := "phone,\"" + strings.Repeat("n", maxHeaderBytes+2*csvReadAhead) + "\"\n"
	_, err = newCSV(strings.NewReader(long), charset{}, fieldsOf(nil))
	assert.EqualError(t, err, "body: the header row must be at most 65536 bytes")

	// Within the bound, every column is checked; the answer names 20 of them.
	many := "phone"
	for i := range maxColumns - 1 {
		many += fmt.Sprintf(",colour%d", i)
	}
	_, err = newCSV(strings.NewReader(many+"\n"), charset{}, fieldsOf(nil))
	e, ok := apperr.As(err)
	require.True(t, ok, "an apperr: %v", err)
	assert.Len(t, e.Fields, maxColumns-1)
	assert.True(t, strings.HasSuffix(e.Message, fmt.Sprintf("; and %d more", maxColumns-1-apperr.MaxNamedFields)), e.Message)
}

// A data row of more cells than any header has, or past maxLine, refuses the file at that row,
// its cells never all in memory.
func TestCSVRowIsBounded(t *testing.T) {
	for rest, message := range map[string]string{
		strings.Repeat(",", 8<<20):                       fmt.Sprintf("body: line 3: a row must have at most %d cells", maxColumns),
		"\"" + strings.Repeat(",", 8<<20) + "\"":         "body: line 3: a row must be at most 1048576 bytes",
		strings.Repeat("a", 8<<20) + "," + "\"a,\"\"b\"": "body: line 3: a row must be at most 1048576 bytes",
	} {
		file := "phone,name\n+79001234567,Ann\n+79001234568," + rest + "\n+79001234569,Bob\n"
		rows, err := newCSV(strings.NewReader(file), charset{}, fieldsOf(nil))
		require.NoError(t, err)
		r, err := rows.Next()
		require.NoError(t, err)
		assert.Equal(t, 2, r.No)
		n := allocated(func() { _, err = rows.Next() })
		assert.EqualError(t, err, message)
		assert.Less(t, n, uint64(8<<20), "bytes allocated")
	}
	// Commas inside quotes are no cells: such a row is read like any other.
	rows, err := newCSV(strings.NewReader("phone,name\n+79001234567,\""+strings.Repeat(",\"\"", 500)+"\"\n"), charset{}, fieldsOf(nil))
	require.NoError(t, err)
	got := readAll(t, rows)
	require.Len(t, got, 1)
	assert.Nil(t, got[0].Errors)

	// A row within the bound is read whole.
	file := "phone,name\n+79001234567," + strings.Repeat("a", maxLine-100) + "\n"
	rows, err = newCSV(strings.NewReader(file), charset{}, fieldsOf(nil))
	require.NoError(t, err)
	got = readAll(t, rows)
	require.Len(t, got, 1)
	assert.Nil(t, got[0].Errors)
}

// Text that is not UTF-8 refuses its row, naming the column; a declared charset is converted.
func TestCSVTextIsUTF8OrADeclaredCharset(t *testing.T) {
	rows, err := newCSV(strings.NewReader("phone,name,socialLogin\n+79001234567,An\xffn,\xe9t\xe9\n+79001234568,Bob,ok\n"), charset{}, fieldsOf(nil))
	require.NoError(t, err)
	got := readAll(t, rows)
	require.Len(t, got, 2)
	assert.Equal(t, map[string]string{"name": ruleUTF8, "socialLogin": ruleUTF8}, got[0].Errors)
	assert.Nil(t, got[0].Body)
	assert.Contains(t, ruleUTF8, "iso-8859-1")
	assert.JSONEq(t, `{"phone":"+79001234568","name":"Bob","socialLogin":"ok"}`, string(got[1].Body))

	cp1251, err := charsetOf(FormatCSV, "Windows-1251")
	require.NoError(t, err)
	rows, err = newCSV(strings.NewReader("phone,name\n+79001234567,\xc0\xed\xed\xe0\n+79001234568,\x98\n"), cp1251, fieldsOf(nil))
	require.NoError(t, err)
	got = readAll(t, rows)
	require.Len(t, got, 2)
	assert.JSONEq(t, `{"phone":"+79001234567","name":"Анна"}`, string(got[0].Body))
	assert.Equal(t, map[string]string{"name": "must be windows-1251 text: it has a byte windows-1251 does not define"}, got[1].Errors)

	latin1, err := charsetOf(FormatCSV, "iso-8859-1")
	require.NoError(t, err)
	rows, err = newCSV(strings.NewReader("phone,name\n+79001234567,\xe9t\xe9\n"), latin1, fieldsOf(nil))
	require.NoError(t, err)
	got = readAll(t, rows)
	assert.JSONEq(t, `{"phone":"+79001234567","name":"été"}`, string(got[0].Body))

	for _, tc := range []struct{ format, param, message string }{
		{FormatCSV, "koi8-r", `Content-Type: charset "koi8-r" is not supported: a CSV file must be utf-8, iso-8859-1, windows-1251 or windows-1252`},
		{FormatNDJSON, "iso-8859-1", `Content-Type: charset "iso-8859-1": an NDJSON file must be UTF-8 (charset=utf-8, if any)`},
	} {
		_, err := charsetOf(tc.format, tc.param)
		assert.Equal(t, apperr.UnsupportedMediaType, apperr.KindOf(err))
		assert.EqualError(t, err, tc.message)
	}
	for _, utf := range []string{"", "UTF-8", "utf8"} {
		cs, err := charsetOf(FormatNDJSON, utf)
		require.NoError(t, err)
		assert.Nil(t, cs.enc)
	}
}
