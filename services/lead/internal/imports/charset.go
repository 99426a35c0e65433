package imports

import (
	"io"
	"strings"

	"ccplatform/pkg/apperr"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// charsets are the charsets a CSV file may declare (Content-Type: text/csv; charset=...), beside
// UTF-8, the default: those spreadsheets still save in. Their text is converted to UTF-8 as the
// file is read; a byte the charset leaves undefined refuses its row, as invalid UTF-8 does.
var charsets = map[string]encoding.Encoding{
	"iso-8859-1":   charmap.ISO8859_1,
	"latin1":       charmap.ISO8859_1,
	"windows-1251": charmap.Windows1251,
	"cp1251":       charmap.Windows1251,
	"windows-1252": charmap.Windows1252,
	"cp1252":       charmap.Windows1252,
}

// charsetNames lists the charsets for the answers that name them.
const charsetNames = "utf-8, iso-8859-1, windows-1251 or windows-1252"

// charset is the text encoding of a file; the zero value is UTF-8.
type charset struct {
	name string
	enc  encoding.Encoding
}

// reader reads r as UTF-8.
func (cs charset) reader(r io.Reader) io.Reader {
	if cs.enc == nil {
		return r
	}
	return cs.enc.NewDecoder().Reader(r)
}

// charsetOf is the charset of a file of format whose Content-Type names param ("" when none). An
// NDJSON file is JSON, UTF-8 only (RFC 8259); a charset nobody converts is refused with 415
// naming it, rather than read as another's text.
func charsetOf(format, param string) (charset, error) {
	name := strings.ToLower(strings.TrimSpace(param))
	if name == "" || name == "utf-8" || name == "utf8" {
		return charset{}, nil
	}
	if format == FormatNDJSON {
		return charset{}, apperr.New(apperr.UnsupportedMediaType, "Content-Type: charset %q: an NDJSON file must be UTF-8 (charset=utf-8, if any)", param)
	}
	enc, ok := charsets[name]
	if !ok {
		return charset{}, apperr.New(apperr.UnsupportedMediaType, "Content-Type: charset %q is not supported: a CSV file must be %s", param, charsetNames)
	}
	return charset{name: name, enc: enc}, nil
}
