package imports_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "lead_imports", func(e *servicetest.Env) { env = e })
}

var orderSeq, phoneSeq atomic.Int64

// newOrder is an order known to the order cache.
func newOrder() (int64, string) {
	id := 9000 + orderSeq.Add(1)
	code := fmt.Sprintf("imp-%d", id)
	env.Order(id, code)
	return id, code
}

func newPhone() string { return fmt.Sprintf("+7917%07d", 1000000+phoneSeq.Add(1)) }

func post(t *testing.T, contentType, query, body string) servicetest.Response {
	t.Helper()
	return env.Do(t, "POST", "/v2/lead/import/"+query, body, "Content-Type", contentType)
}

func view(t *testing.T, res servicetest.Response) imports.View {
	t.Helper()
	var v imports.View
	require.NoError(t, json.Unmarshal(res.Data, &v), "%s", res.Data)
	return v
}

// drain runs one runner until no import is left open.
func drain(t *testing.T) {
	t.Helper()
	r := imports.NewRunner(env.DB, env.Leads, zap.NewNop(), 100, 10*time.Millisecond)
	for range 10_000 {
		worked, err := r.Step(context.Background())
		require.NoError(t, err)
		if !worked {
			return
		}
	}
	t.Fatal("the runner never ran out of work")
}

type rowsPage struct {
	List  []imports.RowView `json:"list"`
	Total int               `json:"total"`
}

func TestCSVImportCreatesLeadsAndReportsEveryRefusedRow(t *testing.T) {
	orderID, code := newOrder()
	first, bad, other := newPhone(), "12", newPhone()
	file := "phone,leadType,name,priority,orderId\n" +
		first + ",straight,Ann,5,\n" +
		bad + ",straight,Bob,,\n" +
		first + ",selection,Ann again,,\n" + // a repeat within the file: linked to the first
		other + ",straight,Cy,high,\n" +
		other + ",,Dee,,\n" // no lead type (an unknown order is refused likewise: gateway/e2e)
	res := post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), file)
	require.Equal(t, http.StatusAccepted, res.Status, "%s %s", res.Message, res.Data)
	v := view(t, res)
	assert.Equal(t, imports.StateQueued, v.State)
	assert.Equal(t, 5, v.RowsTotal)
	assert.Equal(t, 0, v.RowsDone)

	drain(t)
	v = view(t, env.Do(t, "GET", "/v2/lead/import/"+v.ID+"/", nil))
	assert.Equal(t, imports.StateDone, v.State)
	assert.Equal(t, []int{5, 5, 2, 3}, []int{v.RowsTotal, v.RowsDone, v.RowsCreated, v.RowsRefused})
	require.NotNil(t, v.StartedAt)
	require.NotNil(t, v.FinishedAt)

	res = env.Do(t, "GET", "/v2/lead/import/"+v.ID+"/rows/?status=refused", nil)
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var refused rowsPage
	require.NoError(t, json.Unmarshal(res.Data, &refused), "%d %s %s", res.Status, res.Message, res.Data)
	require.Equal(t, 3, refused.Total)
	assert.Equal(t, 3, refused.List[0].Row, "rows are numbered by their line in the file")
	assert.Contains(t, refused.List[0].Errors["phone"], "must be a phone number")
	assert.Equal(t, 5, refused.List[1].Row)
	assert.NotEmpty(t, refused.List[1].Errors["priority"], "%v", refused.List[1].Errors)
	assert.Equal(t, 6, refused.List[2].Row)
	assert.Equal(t, "is required", refused.List[2].Errors["leadType"])

	res = env.Do(t, "GET", "/v2/lead/import/"+v.ID+"/rows/?status=created", nil)
	var created rowsPage
	require.NoError(t, json.Unmarshal(res.Data, &created), "%d %s %s", res.Status, res.Message, res.Data)
	require.Len(t, created.List, 2)
	firstID, repeatID := *created.List[0].LeadID, *created.List[1].LeadID
	assert.Equal(t, []int{2, 4}, []int{created.List[0].Row, created.List[1].Row})

	var repeat struct {
		IsSecondary    bool   `db:"is_secondary"`
		PreviousLeadID *int64 `db:"previous_lead_id"`
		CreateMethod   string `db:"create_method"`
		OrderID        int64  `db:"order_id"`
		CreatedBy      *int64 `db:"created_by"`
	}
	require.NoError(t, env.DB.Get(&repeat, `SELECT is_secondary, previous_lead_id, create_method, order_id, created_by
FROM leads WHERE id = $1`, repeatID))
	assert.True(t, repeat.IsSecondary)
	assert.Equal(t, &firstID, repeat.PreviousLeadID)
	assert.Equal(t, "api_v2_import", repeat.CreateMethod)
	assert.Equal(t, orderID, repeat.OrderID, "the query's orderId fills an empty cell")
	require.NotNil(t, repeat.CreatedBy)
	assert.Equal(t, servicetest.UserID, fmt.Sprint(*repeat.CreatedBy), "the importing caller creates the leads")
}

