package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/clients/go/ccapi"
)

// Figure (6), bulk import: a CSV of ImportRows valid rows is uploaded through the gateway
// (POST /v2/lead/import, as a client would send it); lead-api stores every row before it answers
// 202 (the upload's latency is printed), then lead-worker turns the rows into leads. The import's
// rate is its rows over its own server timestamps, started_at to finished_at, read from
// lead_imports at microsecond precision (the route answers them to the second, too coarse for a
// span of seconds). Both are now() of a chunk's transaction, i.e. its start: the span runs from
// the first chunk's start to the last chunk's, so it leaves out the last chunk's own time (one
// chunk of IMPORT_CHUNK rows, 500 by default: 0.5% of 100,000 rows, in the import's favour). It
// excludes lead-worker's idle poll (IMPORT_IDLE) and the bench's polling, which the "202 → done"
// line includes. The baseline is figure (3)'s drain rate of the same run (jobs are leads too,
// written by the same lead-worker into the same table). Then a file just under the route's 64 MiB
// limit is uploaded while lead-api's memory is sampled from /proc.

// importMaxBody is lead-api's imports.MaxBody and the gateway's limit of the route (copied: the
// bench cannot import a service's internal package).
const importMaxBody = 64 << 20

// The memory file: bigImportRows rows filled to bigImportBytes with a long sourceComment, and the
// most lead-api may hold meanwhile.
const (
	bigImportRows  = 100_000
	bigImportBytes = importMaxBody - importMaxBody/128 // 63.5 MiB
	rssLimit       = 100 << 20
)

// storedImport is the import's row as lead-worker left it.
type storedImport struct {
	State       string     `db:"state"`
	RowsTotal   int        `db:"rows_total"`
	RowsCreated int        `db:"rows_created"`
	RowsRefused int        `db:"rows_refused"`
	StartedAt   *time.Time `db:"started_at"`
	FinishedAt  *time.Time `db:"finished_at"`
}

func (b *bench) imports(ctx context.Context) error {
	if b.drained.OK == 0 {
		// run() selects the async phase with this one; this is only a guard.
		return errors.New("import: figure (3) did not run, so there is no drain rate to compare with")
	}
	fmt.Fprintf(b.out, "(6) bulk import: %d-row CSV through the gateway, rows/s from startedAt to finishedAt vs (3)'s drain rate\n", b.cfg.ImportRows)
	body := b.importCSV(b.cfg.ImportRows, 0)
	up, latency, at, err := b.upload(ctx, body)
	if err != nil {
		return err
	}
	cpu0, err := b.cpuNow()
	if err != nil {
		return err
	}
	profiled := b.profileWorker(ctx)
	plan, err := b.claimPlan(ctx, up.Id.String())
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "    upload: %d rows, %.1f MiB, 202 after %.2fs (%.0f rows/s stored by lead-api)\n",
		up.RowsTotal, mib(len(body)), latency.Seconds(), float64(up.RowsTotal)/latency.Seconds())
	done, observed, seen, err := b.waitImport(ctx, up.Id.String(), at, 10*time.Minute)
	if err != nil {
		return err
	}
	cpu1, err := b.cpuNow()
	if err != nil {
		return err
	}
	if err := profiled(); err != nil {
		return err
	}
	st, err := b.storedImport(ctx, up.Id.String(), b.cfg.ImportRows)
	if err != nil {
		return err
	}
	span := st.FinishedAt.Sub(*st.StartedAt)
	platform := Result{OK: st.RowsTotal, Elapsed: span}
	fmt.Fprintf(b.out, "    import %s: %d created, %d refused; started_at → finished_at %.2fs (route: %s → %s); 202 → done seen by polling %.2fs\n",
		up.Id.String(), st.RowsCreated, st.RowsRefused, span.Seconds(), instant(done.StartedAt), instant(done.FinishedAt), observed.Seconds())
	fmt.Fprintf(b.out, "    import %.0f rows/s; (3) drain %.0f jobs/s (%d jobs, %.1fs)\n",
		platform.Rate(), b.drained.Rate(), b.drained.OK, b.drained.Elapsed.Seconds())
	fmt.Fprintf(b.out, "    by quarter of the rows (route polls): %s\n", quarters(seen, st.RowsTotal))
	fmt.Fprintf(b.out, "    202 → done, %s\n", cpu0.perItem(cpu1, st.RowsTotal, observed))
	fmt.Fprintf(b.out, "    EXPLAIN of lead-worker's claim for this import, planned right after the 202:\n      %s\n", strings.Join(plan, "\n      "))
	b.add(fmt.Sprintf("(6) import rows/s (%d rows)", st.RowsTotal), platform, b.drained,
		platform.Rate()/b.drained.Rate(), "≥ 0.80", 0.80)
	b.rows[len(b.rows)-1].baseline = fmt.Sprintf("%8.0f/s (3) drain, %d jobs", b.drained.Rate(), b.drained.OK)
	return b.importMemory(ctx)
}

