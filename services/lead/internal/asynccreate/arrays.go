package asynccreate

import (
	"database/sql/driver"
	"strconv"
	"strings"

	"github.com/lib/pq"
)

func pqStrings(s []string) pq.StringArray { return pq.StringArray(s) }

// nullArray is a PostgreSQL array literal whose nil elements are NULL (pq's own arrays cannot
// hold NULL strings or numbers).
type nullArray []*string

func (a nullArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		if v == nil {
			b.WriteString("NULL")
			continue
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(*v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

func pqNullStrings(s []*string) nullArray { return nullArray(s) }

func pqNullInts(s []*int64) nullArray {
	out := make(nullArray, len(s))
	for i, v := range s {
		if v != nil {
			t := strconv.FormatInt(*v, 10)
			out[i] = &t
		}
	}
	return out
}
