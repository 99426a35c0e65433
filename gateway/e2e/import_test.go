package e2e

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importView is the data of the import routes.
type importView struct {
	ID          string  `json:"id"`
	State       string  `json:"state"`
	RowsTotal   int     `json:"rowsTotal"`
	RowsDone    int     `json:"rowsDone"`
	RowsCreated int     `json:"rowsCreated"`
	RowsRefused int     `json:"rowsRefused"`
	Error       *string `json:"error"`
}

// startImport uploads a file and returns the queued import.
func startImport(t *testing.T, contentType, query, body string, opts ...Option) importView {
	t.Helper()
	opts = append([]Option{WithHeader("Content-Type", contentType)}, opts...)
	r := stack.Call(t, http.MethodPost, "/v2/lead/import/"+query, body, opts...)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	var v importView
	require.NoError(t, json.Unmarshal(r.Env.Data, &v))
	require.Len(t, v.ID, 36)
	return v
}

// waitImport polls an import until it is no longer queued or running.
func waitImport(t *testing.T, id string, within time.Duration, opts ...Option) importView {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := stack.Call(t, http.MethodGet, "/v2/lead/import/"+id+"/", nil, opts...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var v importView
		require.NoError(t, json.Unmarshal(r.Env.Data, &v))
		if v.State != "queued" && v.State != "running" {
			return v
		}
		require.True(t, time.Now().Before(deadline), "import %s still %s after %s: %+v", id, v.State, within, v)
		time.Sleep(200 * time.Millisecond)
	}
}

// A client imports into its own order; rows naming another client's order, an order that does not
// exist or a bad phone are refused by row with the create's own errors, the rest created.
func TestBulkImportChecksEveryRowAsTheCallersCreate(t *testing.T) {
	clientA := newMember(t, "client.a@import.e2e", "client")
	clientB := newMember(t, "client.b@import.e2e", "client")
	orderA := createOrder(t, minimalOrder("Import of A"), WithKey(clientA.key))
	orderB := createOrder(t, minimalOrder("Import of B"), WithKey(clientB.key))
	codeA, codeB := orderDetail(t, orderA)["code"].(string), orderDetail(t, orderB)["code"].(string)

	file := "phone,leadType,name,orderId,orderCode\n" +
		newPhone() + ",straight,Ann,,\n" +
		newPhone() + ",selection,Bob,,\n" +
		fmt.Sprintf("%s,straight,Cy,%d,%s\n", newPhone(), orderB, codeB) +
		newPhone() + ",straight,Dee,999999999,nope\n" +
		"12,straight,Eve,,\n" +
		newPhone() + ",straight,Fay,,\n"
	v := startImport(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderA, codeA), file, WithKey(clientA.key))
	assert.Equal(t, "queued", v.State)
	assert.Equal(t, 6, v.RowsTotal)

	v = waitImport(t, v.ID, 30*time.Second, WithKey(clientA.key))
	assert.Equal(t, "done", v.State)
	assert.Equal(t, []int{6, 6, 3, 3}, []int{v.RowsTotal, v.RowsDone, v.RowsCreated, v.RowsRefused})

	r := stack.Call(t, http.MethodGet, "/v2/lead/import/"+v.ID+"/rows/?status=refused", nil, WithKey(clientA.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var refused struct {
		List []struct {
			Row    int               `json:"row"`
			Errors map[string]string `json:"errors"`
		} `json:"list"`
		Total int `json:"total"`
	}
	require.NoError(t, json.Unmarshal(r.Env.Data, &refused))
	require.Equal(t, 3, refused.Total)
	assert.Equal(t, 4, refused.List[0].Row)
	assert.Equal(t, "no order has id "+strconv.FormatInt(orderB, 10), refused.List[0].Errors["orderId"],
		"another client's order is refused like a missing one")
	assert.Equal(t, 5, refused.List[1].Row)
	assert.Equal(t, "no order has id 999999999", refused.List[1].Errors["orderId"])
	assert.Equal(t, 6, refused.List[2].Row)
	assert.Contains(t, refused.List[2].Errors["phone"], "must be a phone number")

	// The created leads are the client's, in its order, made by the import.
	total, ids := page(t, clientA.key, "/v2/lead/?orderIds[]="+strconv.FormatInt(orderA, 10))
	assert.Equal(t, 3, total)
	for _, id := range ids {
		assert.Equal(t, "api_v2_import", leadDetail(t, id)["createMethod"])
	}

	// Another client cannot see the import at all.
	for _, path := range []string{"/v2/lead/import/" + v.ID + "/", "/v2/lead/import/" + v.ID + "/rows/"} {
		assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, path, nil, WithKey(clientB.key)).Status, path)
	}
}

// The import route has its own body limit: a file far above the 1 MiB of every other route goes
// through the gateway, streamed; and the row results download as CSV.
func TestBulkImportTakesFilesAboveTheCommonBodyLimit(t *testing.T) {
	orderID, code := leadOrder(t, "Large import")
	comment := strings.Repeat("c", 60_000)
	var b strings.Builder
	const rows = 40 // 40 × 60 KB: about 2.4 MB
	for range rows {
		line, _ := json.Marshal(map[string]any{"phone": newPhone(), "leadType": "straight", "sourceComment": comment})
		b.Write(line)
		b.WriteByte('\n')
	}
	require.Greater(t, b.Len(), 2<<20)
	v := startImport(t, "application/x-ndjson", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), b.String())
	v = waitImport(t, v.ID, 30*time.Second)
	assert.Equal(t, []int{rows, rows, 0}, []int{v.RowsTotal, v.RowsCreated, v.RowsRefused})

	records := stack.CSV(t, "/v2/lead/import/"+v.ID+"/rows/")
	require.Len(t, records, rows+1)
	assert.Equal(t, []string{"row", "status", "leadId", "errors"}, records[0])
	for _, rec := range records[1:] {
		assert.Equal(t, "created", rec[1])
	}
}

