package imports

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/lead"
)

// Row is one data row of a file: Body is the row as a v2 create body (a JSON object), or Errors
// says why the row cannot even be read (it is refused as it is stored).
type Row struct {
	No     int
	Body   []byte
	Errors map[string]string
}

// Rows reads a file one row at a time. Next returns io.EOF after the last row; any other error
// is the file's own (its header, its size) and refuses the whole import.
type Rows interface {
	Next() (Row, error)
}

// maxLine bounds one NDJSON line or CSV row, as the create route bounds its body.
const maxLine = 1 << 20

// maxHeaderBytes bounds a CSV header row: maxColumns names of a few dozen bytes each fit many
// times over.
const maxHeaderBytes = 64 << 10

// maxColumns bounds a CSV header: every v2 create field once, and a column for each custom value
// one lead may carry. The check comes before any column is looked at, so a header of a million
// columns costs no more than one of maxColumns+1.
var maxColumns = len(fieldKinds) + customfield.MaxValues

// kind is how a CSV cell becomes a JSON value.
type kind int

const (
	asString  kind = iota
	asInteger      // a JSON number when the cell is an integer, else a string the rules refuse
	asTime         // planningCallDateTime: a number when all digits (Unix seconds), else a string
	asNumber       // a custom number field
	asBoolean      // a custom boolean field
)

// fieldKinds are the v2 create fields by name, read from lead.Input's JSON names so that a
// field added there is importable at once.
var fieldKinds = func() map[string]kind {
	out := map[string]kind{}
	t := reflect.TypeOf(lead.Input{})
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "customValues":
			continue // customValues.<id> columns
		case name == "planningCallDateTime":
			out[name] = asTime
		case f.Type == reflect.TypeOf(optional.Value[int64]{}):
			out[name] = asInteger
		default:
			out[name] = asString
		}
	}
	return out
}()

// customPrefix starts the column of a custom field: customValues.<field id>.
const customPrefix = "customValues."

// column is one CSV column: a v2 field, or a custom field (custom > 0).
type column struct {
	name   string
	custom int64
	kind   kind
}

// headerColumns reads a CSV header into its columns, checking every one: a v2 field name or
// customValues.<id>, each at most once.
func headerColumns(header []string) ([]column, error) {
	fe := apperr.FieldErrors{}
	seen := map[string]bool{}
	cols := make([]column, len(header))
	for i, raw := range header {
		name := strings.TrimSpace(raw)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a spreadsheet's byte-order mark
		}
		where := fmt.Sprintf("header column %d", i+1)
		switch {
		case seen[name]:
			fe.Add(where, fmt.Sprintf("%q appears twice", name))
		case strings.HasPrefix(name, customPrefix):
			id, err := strconv.ParseInt(strings.TrimPrefix(name, customPrefix), 10, 64)
			if err != nil || id <= 0 {
				fe.Add(where, fmt.Sprintf("%q: a custom field column must be customValues.<field id>", name))
			}
			cols[i] = column{name: name, custom: id}
		default:
			k, ok := fieldKinds[name]
			if !ok {
				fe.Add(where, fmt.Sprintf("%q is not a field of a v2 lead create", name))
			}
			cols[i] = column{name: name, kind: k}
		}
		seen[name] = true
	}
	return cols, fe.Err()
}

// customIDs are the custom fields a header names.
func customIDs(cols []column) []int64 {
	var ids []int64
	for _, c := range cols {
		if c.custom > 0 {
			ids = append(ids, c.custom)
		}
	}
	return ids
}

// customKind is how a custom field's cells are written: numbers and booleans as JSON literals
// (when they read as such), everything else as strings, as the field's type expects.
func customKind(f customfield.Field, known bool) kind {
	if !known {
		return asString // the rules refuse the unknown field whatever its value
	}
	switch f.Type {
	case customfield.TypeInteger:
		return asInteger
	case customfield.TypeNumber:
		return asNumber
	case customfield.TypeBoolean:
		return asBoolean
	}
	return asString
}

// csvRows reads a CSV file whose header row names v2 fields.
type csvRows struct {
	r    *csv.Reader
	in   *rowBound
	cs   charset
	cols []column
	buf  bytes.Buffer
}

