// Package imports is bulk lead import (POST /v2/lead/import). lead-api reads the uploaded file
// (CSV or NDJSON) as a stream and stores every row, as a v2 create body, in one transaction before
// it answers 202; lead-worker's Runner then puts the pending rows through the rules of a v2 create
// by the importing caller, a chunk per transaction that also records each row's outcome and the
// import's counters. A row is therefore created or refused exactly once, whichever process is
// killed when, and an import resumes where its last committed chunk ended.
package imports
