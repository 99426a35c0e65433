package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
func (r Result) Percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// Summary is the rate with p50/p99, as the report prints it (the rate alone for a run timed as a
// whole, without latencies of its own).
func (r Result) Summary() string {
	s := fmt.Sprintf("%8.0f/s", r.Rate())
	if len(r.latencies) > 0 {
		s += fmt.Sprintf(" p50 %6.2fms p99 %6.2fms", ms(r.Percentile(0.5)), ms(r.Percentile(0.99)))
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(" (%d errors, first: %v)", r.Errors, r.FirstErr)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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

// Client sends JSON requests and reads the envelope's data.
type Client struct {
	HTTP    *http.Client
	BaseURL string
	Headers map[string]string
}

// NewClient keeps enough idle connections for concurrency workers.
func NewClient(baseURL string, concurrency int, headers map[string]string) *Client {
	tr := &http.Transport{MaxIdleConns: concurrency * 2, MaxIdleConnsPerHost: concurrency * 2, IdleConnTimeout: time.Minute}
	return &Client{HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}, BaseURL: baseURL, Headers: headers}
}

// Do sends body (JSON, nil for none) and decodes data into out (when not nil); anything but a
// 200 is an error.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %.200s", method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: not an envelope: %w", method, path, err)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("%s %s: data: %w", method, path, err)
	}
	return nil
}
