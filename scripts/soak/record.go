package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// outcome is what a route answered; status 0 is no answer (a transport error), unreadable an
// answer the typed client could not decode, expected an
// answer the request asked for (a success, or the error a request of the mix provokes on
// purpose); bad names the bad input the request carried ("" for a valid request).
type outcome struct {
	route    string
	bad      string
	status   int
	expected bool
}

func (k outcome) label() string {
	if k.bad == "" {
		return k.route
	}
	return k.route + " [" + k.bad + "]"
}

// tally counts requests by outcome.
type tally map[outcome]int

func (t tally) count(keep func(outcome) bool) int {
	n := 0
	for k, v := range t {
		if keep(k) {
			n += v
		}
	}
	return n
}

// describe lists the kept outcomes by status, then by route (and bad input), e.g.
// "502=3 (POST /v2/lead/create/ 3)".
func (t tally) describe(keep func(outcome) bool) string {
	byStatus := map[int]map[string]int{}
	for k, v := range t {
		if !keep(k) {
			continue
		}
		if byStatus[k.status] == nil {
			byStatus[k.status] = map[string]int{}
		}
		byStatus[k.status][k.label()] += v
	}
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		routes := byStatus[status]
		n := 0
		var rs []string
		for _, r := range slices.Sorted(maps.Keys(routes)) {
			n += routes[r]
			rs = append(rs, fmt.Sprintf("%s %d", r, routes[r]))
		}
		parts = append(parts, fmt.Sprintf("%s=%d (%s)", statusLabel(status), n, strings.Join(rs, ", ")))
	}
	return strings.Join(parts, "; ")
}

// statusLabel names a counted status: the HTTP status, or what stands for none.
func statusLabel(status int) string {
	switch status {
	case 0:
		return "no answer"
	case unreadable:
		return "unreadable answer"
	}
	return strconv.Itoa(status)
}

// window is one period of requests between two samples (a minute in a long run).
type window struct {
	start time.Time
	// elapsed is the window's length, pause how long the load stood still in it for its sample.
	elapsed, pause time.Duration
	// latencies are those of the valid requests, by route.
	latencies map[string][]time.Duration
	outcomes  tally
	late      int
}

// recorder collects the requests of the current window and the totals of the run.
type recorder struct {
	mu    sync.Mutex
	cur   *window
	total tally
	// said counts the failures printed as they happened (the first few only).
	said int
}

func newRecorder() *recorder {
	return &recorder{cur: newWindow(), total: tally{}}
}

func newWindow() *window {
	return &window{start: time.Now(), latencies: map[string][]time.Duration{}, outcomes: tally{}}
}

// record counts one request; an unexpected answer or a transport error is printed too, the first
// ten of the run, so a failure can be read without the logs.
func (r *recorder) record(k outcome, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.outcomes[k]++
	r.total[k]++
	if k.status > 0 && k.bad == "" {
		r.cur.latencies[k.route] = append(r.cur.latencies[k.route], took)
	}
	if !k.expected && r.said < 10 {
		r.said++
		fmt.Printf("soak: %s: %v\n", k.label(), err)
	}
}

// late counts a request that found every worker busy and was not sent.
func (r *recorder) late() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.late++
}

// paused notes how long the load stood still in the current window.
func (r *recorder) paused(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.pause += d
}

// swap ends the current window and starts the next.
func (r *recorder) swap() *window {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.cur
	w.elapsed = time.Since(w.start)
	r.cur = newWindow()
	return w
}

func (r *recorder) totals() tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.total)
}
