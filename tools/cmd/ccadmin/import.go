package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/clients/go/ccapi"
	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/svcclient"
	"ccplatform/pkg/web"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
)

// Timing of an import.
const (
	// importPoll is how often the import is read back while lead-worker settles its rows.
	importPoll = 500 * time.Millisecond
	// importTransfer bounds the upload and the download of the refused rows: lead-api gives a file
	// five minutes to arrive, and a 200 000-row result takes a while to stream too.
	importTransfer = 6 * time.Minute
	// importUnavailable is how many polls in a row may find lead-api unavailable (a restart, a
	// deploy) before ccadmin stops waiting; the import is safe in the lead database either way.
	importUnavailable = 20
	// importLineEvery spaces the progress lines written where there are no bars.
	importLineEvery = 10 * time.Second
)

// importCommand bulk-imports a CSV or NDJSON file of leads into an order through lead-api, as an
// admin: it uploads the file (POST /v2/lead/import), follows the import until lead-worker has
// settled every row, prints a summary to stdout and saves the refused rows, with their errors, as
// CSV. Progress goes to stderr.
func importCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("import")
	orderID := fs.Int64("order", 0, "id of the order of the rows that name none")
	format := fs.String("format", "", "csv or ndjson (default: by FILE's extension: .csv, .ndjson, .jsonl)")
	refused := fs.String("refused", "", "where the refused rows are written as CSV (default: FILE.refused.csv)")
	file, err := cli.ParseFile(fs, args)
	if err != nil {
		return err
	}
	if *orderID <= 0 {
		return cli.Usagef("import: --order must be an order id > 0")
	}
	contentType, err := importContentType(file, *format)
	if err != nil {
		return err
	}
	if e.cfg.LeadURL == "" {
		return errors.New("import: LEAD_URL is empty: imports go through the lead service")
	}
	if *refused == "" {
		*refused = file + ".refused.csv"
	}
	// A v2 create names its order's code too: rows without one take the order's, read from the
	// order service (without one, every row must carry its own).
	var code string
	if e.cfg.OrderURL != "" {
		o, err := fetchOrder(ctx, e.cfg.OrderURL, e.cfg.InternalToken, *orderID)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		code = o.Code
	}
	users, err := e.users("import")
	if err != nil {
		return err
	}
	admin, err := anAdmin(ctx, users)
	if err != nil {
		return err
	}
	im := newImporter(e, admin)
	defer im.close()

	start := time.Now()
	v, err := im.upload(ctx, file, contentType, *orderID, code)
	if err != nil {
		return err
	}
	if v, err = im.wait(ctx, v); err != nil {
		return err
	}
	if err := settled(v); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "import %s: %d rows, %d created, %d refused in %s\n",
		v.Id, v.RowsTotal, v.RowsCreated, v.RowsRefused, time.Since(start).Round(100*time.Millisecond))
	if v.RowsRefused == 0 {
		return nil
	}
	if err := im.saveRefused(ctx, v.Id, *refused); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "refused rows written to %s\n", *refused)
	return nil
}

// importContentType is the Content-Type the file is sent with: --format's when given, else its
// extension's. Anything else is refused before a byte is sent.
func importContentType(file, format string) (string, error) {
	if format == "" {
		switch strings.ToLower(filepath.Ext(file)) {
		case ".csv":
			format = "csv"
		case ".ndjson", ".jsonl":
			format = "ndjson"
		default:
			return "", cli.Usagef("import: %s is not .csv, .ndjson or .jsonl: give its format with --format csv|ndjson", file)
		}
	}
	switch format {
	case "csv":
		return "text/csv", nil
	case "ndjson":
		return "application/x-ndjson", nil
	}
	return "", cli.Usagef("import: --format must be csv or ndjson")
}

// importer talks to lead-api's import routes as one admin, who alone can read the import back.
type importer struct {
	base  string
	token string
	admin int64
	// files carries the raw bodies (the file, the refused rows) that svcclient, JSON only, cannot;
	// leads reads the import back.
	files    *http.Client
	leads    *svcclient.Client
	progress progress
}

func newImporter(e *env, admin int64) *importer {
	return &importer{
		base:     strings.TrimRight(e.cfg.LeadURL, "/"),
		token:    e.cfg.InternalToken,
		admin:    admin,
		files:    &http.Client{Timeout: importTransfer, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		leads:    svcclient.New("lead", e.cfg.LeadURL, e.cfg.InternalToken, serviceTimeout),
		progress: progressOn(e.stderr),
	}
}

func (im *importer) close() {
	im.files.CloseIdleConnections()
	im.leads.CloseIdleConnections()
}

// request is a request to lead-api with the headers svcclient sends: the internal token, and the
// admin as the caller.
func (im *importer) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, im.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("lead %s: %w", path, err)
	}
	req.Header.Set(web.HeaderInternalToken, im.token)
	req.Header.Set(identity.HeaderUserID, strconv.FormatInt(im.admin, 10))
	req.Header.Set(identity.HeaderAccessGroup, string(access.Admin))
	return req, nil
}