// importMemory uploads a file just under the route's limit while it samples lead-api's (and the
// gateway's) resident memory, then waits until lead-worker has settled it so that no backlog is
// left for the phases after this one.
func (b *bench) importMemory(ctx context.Context) error {
	body := b.importCSV(bigImportRows, bigImportBytes)
	fmt.Fprintf(b.out, "    memory: %d-row CSV of %d bytes (%.1f MiB; the limit is %d), lead-api's RSS from /proc every 5 ms\n",
		bigImportRows, len(body), mib(len(body)), importMaxBody)
	api, gw := b.stack.PID("lead-api"), b.stack.PID("gateway")
	// Writing 5 to clear_refs resets VmHWM to the current RSS, so that the peak after the upload is
	// this upload's and not an earlier phase's.
	hwmReset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", api), []byte("5"), 0) == nil
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", gw), []byte("5"), 0)
	before, err := procMemory(api)
	if err != nil {
		return err
	}
	gwBefore, err := procMemory(gw)
	if err != nil {
		return err
	}
	samples := sampleRSS(5*time.Millisecond, api, gw)
	up, latency, at, err := b.upload(ctx, body)
	if err != nil {
		samples.stop()
		return err
	}
	time.Sleep(2 * time.Second)
	peaks := samples.stop()
	after, err := procMemory(api)
	if err != nil {
		return err
	}
	gwAfter, err := procMemory(gw)
	if err != nil {
		return err
	}
	peak := max(peaks[api], after.hwm)
	hwmNote := "VmHWM reset before the upload"
	if !hwmReset {
		// VmHWM then counts every earlier phase: only the samples are this upload's.
		peak, hwmNote = peaks[api], "VmHWM could not be reset: sampled peak only"
	}
	fmt.Fprintf(b.out, "    upload: %d rows, 202 after %.2fs; lead-api RSS before %.1f MiB, sampled peak %.1f MiB, VmHWM %.1f MiB, 2 s after the 202 %.1f MiB (%s)\n",
		up.RowsTotal, latency.Seconds(), mib(before.rss), mib(peaks[api]), mib(after.hwm), mib(after.rss), hwmNote)
	fmt.Fprintf(b.out, "    gateway RSS before %.1f MiB, sampled peak %.1f MiB, VmHWM %.1f MiB, after %.1f MiB\n",
		mib(gwBefore.rss), mib(peaks[gw]), mib(gwAfter.hwm), mib(gwAfter.rss))
	b.rows = append(b.rows, row{
		name:     fmt.Sprintf("(6a) lead-api peak RSS, %.1f MiB file", mib(len(body))),
		platform: fmt.Sprintf("peak %.1f MiB", mib(peak)),
		baseline: fmt.Sprintf("before the upload %.1f MiB", mib(before.rss)),
		ratio:    float64(peak) / float64(before.rss),
		target:   "< 100 MiB", pass: peak < rssLimit,
	})

	_, observed, _, err := b.waitImport(ctx, up.Id.String(), at, 10*time.Minute)
	if err != nil {
		return err
	}
	st, err := b.storedImport(ctx, up.Id.String(), bigImportRows)
	if err != nil {
		return err
	}
	span := st.FinishedAt.Sub(*st.StartedAt)
	fmt.Fprintf(b.out, "    that import settled by lead-worker (no target): %d rows at %.0f rows/s (started_at → finished_at %.2fs; 202 → done %.2fs)\n",
		st.RowsTotal, float64(st.RowsTotal)/span.Seconds(), span.Seconds(), observed.Seconds())
	return nil
}