func TestRowResultsDownloadAsCSV(t *testing.T) {
	orderID, code := newOrder()
	file := fmt.Sprintf(`{"phone":%q,"leadType":"straight","orderId":%d,"orderCode":%q}`+"\n"+`{"phone":"1"}`+"\n",
		newPhone(), orderID, code)
	v := view(t, post(t, "application/x-ndjson; charset=utf-8", "", file))
	drain(t)
	rec := env.Raw(t, "GET", "/v2/lead/import/"+v.ID+"/rows/", nil, "Accept", "text/csv")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	records, err := csv.NewReader(rec.Body).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 3)
	assert.Equal(t, []string{"row", "status", "leadId", "errors"}, records[0])
	assert.Equal(t, []string{"1", "created"}, records[1][:2])
	assert.NotEmpty(t, records[1][2])
	assert.Equal(t, []string{"2", "refused", ""}, records[2][:3])
	var errs map[string]string
	require.NoError(t, json.Unmarshal([]byte(records[2][3]), &errs))
	assert.Contains(t, errs, "leadType")
}

func TestABadFileIsRefusedWholeAndStoresNothing(t *testing.T) {
	var before int
	require.NoError(t, env.DB.Get(&before, `SELECT count(*) FROM lead_imports`))
	for name, tc := range map[string]struct {
		contentType, query, body string
		status                   int
		field, rule              string
	}{
		"unknown column":   {"text/csv", "?orderId=1&orderCode=x", "phone,colour\n+79001234567,red\n", 400, "header column 2", "not a field"},
		"no order at all":  {"text/csv", "", "phone,leadType\n+79001234567,straight\n", 400, "orderId", "query parameter or a column"},
		"bad orderId":      {"text/csv", "?orderId=abc", "phone\n", 400, "orderId", "must be an integer > 0"},
		"empty ndjson":     {"application/x-ndjson", "", "\n\n", 400, "body", "at least one row"},
		"broken csv quote": {"text/csv", "?orderId=1&orderCode=x", "phone\n\"+7900\n", 400, "body", "RFC 4180"},
		"json body":        {"application/json", "", `{"phone":"+79001234567"}`, 415, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			res := post(t, tc.contentType, tc.query, tc.body)
			require.Equal(t, tc.status, res.Status, "%s %s", res.Message, res.Data)
			assert.False(t, res.Success)
			if tc.field != "" {
				assert.Contains(t, res.Errors()[tc.field], tc.rule)
			} else {
				assert.Equal(t, "Content-Type: must be text/csv or application/x-ndjson", res.Message)
			}
		})
	}
	var after int
	require.NoError(t, env.DB.Get(&after, `SELECT count(*) FROM lead_imports`))
	assert.Equal(t, before, after)
}

func TestTooManyRowsRollBackTheWholeImport(t *testing.T) {
	store := imports.NewStore(env.DB)
	imp := imports.Import{ID: env.JobIDs.New(7), Format: imports.FormatNDJSON, AccessGroup: "admin"}
	rows := &fixedRows{n: 3}
	_, err := store.Create(context.Background(), imp, rows, 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "body: must have at most 2 rows")
	_, err = store.Get(context.Background(), imp.ID)
	assert.ErrorContains(t, err, "does not exist")
}

type fixedRows struct{ n, i int }

func (f *fixedRows) Next() (imports.Row, error) {
	if f.i == f.n {
		return imports.Row{}, io.EOF
	}
	f.i++
	return imports.Row{No: f.i, Body: []byte(`{}`)}, nil
}

func TestImportOfAnotherUserIsNotFound(t *testing.T) {
	orderID, code := newOrder()
	v := view(t, post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), "phone,leadType\n"+newPhone()+",straight\n"))
	other := env.Client
	other.UserID = "8"
	for _, path := range []string{"/v2/lead/import/" + v.ID, "/v2/lead/import/" + v.ID + "/rows"} {
		res := other.Do(t, "GET", path, nil)
		assert.Equal(t, http.StatusNotFound, res.Status, path)
	}
	res := env.Do(t, "GET", "/v2/lead/import/not-a-uuid", nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
	assert.Equal(t, "must be a UUID", res.Errors()["importId"])
}