// do sends req; an unreachable lead service is Unavailable, as with svcclient.
func (im *importer) do(req *http.Request) (*http.Response, error) {
	resp, err := im.files.Do(req)
	if err != nil {
		return nil, apperr.Wrap(apperr.Unavailable, err, "lead service is unavailable")
	}
	return resp, nil
}

// upload streams file to lead-api, which stores every row before it answers 202 with the queued
// import. The file is never held in memory: it may be 64 MB.
func (im *importer) upload(ctx context.Context, file, contentType string, orderID int64, orderCode string) (ccapi.ImportView, error) {
	f, size, err := openUpload(file)
	if err != nil {
		return ccapi.ImportView{}, err
	}
	defer f.Close()
	bar := im.progress.bar(size, "upload", progressbar.OptionShowBytes(true))
	im.progress.line("uploading %s (%d bytes) into order %d", file, size, orderID)
	q := url.Values{"orderId": {strconv.FormatInt(orderID, 10)}}
	if orderCode != "" {
		q.Set("orderCode", orderCode)
	}
	path := "/v2/lead/import?" + q.Encode()
	req, err := im.request(ctx, http.MethodPost, path, countingReader{r: f, bar: bar})
	if err != nil {
		return ccapi.ImportView{}, err
	}
	// A known length is sent as Content-Length, so lead-api refuses an oversized file at once
	// instead of after 64 MB.
	req.ContentLength = size
	req.Header.Set("Content-Type", contentType)
	var v ccapi.ImportView
	resp, err := im.do(req)
	if err == nil {
		defer resp.Body.Close()
		err = decodeAnswer(resp, http.StatusAccepted, &v)
	}
	endBar(bar, err == nil)
	switch {
	case err == nil:
		return v, nil
	case ctx.Err() != nil:
		return ccapi.ImportView{}, fmt.Errorf("import: upload of %s cancelled: %w", file, ctx.Err())
	}
	return ccapi.ImportView{}, refusal(file, err)
}

