//go:build fault || cluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/db"

	"github.com/stretchr/testify/require"
)

// Bulk imports under SIGKILL (the import scenarios of TestProcessKills): the rows of an accepted
// import each end created or refused exactly once, whichever process dies when.
const (
	importKillRows = 30_000
	// every importBadEvery-th row has a phone the rules refuse
	importBadEvery = 10
	importScenario = 6 // killPhone's scenario number
)

// importFile is a CSV of n rows with distinct phones of scenario, every importBadEvery-th invalid.
func importFile(scenario, n int) string {
	var b strings.Builder
	b.WriteString("phone,leadType\n")
	for i := range n {
		if i%importBadEvery == importBadEvery-1 {
			b.WriteString("12,straight\n")
			continue
		}
		fmt.Fprintf(&b, "+%s,straight\n", killPhone(scenario, i))
	}
	return b.String()
}

// checkImport waits for the import to end and checks its rows against the file: every valid row
// created with one lead, every invalid one refused, nothing pending; it prints the accounting line.
func checkImport(t *testing.T, label, id string, orderID int64, scenario, n int) {
	t.Helper()
	v := waitImport(t, id, 3*time.Minute)
	valid := n - n/importBadEvery
	conn, err := db.Open(context.Background(), stack.DatabaseURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	var leads, distinctLeads, pending int
	require.NoError(t, conn.QueryRow(`SELECT count(lead_id), count(DISTINCT lead_id), count(*) FILTER (WHERE status = 'pending')
FROM lead_import_rows WHERE import_id = $1`, id).Scan(&leads, &distinctLeads, &pending))
	byPhone := leadsByPhone(t, orderID, scenario, n)
	created, duplicated := 0, 0
	for _, ids := range byPhone {
		created++
		duplicated += len(ids) - 1
	}
	line := fmt.Sprintf("%s: accepted=%d created=%d lost=%d duplicated=%d", label, valid, created, valid-created, duplicated)
	fmt.Println(line)
	fmt.Printf("%s: import %s %s, rows %d, created %d, refused %d, pending %d\n", label, id, v.State, v.RowsTotal,
		v.RowsCreated, v.RowsRefused, pending)
	if v.State != "done" || v.RowsTotal != n || v.RowsCreated != valid || v.RowsRefused != n-valid || pending != 0 ||
		leads != valid || distinctLeads != valid || created != valid || duplicated != 0 {
		t.Fatal(line)
	}
}

// testImportWorkerKill: lead-worker is killed while it works through an import and started again;
// the import resumes from its last committed chunk.
func testImportWorkerKill(t *testing.T) {
	orderID, code := leadOrder(t, "Fault import lead-worker SIGKILL")
	v := startImport(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), importFile(importScenario, importKillRows))
	deadline := time.Now().Add(time.Minute)
	var atKill importView
	for {
		atKill = waitProgress(t, v.ID)
		if atKill.RowsDone >= importKillRows/4 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the import did not start: %+v", atKill)
		time.Sleep(20 * time.Millisecond)
	}
	stack.Stop("lead-worker", syscall.SIGKILL)
	require.Less(t, atKill.RowsDone, importKillRows, "the kill must land mid-import")
	t.Logf("lead-worker killed with %d of %d rows settled", atKill.RowsDone, importKillRows)
	require.NoError(t, stack.Start("lead-worker"))
	checkImport(t, "lead-worker SIGKILL mid-import", v.ID, orderID, importScenario, importKillRows)
}

// waitProgress is the import's state now.
func waitProgress(t *testing.T, id string) importView {
	t.Helper()
	r := stack.Call(t, http.MethodGet, "/v2/lead/import/"+id+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var v importView
	require.NoError(t, json.Unmarshal(r.Env.Data, &v))
	return v
}

// testImportAPIKill: lead-api is killed while a file streams in. The import was not accepted, and
// nothing of it is stored; the same file sent again after the restart makes each lead once.
func testImportAPIKill(t *testing.T) {
	orderID, code := leadOrder(t, "Fault import lead-api SIGKILL")
	const n = importKillRows / 3
	const scenario = importScenario + 1
	file := importFile(scenario, n)
	query := fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code)
	conn, err := db.Open(context.Background(), stack.DatabaseURL, "leads", 2)
	require.NoError(t, err)
	defer conn.Close()
	countImports := func() (imports, rows int) {
		require.NoError(t, conn.QueryRow(`SELECT (SELECT count(*) FROM lead_imports), (SELECT count(*) FROM lead_import_rows)`).Scan(&imports, &rows))
		return imports, rows
	}
	importsBefore, rowsBefore := countImports()

	// The body streams through a pipe: half of it, then the kill, then the rest. The checked client
	// would read the whole body before sending it, so this request goes out unchecked.
	pr, pw := io.Pipe()
	half := strings.Index(file[len(file)/2:], "\n") + len(file)/2 + 1
	killed := make(chan struct{})
	go func() {
		_, _ = io.WriteString(pw, file[:half])
		time.Sleep(300 * time.Millisecond) // let the rows reach lead-api's transaction
		stack.Stop("lead-api", syscall.SIGKILL)
		close(killed)
		_, err := io.WriteString(pw, file[half:])
		pw.CloseWithError(err)
	}()
	ctx, cancel := context.WithTimeout(forTest(context.Background(), t), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, stack.BaseURL+"/v2/lead/import/"+query, pr)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", stack.APIKey)
	req.Header.Set("Content-Type", "text/csv")
	res, err := (&http.Client{}).Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		require.NotEqual(t, http.StatusAccepted, res.StatusCode, "an import cut by the kill must not be accepted")
		t.Logf("lead-api SIGKILL mid-upload: the gateway answered %d", res.StatusCode)
	} else {
		t.Logf("lead-api SIGKILL mid-upload: the request failed: %v", err)
	}
	<-killed
	importsAfter, rowsAfter := countImports()
	require.Equal(t, []int{importsBefore, rowsBefore}, []int{importsAfter, rowsAfter}, "a cut upload stores nothing")

	require.NoError(t, stack.Start("lead-api"))
	v := startImport(t, "text/csv", query, file)
	checkImport(t, "lead-api SIGKILL mid-upload", v.ID, orderID, scenario, n)
}
