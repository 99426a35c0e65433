package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"
	"ccplatform/tools/internal/userdir"
	"ccplatform/tools/internal/usertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testImportID = "0193b2c4-7d1e-7a6b-9c3d-2f1e0a9b8c7d"

// leadRequest is what one request to the fake lead service carried.
type leadRequest struct {
	method, path, orderID, status string
	orderCode                     string
	contentType, accept           string
	token, userID, accessGroup    string
	length                        int64
	body                          []byte
}

// reply is one answer of the fake lead service.
type reply struct {
	status int
	body   string
}

// fakeLead plays lead-api's import routes on a real HTTP server: it answers the upload, then the
// polls in turn (the last one again and again), and serves the refused rows as CSV. It records
// every request for the test to check. It stands in for lead-api to give the answers a real one
// gives only in trouble (a restart mid-import, a failed import); the import against the real
// lead-api is gateway/e2e/import_test.go (TestCcadminImportReportsAndSavesRefusedRows).
type fakeLead struct {
	upload  reply
	polls   []reply
	refused string
	// onPoll, when set, runs as each poll arrives, before it is answered.
	onPoll func()

	mu   sync.Mutex
	seen []leadRequest
	n    int
}

func (f *fakeLead) start(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/lead/import", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		answer(w, f.upload)
	})
	mux.HandleFunc("GET /v2/lead/import/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		if f.onPoll != nil {
			f.onPoll()
		}
		answer(w, f.nextPoll())
	})
	// The same server plays the order service, which names the order's code.
	mux.HandleFunc("GET /internal/orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		answer(w, reply{status: http.StatusOK, body: `{"success":true,"message":"","data":{"id":` + r.PathValue("id") +
			`,"code":"shop-` + r.PathValue("id") + `"}}`})
	})
	mux.HandleFunc("GET /v2/lead/import/{id}/rows", func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = io.WriteString(w, f.refused)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeLead) record(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, leadRequest{
		method: r.Method, path: r.URL.Path, orderID: r.URL.Query().Get("orderId"), status: r.URL.Query().Get("status"),
		orderCode:   r.URL.Query().Get("orderCode"),
		contentType: r.Header.Get("Content-Type"), accept: r.Header.Get("Accept"),
		token: r.Header.Get(web.HeaderInternalToken), userID: r.Header.Get(identity.HeaderUserID),
		accessGroup: r.Header.Get(identity.HeaderAccessGroup), length: r.ContentLength, body: body,
	})
}

func (f *fakeLead) nextPoll() reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.polls[min(f.n, len(f.polls)-1)]
	f.n++
	return p
}

func (f *fakeLead) requests() []leadRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]leadRequest(nil), f.seen...)
}

func answer(w http.ResponseWriter, r reply) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(r.status)
	_, _ = io.WriteString(w, r.body)
}

// importReply is an answer holding the import in state with its counters, as lead-api's View.
func importReply(t *testing.T, status int, state ccapi.ImportViewState, total, done, created, refused int) reply {
	t.Helper()
	b, err := json.Marshal(map[string]any{"success": true, "message": "", "data": map[string]any{
		"id": testImportID, "state": state, "format": "csv", "orderId": 42, "orderCode": nil,
		"rowsTotal": total, "rowsDone": done, "rowsCreated": created, "rowsRefused": refused, "error": nil,
		"createdAt": "2026-11-23T12:00:00+00:00", "startedAt": nil, "finishedAt": nil,
	}})
	require.NoError(t, err)
	return reply{status: status, body: string(b)}
}

// importAdmin is the admin the import acts for: the demo admin of the test's user service.
func importAdmin(t *testing.T) int64 {
	t.Helper()
	c := svcclient.New("user", userURL, usertest.Token, serviceTimeout)
	t.Cleanup(c.CloseIdleConnections)
	admin, err := userdir.New(c).ByEmail(context.Background(), "admin@demo.callcenter.local")
	require.NoError(t, err)
	return int64(admin.Id)
}

