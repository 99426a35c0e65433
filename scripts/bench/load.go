package main

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"ccplatform/gateway/e2e/loadtest"
)

// Result is one measured run: how many operations succeeded in how long, and their latencies.
type Result struct {
	OK        int
	Errors    int
	FirstErr  error
	Elapsed   time.Duration
	latencies []time.Duration
}

// Rate is successful operations per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// Merge is r and o as one run (their operations and time added up).
func (r Result) Merge(o Result) Result {
	r.OK += o.OK
	r.Errors += o.Errors
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
	r.Elapsed += o.Elapsed
	r.latencies = append(slices.Clone(r.latencies), o.latencies...)
	return r
}

// Percentile is the q-quantile (0..1) of the latencies.
func (r Result) Percentile(q float64) time.Duration { return loadtest.Percentile(r.latencies, q) }

// Summary is the rate with p50/p99, as the report prints it (the rate alone for a run timed as a
// whole, without latencies of its own).
func (r Result) Summary() string {
	s := fmt.Sprintf("%8.0f/s", r.Rate())
	if len(r.latencies) > 0 {
		s += fmt.Sprintf(" p50 %6.2fms p99 %6.2fms", loadtest.Millis(r.Percentile(0.5)), loadtest.Millis(r.Percentile(0.99)))
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(" (%d errors, first: %v)", r.Errors, r.FirstErr)
	}
	return s
}

// Load runs op from concurrency workers until duration passes or count operations were started
// (0: no bound), and measures each.
func Load(concurrency int, duration time.Duration, count int, op func(i int) error) Result {
	var next atomic.Int64
	var mu sync.Mutex
	var res Result
	deadline := time.Now().Add(duration)
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			var lat []time.Duration
			ok, bad := 0, 0
			var first error
			for time.Now().Before(deadline) {
				i := int(next.Add(1)) - 1
				if count > 0 && i >= count {
					break
				}
				t := time.Now()
				err := op(i)
				if err != nil {
					bad++
					if first == nil {
						first = err
					}
					continue
				}
				ok++
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			res.OK += ok
			res.Errors += bad
			if res.FirstErr == nil {
				res.FirstErr = first
			}
			res.latencies = append(res.latencies, lat...)
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}
