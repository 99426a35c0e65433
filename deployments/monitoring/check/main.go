// Command check holds the Grafana dashboards to the metrics the processes export: it parses every
// Prometheus expression of every dashboard (panel targets and query variables), prints each metric
// name they read, one a line, and fails when one is missing from the exported names.
//
//	go run . -dashboards ../grafana/dashboards -exported names.txt
//
// -exported is a file ("-": standard input) of metric names, one a line, or the answer of
// Prometheus's /api/v1/label/__name__/values as is. Without it the dashboards are only parsed.
// Exit status: 0 all found, 1 some missing, 2 a dashboard or the list could not be read or parsed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("dashboards", "../grafana/dashboards", "directory of the Grafana dashboards (*.json)")
	exportedFile := flag.String("exported", "", `file of the exported metric names, one a line, or Prometheus's /api/v1/label/__name__/values answer ("-": standard input)`)
	flag.Parse()
	os.Exit(run(*dir, *exportedFile, os.Stdin, os.Stdout, os.Stderr))
}

func run(dir, exportedFile string, stdin io.Reader, stdout, stderr io.Writer) int {
	queries, err := LoadDashboards(dir)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	readers, err := MetricsRead(queries)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	names := make([]string, 0, len(readers))
	for n := range readers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	if exportedFile == "" {
		fmt.Fprintf(stderr, "check: %d queries parsed, %d metrics read (no -exported list: nothing compared)\n", len(queries), len(names))
		return 0
	}
	var in io.Reader = stdin
	if exportedFile != "-" {
		f, err := os.Open(exportedFile)
		if err != nil {
			fmt.Fprintln(stderr, "check:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	exported, err := ReadExported(in)
	if err != nil {
		fmt.Fprintf(stderr, "check: %s: %v\n", exportedFile, err)
		return 2
	}
	missing := 0
	for _, n := range names {
		if !exported[n] {
			missing++
			fmt.Fprintf(stderr, "check: %s is not exported; read by %s\n", n, strings.Join(readers[n], "; "))
		}
	}
	if missing > 0 {
		fmt.Fprintf(stderr, "check: FAIL: %d of %d metrics the dashboards read are not exported\n", missing, len(names))
		return 1
	}
	fmt.Fprintf(stderr, "check: all %d metrics the dashboards read (%d queries) are exported\n", len(names), len(queries))
	return 0
}

// MetricsRead parses every query and maps each metric name read to the queries that read it. The
// error lists every query that does not parse.
func MetricsRead(queries []Query) (map[string][]string, error) {
	readers := map[string][]string{}
	var problems []string
	for _, q := range queries {
		expr, err := Substitute(q.Expr, q.Vars)
		if err == nil {
			var names []string
			names, err = MetricNames(expr)
			for _, n := range names {
				readers[n] = append(readers[n], q.Where)
			}
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v\n    %s", q.Where, err, q.Expr))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%d queries do not parse:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return readers, nil
}

// ReadExported reads metric names, one a line (blank lines and # comments skipped), or a
// Prometheus API answer {"status":"success","data":[...]}. An empty list is an error: a failed
// scrape would otherwise report every metric missing, or a wrong file pass nothing.
func ReadExported(r io.Reader) (map[string]bool, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var lines []string
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		var answer struct {
			Status string   `json:"status"`
			Data   []string `json:"data"`
		}
		if err := json.Unmarshal([]byte(t), &answer); err != nil {
			return nil, fmt.Errorf("not a Prometheus API answer: %w", err)
		}
		if answer.Status != "success" {
			return nil, fmt.Errorf("status %q from Prometheus", answer.Status)
		}
		lines = answer.Data
	} else {
		lines = strings.Split(t, "\n")
	}
	out := map[string]bool{}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no metric names")
	}
	return out, nil
}
