package imports

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