// newCSV reads the header of r, text in cs; fields are the custom fields it may name (unknown
// ones are written as strings and refused by the rules like any unknown field).
func newCSV(r io.Reader, cs charset, fields func([]int64) (map[int64]customfield.Field, error)) (*csvRows, error) {
	in := &rowBound{r: cs.reader(r), limit: maxHeaderBytes + csvReadAhead}
	cr := csv.NewReader(in)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // a short or long row is that row's mistake, not the file's
	header, err := cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, apperr.Field("body", "must have a header row and at least one data row")
	case errors.Is(err, errRowTooLong):
		return nil, apperr.Field("body", fmt.Sprintf("the header row must be at most %d bytes", maxHeaderBytes))
	case err != nil && !errors.Is(err, errTooManyCells):
		return nil, fileError(err)
	case err != nil || len(header) > maxColumns:
		return nil, apperr.Field("body", fmt.Sprintf("the header row must have at most %d columns (the v2 create fields and %d custom fields)",
			maxColumns, customfield.MaxValues))
	}
	cols, err := headerColumns(header)
	if err != nil {
		return nil, err
	}
	known, err := fields(customIDs(cols))
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		if c.custom > 0 {
			f, ok := known[c.custom]
			cols[i].kind = customKind(f, ok)
		}
	}
	return &csvRows{r: cr, in: in, cs: cs, cols: cols}, nil
}

// csvReadAhead is how far encoding/csv reads past the end of a row (its bufio.Reader's size).
const csvReadAhead = 4096

// rowBound's refusals of a row past its bounds.
var (
	errRowTooLong   = errors.New("row too long")
	errTooManyCells = errors.New("row of too many cells")
)

// rowBound hands encoding/csv the file within bounds: csv.Reader holds a whole row, and every one
// of its cells, in memory, so a row of megabytes of commas would cost gigabytes. Before each row
// the byte limit moves to the row's start plus maxLine and the reader's read-ahead, so a row within
// maxLine is never cut and one far beyond it is refused as it is read; and a line is cut at its
// maxColumns-th separator outside quotes (RFC 4180 quoting), no valid row having as many cells.
type rowBound struct {
	r      io.Reader
	n      int64
	limit  int64
	commas int  // separators so far in the current line, outside quotes
	quoted bool // inside a quoted cell
	err    error
}

func (b *rowBound) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.n >= b.limit:
		return 0, errRowTooLong
	}
	if room := b.limit - b.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	for i, c := range p[:n] {
		switch {
		case c == '"':
			b.quoted = !b.quoted // a doubled quote inside a quoted cell toggles twice
		case b.quoted:
		case c == '\n':
			b.commas = 0
		case c == ',':
			if b.commas++; b.commas >= maxColumns {
				b.err, n = errTooManyCells, i
			}
		}
		if b.err != nil {
			break
		}
	}
	b.n += int64(n)
	return n, err
}

// names reports whether the header has a column name.
func (c *csvRows) names(name string) bool {
	for _, col := range c.cols {
		if col.name == name {
			return true
		}
	}
	return false
}

// Next reads the next data row; an empty cell is a field not sent.
func (c *csvRows) Next() (Row, error) {
	rec, err := c.read()
	for err == nil && len(rec) == 1 && strings.TrimSpace(rec[0]) == "" && len(c.cols) > 1 {
		// A blank line (often the last one) is no row at all.
		rec, err = c.read()
	}
	switch {
	case errors.Is(err, io.EOF):
		return Row{}, io.EOF
	case errors.Is(err, errRowTooLong), errors.Is(err, errTooManyCells):
		// Where the row ends is not known without reading it: the file is refused.
		line, _ := c.r.FieldPos(0)
		rule := fmt.Sprintf("a row must be at most %d bytes", maxLine)
		if errors.Is(err, errTooManyCells) {
			rule = fmt.Sprintf("a row must have at most %d cells", maxColumns)
		}
		return Row{}, apperr.Field("body", fmt.Sprintf("line %d: %s", line, rule))
	case err != nil:
		// A broken quote spoils the rest of the file: no reader can find the next row reliably.
		return Row{}, fileError(err)
	}
	line, _ := c.r.FieldPos(0)
	if len(rec) != len(c.cols) {
		return Row{No: line, Errors: map[string]string{"row": fmt.Sprintf("must have %d cells like the header, not %d", len(c.cols), len(rec))}}, nil
	}
	if errs := c.invalidText(rec); errs != nil {
		return Row{No: line, Errors: errs}, nil
	}
	c.buf.Reset()
	c.buf.WriteByte('{')
	n := c.members(rec, false)
	// customValues only when a custom cell is filled: the object is written, then taken back.
	mark := c.buf.Len()
	if n > 0 {
		c.buf.WriteByte(',')
	}
	c.buf.WriteString(`"customValues":{`)
	if c.members(rec, true) == 0 {
		c.buf.Truncate(mark)
	} else {
		c.buf.WriteByte('}')
	}
	c.buf.WriteByte('}')
	return Row{No: line, Body: bytes.Clone(c.buf.Bytes())}, nil
}

// read reads the next record, at most maxLine bytes from where the last one ended.
func (c *csvRows) read() ([]string, error) {
	c.in.limit = c.r.InputOffset() + maxLine + csvReadAhead
	return c.r.Read()
}