// openUpload opens file with its size. The upload is sent with a length, so it must be a regular
// file; an empty one has not even the header row lead-api needs.
func openUpload(file string) (*os.File, int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, fmt.Errorf("import: %w", err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("import: %w", err)
	case !info.Mode().IsRegular():
		err = fmt.Errorf("import: %s is not a regular file", file)
	case info.Size() == 0:
		err = fmt.Errorf("import: %s is empty", file)
	}
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// countingReader feeds the bytes read through it to a bar. Unlike progressbar.Reader it leaves the
// bar alone when the transport closes the body, which it also does when an upload fails halfway.
type countingReader struct {
	r   io.Reader
	bar *progressbar.ProgressBar
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	_ = c.bar.Add(n) // a bar that cannot draw must not stop the upload
	return n, err
}

// refusal is the error of a failed upload. A file lead-api refused as invalid lists each field (a
// header column, the body, orderId) with its rule on a line of its own: what to fix in the file.
func refusal(file string, err error) error {
	e, ok := apperr.As(err)
	if !ok || len(e.Fields) == 0 {
		return fmt.Errorf("import: upload %s: %w", file, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "import: lead service refused %s:", file)
	for _, f := range slices.Sorted(maps.Keys(e.Fields)) {
		fmt.Fprintf(&b, "\n  %s: %s", f, e.Fields[f])
	}
	return &apperr.Error{Kind: e.Kind, Message: b.String(), Fields: e.Fields}
}

// envelope is the body of the lead service's JSON answers. It stays local: its data is kept raw
// until the status tells which generated type it holds (ccapi.ImportResult's view, or
// ccapi.ErrorEnvelope's union of [] and field errors), and an answer of an unexpected status is
// read the same way svcclient reads one.
type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// decodeAnswer decodes the data of resp's envelope into out (nil to drop it) when resp has status
// want; any other answer becomes the error it carries, kind, message and field errors kept, as
// svcclient does.
func decodeAnswer(resp *http.Response, want int, out any) error {
	var env envelope
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&env); err != nil {
		return apperr.Wrap(apperr.Unavailable, fmt.Errorf("status %d: %w", resp.StatusCode, err),
			"lead service gave an unreadable answer")
	}
	if resp.StatusCode != want || !env.Success {
		return answerError(resp.StatusCode, env)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("decode the lead service's answer: %w", err)
	}
	return nil
}

// answerError is the error a failed answer carries.
func answerError(status int, env envelope) error {
	if status >= 500 {
		return apperr.Wrap(apperr.Unavailable, fmt.Errorf("status %d: %s", status, env.Message), "lead service failed")
	}
	e := &apperr.Error{Kind: apperr.KindForStatus(status), Message: env.Message}
	var v web.ValidationData
	if json.Unmarshal(env.Data, &v) == nil && len(v.Errors) > 0 {
		e.Fields = v.Errors
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("lead service answered %d", status)
	}
	return e
}

// wait polls the import until lead-worker has settled every row, showing how far it got. Ctrl-C
// stops the waiting, not the import: that goes on in the lead service.
func (im *importer) wait(ctx context.Context, v ccapi.ImportView) (ccapi.ImportView, error) {
	rows := im.follow(v)
	defer func() { endBar(rows.bar, v.State == ccapi.ImportDone) }()
	tick := time.NewTicker(importPoll)
	defer tick.Stop()
	for unavailable := 0; v.State == ccapi.ImportQueued || v.State == ccapi.ImportRunning; {
		select {
		case <-ctx.Done():
			return v, im.stoppedWaiting(v, ctx.Err())
		case <-tick.C:
		}
		next, err := im.poll(ctx, v.Id)
		switch {
		case ctx.Err() != nil:
			return v, im.stoppedWaiting(v, ctx.Err())
		case apperr.KindOf(err) == apperr.Unavailable && unavailable < importUnavailable:
			unavailable++ // lead-api restarting: the import is safe in its database, ask again
			continue
		case err != nil:
			return v, fmt.Errorf("import %s: %w", v.Id, err)
		}
		v, unavailable = next, 0
		rows.show(v)
	}
	return v, nil
}

// poll reads the import back, as the admin who created it.
func (im *importer) poll(ctx context.Context, id uuid.UUID) (ccapi.ImportView, error) {
	var v ccapi.ImportView
	ctx = svcclient.WithCaller(ctx, im.admin, string(access.Admin))
	err := im.leads.Do(ctx, http.MethodGet, "/v2/lead/import/"+url.PathEscape(id.String()), nil, &v)
	return v, err
}

// stoppedWaiting is the error of a wait cut short by Ctrl-C: only ccadmin stopped.
func (im *importer) stoppedWaiting(v ccapi.ImportView, cause error) error {
	return fmt.Errorf("stopped waiting for import %s at %d of %d rows; the import goes on in the lead service "+
		"(GET /v2/lead/import/%s as user %d shows it): %w", v.Id, v.RowsDone, v.RowsTotal, v.Id, im.admin, cause)
}

// settled is nil for an import that is done, else what stopped it.
func settled(v ccapi.ImportView) error {
	switch v.State {
	case ccapi.ImportDone:
		return nil
	case ccapi.ImportFailed:
		reason := "no reason given"
		if v.Error != nil {
			reason = *v.Error
		}
		return fmt.Errorf("import %s failed after %d of %d rows (%d created, %d refused): %s",
			v.Id, v.RowsDone, v.RowsTotal, v.RowsCreated, v.RowsRefused, reason)
	}
	return fmt.Errorf("import %s is in an unknown state %q", v.Id, v.State)
}

// rowsProgress shows how many of an import's rows are settled: a bar on a terminal, elsewhere a
// line at each change of state and every importLineEvery.
type rowsProgress struct {
	progress
	bar    *progressbar.ProgressBar
	state  ccapi.ImportViewState
	logged time.Time
}

func (im *importer) follow(v ccapi.ImportView) *rowsProgress {
	r := &rowsProgress{progress: im.progress, bar: im.progress.bar(int64(v.RowsTotal), "import "+string(v.State),
		progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"))}
	r.show(v)
	return r
}

func (r *rowsProgress) show(v ccapi.ImportView) {
	// A full bar has ended its line: describing it again would draw it a second time.
	if v.State != r.state && !r.bar.IsFinished() {
		r.bar.Describe("import " + string(v.State))
	}
	_ = r.bar.Set64(int64(v.RowsDone))
	if v.State != r.state || time.Since(r.logged) >= importLineEvery {
		r.line("import %s %s: %d of %d rows settled", v.Id, v.State, v.RowsDone, v.RowsTotal)
		r.logged = time.Now()
	}
	r.state = v.State
}

// saveRefused streams the import's refused rows (row, status, leadId, errors) into path as CSV.
func (im *importer) saveRefused(ctx context.Context, id uuid.UUID, path string) error {
	req, err := im.request(ctx, http.MethodGet, "/v2/lead/import/"+url.PathEscape(id.String())+"/rows?status=refused", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/csv")
	resp, err := im.do(req)
	if err != nil {
		return fmt.Errorf("refused rows of import %s: %w", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("refused rows of import %s: %w", id, decodeAnswer(resp, http.StatusOK, nil))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/csv" {
		return fmt.Errorf("refused rows of import %s: the lead service answered %q, not text/csv", id, resp.Header.Get("Content-Type"))
	}
	if err := writeFile(path, resp.Body); err != nil {
		return fmt.Errorf("refused rows of import %s: %w", id, err)
	}
	return nil
}

// writeFile streams r into path through a temporary file renamed at the end, so that a download
// cut short (lead-api aborts the answer when its database fails midway) leaves no list that looks
// whole.
func writeFile(path string, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.part")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := io.Copy(tmp, r); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("download into %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
