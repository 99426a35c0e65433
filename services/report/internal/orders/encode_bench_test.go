package orders

import (
	"encoding/json"
	"testing"
	"time"

	"ccplatform/services/report/internal/bucket"
	"ccplatform/services/report/internal/period"
	"ccplatform/services/report/internal/statuses"
)

// A month of hours of one order built and encoded as the answer: by reflection, and as List.
func BenchmarkBuildAndEncodeAMonthOfHours(b *testing.B) {
	from := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p := period.Period{Unit: bucket.Hour, Loc: time.UTC, Starts: bucket.Hour.Intervals(from, from.AddDate(0, 0, 31), time.UTC)}
	var catalog []statuses.Status
	for id := int64(1); id <= 9; id++ {
		catalog = append(catalog, statuses.Status{ID: id})
	}
	var sums []Sums
	for i := range p.Len() {
		sums = append(sums, Sums{OrderID: 7, Interval: i, Calls: 6, Answered: 3, Handled: 2, Abandoned: 1, TalkSeconds: 500, LeadsCalled: 6})
	}
	// As gin's c.JSON wrote the answer before, and as the handler writes it now (web.OKEncoded
	// takes List's bytes as they are).
	encodings := map[string]func([]Row) ([]byte, error){
		"encoding-json": func(rows []Row) ([]byte, error) { return json.Marshal(map[string]any{"list": rows}) },
		"List":          func(rows []Row) ([]byte, error) { return List(rows).MarshalJSON() },
	}
	for name, encode := range encodings {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := encode(Build([]int64{7}, p, sums, nil, nil, catalog)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