// profileWorker starts a CPU profile of lead-worker (-import-profile; lead-worker then serves
// PPROF_ADDR) and returns the function that waits for it and writes it out; without the flag both
// do nothing.
func (b *bench) profileWorker(ctx context.Context) func() error {
	if b.cfg.ImportProfile == "" {
		return func() error { return nil }
	}
	return b.profileCPU(ctx, "lead-worker", b.workerPprof, b.cfg.ImportProfileFor, b.cfg.ImportProfile, "the import's first")
}

// profileCPU starts a CPU profile of process (its PPROF_ADDR addr) for d and returns the function
// that waits for it and writes it to file; what says what it covers, in the report.
func (b *bench) profileCPU(ctx context.Context, process, addr string, d time.Duration, file, what string) func() error {
	errc := make(chan error, 1)
	go func() {
		u := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, max(int(d.Seconds()), 1))
		req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
		if err != nil {
			errc <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			errc <- fmt.Errorf("%s profile: %w", process, err)
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
		}
		if err == nil {
			err = os.WriteFile(file, raw, 0o644)
		}
		if err != nil {
			err = fmt.Errorf("%s profile: %w", process, err)
		}
		errc <- err
	}()
	return func() error {
		err := <-errc
		if err == nil {
			fmt.Fprintf(b.out, "    %s CPU profile of %s %s: %s\n", process, what, d, file)
		}
		return err
	}
}