// A file the import cannot read is refused whole, at once, through the gateway too.
func TestBulkImportRefusesAnUnreadableFile(t *testing.T) {
	r := stack.Call(t, http.MethodPost, "/v2/lead/import/?orderId=1&orderCode=x", "phone,colour\n+79161234567,red\n",
		WithHeader("Content-Type", "text/csv"))
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, `"colour" is not a field of a v2 lead create`, r.Errors(t)["header column 2"])

	r = stack.Call(t, http.MethodPost, "/v2/lead/import/", `{"phone":"+79161234567"}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, r.Status, "%s", r.Body)
}

// ccadmin import drives a real import end to end: upload, progress, summary, refused rows saved.
func TestCcadminImportReportsAndSavesRefusedRows(t *testing.T) {
	orderID, _ := leadOrder(t, "ccadmin import")
	dir := t.TempDir()
	file := filepath.Join(dir, "leads.csv")
	content := "phone,leadType,name\n" + newPhone() + ",straight,Ann\n12,straight,Bob\n" + newPhone() + ",selection,Cy\n"
	require.NoError(t, os.WriteFile(file, []byte(content), 0o600))

	out, err := stack.CCAdmin("import", "--order", strconv.FormatInt(orderID, 10), file)
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^import [0-9a-f-]{36}: 3 rows, 2 created, 1 refused in `, lines[0])
	assert.Equal(t, "refused rows written to "+file+".refused.csv", lines[1])
	saved, err := os.ReadFile(file + ".refused.csv")
	require.NoError(t, err)
	records, err := csv.NewReader(strings.NewReader(string(saved))).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 2, "%s", saved)
	assert.Equal(t, []string{"3", "refused", ""}, records[1][:3], "the bad phone's line")
	assert.Contains(t, records[1][3], `"phone"`)

	total, _ := page(t, stack.APIKey, "/v2/lead/?orderIds[]="+strconv.FormatInt(orderID, 10))
	assert.Equal(t, 2, total)
}

// Uploads that trickle in and then stall cannot take lead-api from everyone else: each key has at
// most two uploads in progress (the rest are answered 429 at once), no upload holds a database
// connection while its file arrives, and a stalled one is answered 408 after lead-api's pause
// bound (IMPORT_STALL_TIMEOUT, 3 s in this stack). Lead details answer meanwhile.
func TestSlowUploadsLeaveLeadAPIAnswering(t *testing.T) {
	orderID, code := leadOrder(t, "Slow uploads")
	leadID := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
	var keys []string
	for i := range 4 {
		keys = append(keys, newMember(t, fmt.Sprintf("uploader.%d@slow.e2e", i), "admin").key)
	}
	addr := strings.TrimPrefix(stack.BaseURL, "http://")
	type answer struct {
		status     int
		retryAfter string
		message    string
	}
	const perKey = 10
	answers := make(chan answer, perKey*len(keys))
	stop := make(chan struct{})
	for _, key := range keys {
		for range perKey {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			t.Cleanup(func() { _ = conn.Close() })
			// A length past what the gateway once held in memory: the body streams to lead-api.
			_, err = fmt.Fprintf(conn, "POST /v2/lead/import/?orderId=%d&orderCode=%s HTTP/1.1\r\nHost: gw\r\nX-Api-Key: %s\r\n"+
				"Content-Type: text/csv\r\nContent-Length: %d\r\n\r\nphone,leadType\n", orderID, code, key, 16<<20)
			require.NoError(t, err)
			go func() { // a byte a second, until the test stops it
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Second):
						if _, err := conn.Write([]byte("7")); err != nil {
							return
						}
					}
				}
			}()
			go func() {
				_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					answers <- answer{message: err.Error()}
					return
				}
				defer res.Body.Close()
				var env struct{ Message string }
				_ = json.NewDecoder(res.Body).Decode(&env)
				answers <- answer{res.StatusCode, res.Header.Get("Retry-After"), env.Message}
			}()
		}
	}
	// Past its two, each key's uploads are refused at once (the wait is bounded all the same).
	var refused []answer
	wait := time.After(10 * time.Second)
collect:
	for len(refused) < perKey*len(keys)-2*len(keys) {
		select {
		case a := <-answers:
			refused = append(refused, a)
		case <-wait:
			break collect
		}
	}
	// Eight uploads trickle on: lead-api answers everyone else at once.
	for range 5 {
		start := time.Now()
		r := stack.Call(t, http.MethodGet, "/v2/lead/detail/"+strconv.FormatInt(leadID, 10)+"/", nil)
		assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Less(t, time.Since(start), 2*time.Second)
		time.Sleep(200 * time.Millisecond) // spread over the trickle
	}
	require.Len(t, refused, perKey*len(keys)-2*len(keys))
	for _, a := range refused {
		assert.Equal(t, http.StatusTooManyRequests, a.status, "%+v", a)
		assert.Equal(t, "5", a.retryAfter)
		assert.Contains(t, a.message, "uploads: ")
	}
	close(stop)
	for range 2 * len(keys) {
		a := <-answers
		assert.Equal(t, http.StatusRequestTimeout, a.status, "%+v", a)
		assert.Equal(t, "body: nothing arrived for 3s; send the file without pausing", a.message)
	}
	// Their places are free again.
	v := startImport(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), "phone,leadType\n"+newPhone()+",straight\n",
		WithKey(keys[0]))
	assert.Equal(t, "queued", v.State)
}