// invalidText names the cells of rec that are not text, by their column: invalid UTF-8 would
// otherwise reach the lead as U+FFFD in place of what the file meant (text in another charset
// says so in the Content-Type, which converts it), and so would a byte a declared charset leaves
// undefined (its decoder's U+FFFD).
func (c *csvRows) invalidText(rec []string) map[string]string {
	var errs map[string]string
	for i, cell := range rec {
		rule := ""
		switch {
		case !utf8.ValidString(cell):
			rule = ruleUTF8
		case c.cs.enc != nil && strings.ContainsRune(cell, utf8.RuneError):
			rule = fmt.Sprintf("must be %s text: it has a byte %s does not define", c.cs.name, c.cs.name)
		default:
			continue
		}
		if errs == nil {
			errs = map[string]string{}
		}
		errs[c.cols[i].name] = rule
	}
	return errs
}

// ruleUTF8 is the rule a CSV cell that is not UTF-8 breaks.
const ruleUTF8 = "must be UTF-8 text (a CSV file in another charset names it in the Content-Type: " + charsetNames + ")"

// members writes the filled cells of rec as the members of a JSON object: those of the v2 field
// columns, or with custom those of the custom-field columns, named by field id. It returns how many
// it wrote.
func (c *csvRows) members(rec []string, custom bool) int {
	n := 0
	for i, cell := range rec {
		col := c.cols[i]
		if cell == "" || (col.custom > 0) != custom {
			continue
		}
		if n > 0 {
			c.buf.WriteByte(',')
		}
		n++
		name := col.name
		if custom {
			name = strconv.FormatInt(col.custom, 10)
		}
		writeString(&c.buf, name)
		c.buf.WriteByte(':')
		writeValue(&c.buf, col.kind, cell)
	}
	return n
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always encodes (its UTF-8 is checked already)
	b.Write(q)
}

// writeValue writes a cell as the JSON value of its kind: a literal when the cell reads as one,
// else the cell as a string, which the field's rule then refuses by name.
func writeValue(b *bytes.Buffer, k kind, cell string) {
	v := strings.TrimSpace(cell)
	switch k {
	case asInteger, asTime:
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			b.WriteString(v)
			return
		}
	case asNumber:
		if f, err := strconv.ParseFloat(v, 64); err == nil && json.Valid([]byte(v)) && f == f {
			b.WriteString(v)
			return
		}
	case asBoolean:
		if v == "true" || v == "false" {
			b.WriteString(v)
			return
		}
	}
	writeString(b, cell)
}

// ndjsonRows reads one v2 create body per line; blank lines are skipped, rows are numbered by
// line.
type ndjsonRows struct {
	r    *bufio.Reader
	line int
	long []byte
}

func newNDJSON(r io.Reader) *ndjsonRows {
	return &ndjsonRows{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next reads the next non-blank line.
func (n *ndjsonRows) Next() (Row, error) {
	for {
		line, tooLong, err := n.readLine()
		if err != nil {
			return Row{}, err
		}
		n.line++
		if tooLong {
			return Row{No: n.line, Errors: map[string]string{"row": fmt.Sprintf("must be at most %d bytes", maxLine)}}, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		switch {
		case !utf8.Valid(line):
			return Row{No: n.line, Errors: map[string]string{"row": "must be UTF-8 text"}}, nil
		case line[0] != '{' || !json.Valid(line):
			return Row{No: n.line, Errors: map[string]string{"row": "must be one JSON object (a v2 create body)"}}, nil
		}
		return Row{No: n.line, Body: bytes.Clone(line)}, nil
	}
}

// readLine reads up to the next newline, keeping at most maxLine bytes; a longer line is read to
// its end and reported as too long. io.EOF comes only when nothing is left.
func (n *ndjsonRows) readLine() (line []byte, tooLong bool, err error) {
	n.long = n.long[:0]
	for {
		chunk, err := n.r.ReadSlice('\n')
		if len(n.long)+len(chunk) > maxLine+1 {
			tooLong = true
		} else {
			n.long = append(n.long, chunk...)
		}
		switch {
		case err == nil:
			return n.long, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(n.long) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			return n.long, tooLong, nil
		default:
			return nil, false, fileError(err)
		}
	}
}

// fileError is the answer to a file that cannot be read as a whole: a broken CSV is 400 naming
// the line; a body past the route's limit, too slow or cut off is answered as web.BodyReadError.
func fileError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return apperr.Field("body", fmt.Sprintf("must be CSV (RFC 4180): line %d, column %d: %v", pe.Line, pe.Column, pe.Err))
	}
	return web.BodyReadError(err)
}
