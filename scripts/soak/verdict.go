package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// verdict prints the bad inputs' answers and why the run failed, or that it passed.
func verdict(out io.Writer, cfg Config, m *mix, g growthSamples) bool {
	var fails []string
	tot := m.rec.totals()
	if n := tot.count(func(k outcome) bool { return k.status >= 500 }); n > 0 {
		fails = append(fails, fmt.Sprintf("%d 5xx answers: %s", n, tot.describe(func(k outcome) bool { return k.status >= 500 })))
	}
	if n := tot.count(func(k outcome) bool { return k.status == 0 }); n > 0 {
		fails = append(fails, fmt.Sprintf("%d requests without an answer: %s", n, tot.describe(func(k outcome) bool { return k.status == 0 })))
	}
	if n := tot.count(func(k outcome) bool { return k.status == unreadable }); n > 0 {
		fails = append(fails, fmt.Sprintf("%d answers not as the API description says: %s", n, tot.describe(func(k outcome) bool { return k.status == unreadable })))
	}
	unexpected := func(k outcome) bool { return !k.expected && k.status > 0 && k.status < 500 }
	if n := tot.count(unexpected); n > 0 {
		fails = append(fails, fmt.Sprintf("%d answers the mix did not ask for: %s", n, tot.describe(unexpected)))
	}
	if missed := unanswered(m.routes, tot); len(missed) > 0 {
		fails = append(fails, fmt.Sprintf("%d operations never answered a valid request with success: %s", len(missed), strings.Join(missed, ", ")))
	}
	if n := m.callErrors.Load(); n > 0 {
		fails = append(fails, fmt.Sprintf("%d batches of call events could not be published (see above)", n))
	}
	fails = append(fails, g.check(out, cfg)...)
	printBadInputs(out, tot)
	fmt.Fprintf(out, "webhook deliveries received: %d\n", m.receiver.delivered.Load())
	fmt.Fprintf(out, "total: %d requests, %s\n", tot.count(func(outcome) bool { return true }), tot.describe(func(outcome) bool { return true }))
	for _, f := range fails {
		fmt.Fprintln(out, "FAIL:", f)
	}
	if len(fails) == 0 {
		fmt.Fprintf(out, "PASS: every operation answered, no 5xx, every bad input refused with a 4xx, no unexpected answer, no growth (%s)\n", growthPlan(cfg))
	}
	return len(fails) == 0
}

// unanswered lists the operations of the description no valid request of the run got a success
// for, by route.
func unanswered(routes map[string]route, tot tally) []string {
	answered := map[string]bool{}
	for k := range tot {
		if k.bad == "" && k.expected {
			answered[k.route] = true
		}
	}
	var out []string
	for _, r := range routes {
		if !answered[r.String()] {
			out = append(out, r.String())
		}
	}
	slices.Sort(out)
	return out
}

// printBadInputs lists every bad input with its answers by status.
func printBadInputs(out io.Writer, tot tally) {
	byInput := map[string]map[int]int{}
	for k, v := range tot {
		if k.bad == "" {
			continue
		}
		if byInput[k.label()] == nil {
			byInput[k.label()] = map[int]int{}
		}
		byInput[k.label()][k.status] += v
	}
	fmt.Fprintln(out, "bad inputs (must be 4xx):")
	for _, label := range slices.Sorted(maps.Keys(byInput)) {
		var parts []string
		mark := ""
		for _, status := range slices.Sorted(maps.Keys(byInput[label])) {
			parts = append(parts, fmt.Sprintf("%s=%d", statusLabel(status), byInput[label][status]))
			if !refused(status) {
				mark = "  ← NOT REFUSED"
			}
		}
		fmt.Fprintf(out, "  %-75s %s%s\n", label, strings.Join(parts, " "), mark)
	}
}