// importCSV is a file of rows valid rows for the bench's order, each its own phone. With size > 0
// the sourceComment column is as long as it takes for the file to be at most size bytes.
func (b *bench) importCSV(rows, size int) []byte {
	const header = "leadType,phone,name,sourceComment\n"
	// "straight," + 11-digit phone + ",Bench client," + comment + "\n"
	const fixed = len("straight,") + 11 + len(",Bench client,") + 1
	comment := "bench"
	if size > 0 {
		comment = strings.Repeat("x", (size-len(header))/rows-fixed)
	}
	var buf bytes.Buffer
	buf.Grow(len(header) + rows*(fixed+len(comment)))
	buf.WriteString(header)
	for range rows {
		buf.WriteString("straight,")
		buf.WriteString(b.phone())
		buf.WriteString(",Bench client,")
		buf.WriteString(comment)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// upload posts a CSV to the import route through the gateway and returns the 202's import, the
// time the answer took (lead-api reads and stores every row before it answers) and when it came.
func (b *bench) upload(ctx context.Context, body []byte) (ccapi.ImportView, time.Duration, time.Time, error) {
	q := url.Values{}
	q.Set("orderId", strconv.FormatInt(b.order, 10))
	q.Set("orderCode", b.code)
	req, err := http.NewRequestWithContext(ctx, "POST", b.stack.BaseURL+"/v2/lead/import?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return ccapi.ImportView{}, 0, time.Time{}, err
	}
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("X-Api-Key", b.stack.APIKey)
	// The route allows an upload 5 minutes; the ordinary client's 30 s is for small requests.
	client := &http.Client{Timeout: 6 * time.Minute}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return ccapi.ImportView{}, 0, time.Time{}, fmt.Errorf("upload: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	at := time.Now()
	if err != nil {
		return ccapi.ImportView{}, 0, at, fmt.Errorf("upload: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusAccepted {
		return ccapi.ImportView{}, 0, at, fmt.Errorf("upload: status %d: %.300s", resp.StatusCode, raw)
	}
	var env struct {
		Data ccapi.ImportView `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return ccapi.ImportView{}, 0, at, fmt.Errorf("upload: answer: %w", err)
	}
	return env.Data, at.Sub(start), at, nil
}

// progress is when the route first showed at least rows settled (since the 202).
type progress struct {
	at   time.Duration
	rows int
}

// waitImport polls the import through the gateway until it is done, and returns it with the time
// from since (the 202) until done was seen (polling granularity and lead-worker's idle poll
// included) and the rows done it saw on the way.
func (b *bench) waitImport(ctx context.Context, id string, since time.Time, limit time.Duration) (ccapi.ImportView, time.Duration, []progress, error) {
	var seen []progress
	for time.Since(since) < limit {
		var v ccapi.ImportView
		if err := b.api.Do(ctx, "GET", "/v2/lead/import/"+id, nil, &v); err != nil {
			return ccapi.ImportView{}, 0, nil, err
		}
		if len(seen) == 0 || v.RowsDone > seen[len(seen)-1].rows {
			seen = append(seen, progress{time.Since(since), v.RowsDone})
		}
		switch v.State {
		case ccapi.ImportDone:
			return v, time.Since(since), seen, nil
		case ccapi.ImportFailed:
			return ccapi.ImportView{}, 0, nil, fmt.Errorf("import %s failed: %s", id, deref(v.Error))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ccapi.ImportView{}, 0, nil, fmt.Errorf("import %s not done in %s", id, limit)
}

// quarters is the rate of each quarter of an import's rows as the polls saw them settle, timed
// from the first poll that saw any (lead-worker's idle poll is no part of the rate): a rate that
// falls from quarter to quarter means each chunk costs more than the one before.
func quarters(seen []progress, total int) string {
	start := slices.IndexFunc(seen, func(p progress) bool { return p.rows > 0 })
	if start < 0 {
		return "-"
	}
	prev := seen[start]
	var out []string
	for q := 1; q <= 4; q++ {
		for _, p := range seen[start:] {
			if p.rows >= total*q/4 && p.rows > prev.rows {
				out = append(out, fmt.Sprintf("to %d%% %.0f/s", q*25, float64(p.rows-prev.rows)/(p.at-prev.at).Seconds()))
				prev = p
				break
			}
		}
	}
	return strings.Join(out, ", ")
}

// claimStatement is the claim of services/lead/internal/imports/runner.go (claim), copied by hand
// (the bench cannot import a service's internal package): keep the two in step.
const claimStatement = `SELECT row_no, body FROM lead_import_rows WHERE import_id = $1 AND status = 'pending'
ORDER BY row_no LIMIT $2 FOR UPDATE SKIP LOCKED`

// claimPlan is the plan PostgreSQL makes of a chunk's claim for an import (EXPLAIN only: nothing
// runs, no row is locked), with the statistics it has at the time. Its cost per chunk depends on
// it: an index scan in row order reads one chunk, a bitmap scan and a sort read every pending row
// of the import.
func (b *bench) claimPlan(ctx context.Context, id string) ([]string, error) {
	var plan []string
	if err := b.leads.SelectContext(ctx, &plan, `EXPLAIN `+claimStatement, id, 500); err != nil {
		return nil, fmt.Errorf("explain the import claim: %w", err)
	}
	return plan, nil
}

// storedImport reads the import's counters and timestamps from the database, and checks that
// every one of want rows became a lead (a refused row would make the rate mean something else).
func (b *bench) storedImport(ctx context.Context, id string, want int) (storedImport, error) {
	var st storedImport
	const q = `SELECT state, rows_total, rows_created, rows_refused, started_at, finished_at FROM lead_imports WHERE id = $1`
	if err := b.leads.GetContext(ctx, &st, q, id); err != nil {
		return st, fmt.Errorf("read import %s: %w", id, err)
	}
	if st.StartedAt == nil || st.FinishedAt == nil {
		return st, fmt.Errorf("import %s is %s without started_at/finished_at", id, st.State)
	}
	if st.RowsTotal != want || st.RowsCreated != want {
		var why []string
		const refused = `SELECT row_no || ': ' || errors::text FROM lead_import_rows WHERE import_id = $1 AND status = 'refused' ORDER BY row_no LIMIT 3`
		_ = b.leads.SelectContext(ctx, &why, refused, id)
		return st, fmt.Errorf("import %s: %d rows, %d created, %d refused (want %d created; first refusals: %s)",
			id, st.RowsTotal, st.RowsCreated, st.RowsRefused, want, strings.Join(why, "; "))
	}
	return st, nil
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// instant is t as the API writes it, or "-".
func instant(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
