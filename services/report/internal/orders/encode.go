package orders

import (
	"math"
	"slices"
	"strconv"
)

// List is a report's rows as the answer writes them: the same JSON as encoding/json gives []Row
// (members in field order, statuses by id as sorted strings, numbers as it formats them), appended
// by hand. A month of hours is 744 rows of 14 members and a 9-status map each, and reflection and
// the map's sorted keys made its encoding most of the report's time outside SQL
// (docs/performance.md, "Reports").
type List []Row

// MarshalJSON writes the rows as a JSON array.
func (l List) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	out := make([]byte, 0, 64+len(l)*400)
	out = append(out, '[')
	keys := make([]string, 0, 16)
	for i, r := range l {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(append(out, `{"orderId":`...), r.OrderID, 10)
		out = append(append(append(out, `,"from":"`...), r.From...), '"')
		out = append(append(append(out, `,"to":"`...), r.To...), '"')
		out = strconv.AppendInt(append(out, `,"calls":`...), r.Calls, 10)
		out = strconv.AppendInt(append(out, `,"answered":`...), r.Answered, 10)
		out = appendFloat(append(out, `,"contactRate":`...), r.ContactRate)
		out = strconv.AppendInt(append(out, `,"abandoned":`...), r.Abandoned, 10)
		out = appendFloat(append(out, `,"abandonRate":`...), r.AbandonRate)
		out = strconv.AppendInt(append(out, `,"talkSeconds":`...), r.TalkSeconds, 10)
		out = appendFloat(append(out, `,"avgHandleSeconds":`...), r.AvgHandleSeconds)
		out = strconv.AppendInt(append(out, `,"leadsCalled":`...), r.LeadsCalled, 10)
		if r.Statuses == nil {
			out = append(out, `,"statuses":null`...)
		} else {
			keys = keys[:0]
			for k := range r.Statuses {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out = append(out, `,"statuses":{`...)
			for j, k := range keys {
				if j > 0 {
					out = append(out, ',')
				}
				out = append(strconv.AppendQuote(out, k), ':') // status ids: digits only
				out = strconv.AppendInt(out, r.Statuses[k], 10)
			}
			out = append(out, '}')
		}
		out = strconv.AppendInt(append(out, `,"conversions":`...), r.Conversions, 10)
		out = appendFloat(append(out, `,"callsPerAgentHour":`...), r.CallsPerAgentHour)
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

// appendFloat formats f as encoding/json does (exponent form only for the very small or large).
func appendFloat(out []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		out = strconv.AppendFloat(out, f, 'e', -1, 64)
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' { // e-07 as e-7
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
		return out
	}
	return strconv.AppendFloat(out, f, 'f', -1, 64)
}