// Several workers share one import: every row ends settled exactly once, the counters add up.
func TestConcurrentRunnersSettleEveryRowOnce(t *testing.T) {
	orderID, code := newOrder()
	const n = 2000
	var b strings.Builder
	b.WriteString("phone,leadType\n")
	phones := make([]string, n/2) // every phone twice: the repeats link across chunks and workers
	for i := range phones {
		phones[i] = newPhone()
	}
	for i := range n {
		fmt.Fprintf(&b, "%s,straight\n", phones[i%len(phones)])
	}
	v := view(t, post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), b.String()))

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := imports.NewRunner(env.DB, env.Leads, zap.NewNop(), 50, 10*time.Millisecond)
			for {
				worked, err := r.Step(context.Background())
				if err != nil || !worked {
					assert.NoError(t, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	drain(t) // a worker may have stopped while another still held the last chunk

	v = view(t, env.Do(t, "GET", "/v2/lead/import/"+v.ID, nil))
	assert.Equal(t, imports.StateDone, v.State)
	assert.Equal(t, []int{n, n, n, 0}, []int{v.RowsTotal, v.RowsDone, v.RowsCreated, v.RowsRefused})
	var leads, linked, distinct int
	require.NoError(t, env.DB.QueryRow(`SELECT count(*), count(previous_lead_id), count(DISTINCT l.id)
FROM leads l JOIN lead_import_rows r ON r.lead_id = l.id WHERE r.import_id = $1`, v.ID).Scan(&leads, &linked, &distinct))
	assert.Equal(t, []int{n, n, n / 2}, []int{leads, distinct, linked}, "one lead per row, each repeat linked")
}

// lead-api's engine admits an import's 64 MiB; every other route still refuses what the gateway
// would (1 MiB).
func TestOtherRoutesKeepTheCommonBodyLimit(t *testing.T) {
	big := `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, path := range []string{"/v2/lead/create/", "/v2/lead/create-async/", "/v1/lead/create/", "/v2/dnc/create/"} {
		res := env.Do(t, "POST", path, big)
		assert.Equal(t, http.StatusRequestEntityTooLarge, res.Status, path)
		assert.Equal(t, "body: must be at most 1048576 bytes", res.Message, path)
	}
}

// A chunk the database refuses is written row by row: only the row refused even alone is refused,
// with the database's reason, and the import goes on to its end.
func TestARowTheDatabaseRefusesIsRefusedAlone(t *testing.T) {
	// Something the checks accept and the database refuses, standing for any such fault.
	_, err := env.DB.Exec(`ALTER TABLE leads ADD CONSTRAINT test_import_refused CHECK (name IS DISTINCT FROM 'refused')`)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := env.DB.Exec(`ALTER TABLE leads DROP CONSTRAINT test_import_refused`)
		assert.NoError(t, err)
	})
	orderID, code := newOrder()
	file := "phone,leadType,name\n" + newPhone() + ",straight,a\n" + newPhone() + ",straight,refused\n" +
		newPhone() + ",straight,c\n"
	v := view(t, post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), file))
	drain(t)

	v = view(t, env.Do(t, "GET", "/v2/lead/import/"+v.ID, nil))
	assert.Equal(t, imports.StateDone, v.State)
	assert.Equal(t, []int{3, 3, 2, 1}, []int{v.RowsTotal, v.RowsDone, v.RowsCreated, v.RowsRefused})
	var refused rowsPage
	res := env.Do(t, "GET", "/v2/lead/import/"+v.ID+"/rows?status=refused", nil)
	require.NoError(t, json.Unmarshal(res.Data, &refused), "%d %s %s", res.Status, res.Message, res.Data)
	require.Len(t, refused.List, 1)
	assert.Equal(t, 3, refused.List[0].Row, "the file's second row, on its third line")
	// The database's words go to the log, not to the caller.
	assert.Equal(t, map[string]string{"row": imports.RuleRefusedByDatabase}, refused.List[0].Errors)
}

// A row whose refusal names a member it sent holding U+0000 (which jsonb cannot store) is refused
// in the rules' words, not the database's.
func TestARefusalNamingANULMemberIsStored(t *testing.T) {
	orderID, code := newOrder()
	file := fmt.Sprintf(`{"phone":%q,"leadType":"straight","a\u0000":1,"a\u0000":2}`+"\n"+
		`{"phone":%q,"leadType":"straight","customValues":{"a\u0000":1,"a\u0000":2}}`+"\n", newPhone(), newPhone())
	v := view(t, post(t, "application/x-ndjson", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), file))
	drain(t)
	var refused rowsPage
	res := env.Do(t, "GET", "/v2/lead/import/"+v.ID+"/rows?status=refused", nil)
	require.NoError(t, json.Unmarshal(res.Data, &refused), "%d %s %s", res.Status, res.Message, res.Data)
	require.Len(t, refused.List, 2)
	assert.Equal(t, map[string]string{`a\u0000`: "must appear only once"}, refused.List[0].Errors)
	assert.Equal(t, map[string]string{`customValues.a\u0000`: "must appear only once"}, refused.List[1].Errors)
}

// A header of a million columns is answered by a short 400, not by a line per column.
func TestAWideHeaderIsAShortRefusal(t *testing.T) {
	for _, commas := range []int{1 << 20, 5 << 20} {
		rec := env.Raw(t, "POST", "/v2/lead/import/?orderId=1&orderCode=x", "phone,leadType,name"+strings.Repeat(",", commas)+"\n",
			"Content-Type", "text/csv")
		assert.Equal(t, http.StatusBadRequest, rec.Code)
		assert.Less(t, rec.Body.Len(), 1024, "%d commas", commas)
		assert.Contains(t, rec.Body.String(), `"body: the header row must have at most `)
	}
}

// CSV and NDJSON agree on text: what is not UTF-8 is refused by row (naming the CSV column), a
// declared charset of a CSV is converted, and one nobody converts is a 415 naming it.
func TestImportTextIsUTF8OrADeclaredCharset(t *testing.T) {
	orderID, code := newOrder()
	query := fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code)
	res := post(t, "text/csv", query, "phone,leadType,name\n"+newPhone()+",straight,An\xffa\n"+newPhone()+",straight,Ann\n")
	require.Equal(t, http.StatusAccepted, res.Status, res.Message)
	csvView := view(t, res)
	res = post(t, "application/x-ndjson", query, `{"phone":"`+newPhone()+`","leadType":"straight","name":"An`+"\xff"+`a"}`+"\n")
	require.Equal(t, http.StatusAccepted, res.Status, res.Message)
	ndjsonView := view(t, res)
	phone := newPhone()
	res = post(t, "text/csv; charset=windows-1251", query, "phone,leadType,name\n"+phone+",straight,\xc0\xed\xed\xe0\n")
	require.Equal(t, http.StatusAccepted, res.Status, res.Message)
	drain(t)

	var refused rowsPage
	require.NoError(t, json.Unmarshal(env.Do(t, "GET", "/v2/lead/import/"+csvView.ID+"/rows?status=refused", nil).Data, &refused))
	require.Len(t, refused.List, 1)
	assert.Equal(t, 2, refused.List[0].Row)
	assert.Equal(t, map[string]string{"name": "must be UTF-8 text (a CSV file in another charset names it in the Content-Type: utf-8, iso-8859-1, windows-1251 or windows-1252)"},
		refused.List[0].Errors)
	var refusedNDJSON rowsPage
	require.NoError(t, json.Unmarshal(env.Do(t, "GET", "/v2/lead/import/"+ndjsonView.ID+"/rows?status=refused", nil).Data, &refusedNDJSON))
	require.Len(t, refusedNDJSON.List, 1)
	assert.Equal(t, map[string]string{"row": "must be UTF-8 text"}, refusedNDJSON.List[0].Errors)
	var name string
	require.NoError(t, env.DB.Get(&name, `SELECT name FROM leads WHERE phone = $1`, phone))
	assert.Equal(t, "Анна", name)

	for contentType, message := range map[string]string{
		"text/csv; charset=koi8-r":             `Content-Type: charset "koi8-r" is not supported: a CSV file must be utf-8, iso-8859-1, windows-1251 or windows-1252`,
		"application/x-ndjson; charset=latin1": `Content-Type: charset "latin1": an NDJSON file must be UTF-8 (charset=utf-8, if any)`,
	} {
		res := post(t, contentType, query, "phone,leadType\n"+newPhone()+",straight\n")
		assert.Equal(t, http.StatusUnsupportedMediaType, res.Status, contentType)
		assert.Equal(t, message, res.Message)
	}
}

