package orders

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written encoding is byte for byte what encoding/json writes for the same rows.
func TestListEncodesAsEncodingJSONDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floats := []float64{0, 1, 0.5, 0.3333, 12.25, 1e-7, 2.5e-9, 1e21, 3.4e22, 123456789.125, 0.0001}
	f := func() float64 { return floats[r.IntN(len(floats))] }
	var rows []Row
	for i := range 300 {
		row := Row{OrderID: r.Int64N(1 << 40), From: "2026-10-25T02:00:00+02:00", To: "2026-10-25T02:00:00+01:00",
			Calls: r.Int64N(1000), Answered: r.Int64N(1000), ContactRate: f(), Abandoned: -r.Int64N(3), AbandonRate: f(),
			TalkSeconds: r.Int64N(1 << 50), AvgHandleSeconds: f(), LeadsCalled: r.Int64N(100), Conversions: r.Int64N(9),
			CallsPerAgentHour: -f()}
		if i%7 != 0 {
			row.Statuses = map[string]int64{}
			for id := range r.IntN(12) {
				row.Statuses[strconv.Itoa(id+1)] = r.Int64N(50)
			}
		}
		rows = append(rows, row)
	}
	for _, rs := range [][]Row{rows, rows[:1], {}, nil} {
		want, err := json.Marshal(rs)
		require.NoError(t, err)
		got, err := json.Marshal(List(rs))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}