// ccadminImport runs ccadmin with LEAD_URL and ORDER_URL pointing at leadURL.
func ccadminImport(ctx context.Context, leadURL string, args ...string) (string, string, error) {
	cfg := testSettings()
	cfg.LeadURL, cfg.OrderURL = leadURL, leadURL
	var stdout, stderr bytes.Buffer
	err := run(ctx, cfg, args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// leadFile writes a file of ten lead rows named name into a fresh directory.
func leadFile(t *testing.T, name string) (string, []byte) {
	t.Helper()
	var b strings.Builder
	b.WriteString("phone,leadType\n")
	for i := range 10 {
		b.WriteString("+7900123450" + strconv.Itoa(i) + ",straight\n")
	}
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path, []byte(b.String())
}

// assertCaller checks that a request carried the internal token and acted for the admin.
func assertCaller(t *testing.T, admin int64, r leadRequest) {
	t.Helper()
	assert.Equal(t, usertest.Token, r.token, "%s %s: internal token", r.method, r.path)
	assert.Equal(t, strconv.FormatInt(admin, 10), r.userID, "%s %s: caller", r.method, r.path)
	assert.Equal(t, string(access.Admin), r.accessGroup, "%s %s: access group", r.method, r.path)
}

func TestImportUploadsFollowsAndSavesTheRefusedRows(t *testing.T) {
	admin := importAdmin(t)
	refusedCSV := "row,status,leadId,errors\n" +
		"3,refused,,\"{\"\"phone\"\":\"\"must be a phone number in E.164 format\"\"}\"\n" +
		"7,refused,,\"{\"\"leadType\"\":\"\"must be one of: straight, callback\"\"}\"\n"
	lead := &fakeLead{
		upload: importReply(t, http.StatusAccepted, ccapi.ImportQueued, 10, 0, 0, 0),
		polls: []reply{
			// lead-api restarting: the poll is tried again, not the command failed.
			{status: http.StatusServiceUnavailable, body: `{"success":false,"message":"the service is unavailable now","data":[]}`},
			importReply(t, http.StatusOK, ccapi.ImportRunning, 10, 4, 3, 1),
			importReply(t, http.StatusOK, ccapi.ImportDone, 10, 10, 8, 2),
		},
		refused: refusedCSV,
	}
	srv := lead.start(t)
	file, content := leadFile(t, "leads.csv")

	out, errOut, err := ccadminImport(context.Background(), srv.URL, "import", "--order", "42", file)
	require.NoError(t, err, errOut)

	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^import `+testImportID+`: 10 rows, 8 created, 2 refused in \d+(\.\d+)?m?s$`, lines[0])
	assert.Equal(t, "refused rows written to "+file+".refused.csv", lines[1])
	saved, err := os.ReadFile(file + ".refused.csv")
	require.NoError(t, err)
	assert.Equal(t, refusedCSV, string(saved))
	assert.Contains(t, errOut, "import "+testImportID+" running: 4 of 10 rows settled",
		"without a terminal, progress is written as lines")
	assert.NotContains(t, errOut, "\r", "without a terminal, no bar is drawn")

	seen := lead.requests()
	require.Len(t, seen, 5, "upload, three polls, refused rows")
	up := seen[0]
	assert.Equal(t, http.MethodPost, up.method)
	assert.Equal(t, "/v2/lead/import", up.path)
	assert.Equal(t, "42", up.orderID)
	assert.Equal(t, "shop-42", up.orderCode, "rows without a code take the order's, from the order service")
	assert.Equal(t, "text/csv", up.contentType)
	assert.Equal(t, int64(len(content)), up.length, "the file is sent with its length")
	assert.Equal(t, content, up.body)
	assertCaller(t, admin, up)
	for _, poll := range seen[1:4] {
		assert.Equal(t, http.MethodGet, poll.method)
		assert.Equal(t, "/v2/lead/import/"+testImportID, poll.path)
		assertCaller(t, admin, poll)
	}
	rows := seen[4]
	assert.Equal(t, http.MethodGet, rows.method)
	assert.Equal(t, "/v2/lead/import/"+testImportID+"/rows", rows.path)
	assert.Equal(t, "refused", rows.status)
	assert.Equal(t, "text/csv", rows.accept)
	assertCaller(t, admin, rows)
}

func TestImportContentTypeFollowsTheExtensionOrFormat(t *testing.T) {
	importAdmin(t)
	for _, tc := range []struct {
		name, file string
		flags      []string
		want       string
	}{
		{"csv", "leads.CSV", nil, "text/csv"},
		{"ndjson", "leads.ndjson", nil, "application/x-ndjson"},
		{"jsonl", "leads.jsonl", nil, "application/x-ndjson"},
		{"format over extension", "leads.txt", []string{"--format", "ndjson"}, "application/x-ndjson"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Done at once, nothing refused: no poll and no download.
			lead := &fakeLead{upload: importReply(t, http.StatusAccepted, ccapi.ImportDone, 10, 10, 10, 0)}
			srv := lead.start(t)
			file, _ := leadFile(t, tc.file)
			args := append([]string{"import", "--order", "42"}, tc.flags...)
			out, errOut, err := ccadminImport(context.Background(), srv.URL, append(args, file)...)
			require.NoError(t, err, errOut)
			assert.Regexp(t, `^import `+testImportID+`: 10 rows, 10 created, 0 refused in .+\n$`, out)
			seen := lead.requests()
			require.Len(t, seen, 1)
			assert.Equal(t, tc.want, seen[0].contentType)
			_, err = os.Stat(file + ".refused.csv")
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing refused, no file")
		})
	}
}

func TestImportRefusedPathFlagAfterTheFile(t *testing.T) {
	importAdmin(t)
	lead := &fakeLead{upload: importReply(t, http.StatusAccepted, ccapi.ImportDone, 10, 10, 9, 1), refused: "row,status,leadId,errors\n"}
	srv := lead.start(t)
	file, _ := leadFile(t, "leads.csv")
	target := filepath.Join(t.TempDir(), "bad.csv")
	out, errOut, err := ccadminImport(context.Background(), srv.URL, "import", "--order", "42", file, "--refused", target)
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "refused rows written to "+target+"\n")
	saved, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "row,status,leadId,errors\n", string(saved))
}

func TestImportOfAFileRefusedWithFieldErrorsFails(t *testing.T) {
	importAdmin(t)
	lead := &fakeLead{upload: reply{status: http.StatusBadRequest, body: `{"success":false,` +
		`"message":"header column 2: \"colour\" is not a field of a v2 lead create; orderId: must be an integer > 0",` +
		`"data":{"errors":{"header column 2":"\"colour\" is not a field of a v2 lead create","orderId":"must be an integer > 0"}}}`}}
	srv := lead.start(t)
	file, _ := leadFile(t, "leads.csv")

	out, _, err := ccadminImport(context.Background(), srv.URL, "import", "--order", "42", file)
	require.Error(t, err)
	assert.Empty(t, out, "nothing on stdout when the import fails")
	var ue cli.UsageError
	assert.False(t, errors.As(err, &ue), "a refused file is not a usage error: main exits 1")
	assert.Equal(t, apperr.Invalid, apperr.KindOf(err))
	assert.Equal(t, "import: lead service refused "+file+":\n"+
		"  header column 2: \"colour\" is not a field of a v2 lead create\n"+
		"  orderId: must be an integer > 0", err.Error(), "each field with its rule on a line")
	assert.Len(t, lead.requests(), 1, "no poll after a refused upload")
}

func TestImportThatFailsPrintsItsError(t *testing.T) {
	importAdmin(t)
	failed := importReply(t, http.StatusOK, ccapi.ImportFailed, 10, 4, 4, 0)
	failed.body = strings.Replace(failed.body, `"error":null`, `"error":"lead database unreachable for 10 minutes"`, 1)
	lead := &fakeLead{upload: importReply(t, http.StatusAccepted, ccapi.ImportQueued, 10, 0, 0, 0), polls: []reply{failed}}
	srv := lead.start(t)
	file, _ := leadFile(t, "leads.csv")

	out, _, err := ccadminImport(context.Background(), srv.URL, "import", "--order", "42", file)
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Equal(t, "import "+testImportID+" failed after 4 of 10 rows (4 created, 0 refused): lead database unreachable for 10 minutes", err.Error())
}

func TestImportStopsWaitingWhenCancelled(t *testing.T) {
	importAdmin(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lead := &fakeLead{
		upload: importReply(t, http.StatusAccepted, ccapi.ImportQueued, 10, 0, 0, 0),
		polls:  []reply{importReply(t, http.StatusOK, ccapi.ImportRunning, 10, 2, 2, 0)},
		onPoll: cancel, // Ctrl-C while the first poll is on its way
	}
	srv := lead.start(t)
	file, _ := leadFile(t, "leads.csv")

	start := time.Now()
	out, _, err := ccadminImport(ctx, srv.URL, "import", "--order", "42", file)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Empty(t, out)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "stopped waiting for import "+testImportID)
	assert.Contains(t, err.Error(), "the import goes on in the lead service")
}

func TestImportRefusesBeforeUploading(t *testing.T) {
	importAdmin(t)
	lead := &fakeLead{upload: importReply(t, http.StatusAccepted, ccapi.ImportDone, 1, 1, 1, 0)}
	srv := lead.start(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.csv")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	folder := filepath.Join(dir, "folder.csv")
	require.NoError(t, os.Mkdir(folder, 0o700))

	for name, tc := range map[string]struct {
		leadURL string
		file    string
		message string
	}{
		"missing file":  {srv.URL, filepath.Join(dir, "nope.csv"), "no such file or directory"},
		"empty file":    {srv.URL, empty, "is empty"},
		"a directory":   {srv.URL, folder, "is not a regular file"},
		"no lead url":   {"", empty, "LEAD_URL is empty"},
		"unknown types": {srv.URL, filepath.Join(dir, "leads.xlsx"), "give its format with --format csv|ndjson"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ccadminImport(context.Background(), tc.leadURL, "import", "--order", "42", tc.file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
		})
	}
	assert.Empty(t, lead.requests(), "nothing was sent")
}

func TestProgressBarsDrawOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	tty := progress{w: &buf, tty: true}
	bar := tty.bar(10, "import running")
	require.NoError(t, bar.Add(10))
	assert.Contains(t, buf.String(), "import running")
	assert.Contains(t, buf.String(), "100%")
	assert.True(t, strings.HasSuffix(buf.String(), "\n"), "a full bar ends its line")
	tty.line("not on a terminal")
	assert.NotContains(t, buf.String(), "not on a terminal")

	buf.Reset()
	log := progress{w: &buf, tty: false}
	bar = log.bar(10, "import running")
	require.NoError(t, bar.Add(10))
	endBar(bar, true)
	assert.Empty(t, buf.String(), "no bar in a log")
	log.line("import %s: %d rows", "x", 3)
	assert.Equal(t, "import x: 3 rows\n", buf.String())

	assert.False(t, progressOn(&buf).tty, "a buffer is no terminal")
}