// When not even a row's refusal can be written, the import fails saying so in stable words; the
// database's go to the log.
func TestAnImportThatCannotRecordARefusalFailsInStableWords(t *testing.T) {
	orderID, code := newOrder()
	file := "phone,leadType,name\n" + newPhone() + ",straight,refused\n"
	v := view(t, post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), file))
	// The lead is refused, and so is the row's refusal, of this import only.
	for _, ddl := range []string{
		`ALTER TABLE leads ADD CONSTRAINT test_import_stopped CHECK (name IS DISTINCT FROM 'refused')`,
		fmt.Sprintf(`ALTER TABLE lead_import_rows ADD CONSTRAINT test_import_stopped CHECK (status <> 'refused' OR import_id <> '%s') NOT VALID`, v.ID),
	} {
		_, err := env.DB.Exec(ddl)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, table := range []string{"leads", "lead_import_rows"} {
			_, err := env.DB.Exec(`ALTER TABLE ` + table + ` DROP CONSTRAINT test_import_stopped`)
			assert.NoError(t, err)
		}
	})
	drain(t)
	v = view(t, env.Do(t, "GET", "/v2/lead/import/"+v.ID, nil))
	assert.Equal(t, imports.StateFailed, v.State)
	require.NotNil(t, v.Error)
	assert.Equal(t, imports.ErrorImportStopped, *v.Error)
}
