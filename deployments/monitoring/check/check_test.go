package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const dashboards = "../grafana/dashboards"

// Every panel target and query variable of every dashboard parses as PromQL once Grafana's
// variables are substituted, and reads at least one metric.
func TestEveryDashboardQueryParses(t *testing.T) {
	queries, err := LoadDashboards(dashboards)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		expr, err := Substitute(q.Expr, q.Vars)
		if err != nil {
			t.Errorf("%s: %v", q.Where, err)
			continue
		}
		names, err := MetricNames(expr)
		if err != nil {
			t.Errorf("%s: %v\n  %s", q.Where, err, q.Expr)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s reads no metric: %s", q.Where, q.Expr)
		}
	}
	if len(queries) < 30 {
		t.Errorf("only %d queries found in %s: is every panel's target read?", len(queries), dashboards)
	}
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		// A histogram's buckets are a metric of their own; by (...) names labels, not metrics.
		`histogram_quantile(0.99, sum by (job, route, le) (rate(http_request_duration_seconds_bucket{job=~"gateway"}[1m])))`: {"http_request_duration_seconds_bucket"},
		`sum(rate(http_requests_total[5m])) by (job)`:                                         {"http_requests_total"},
		`sum without (instance) (app_ready)`:                                                  {"app_ready"},
		`queue_consumers < queue_consumers_required`:                                          {"queue_consumers", "queue_consumers_required"},
		`max by (queue) (queue_messages{queue!~".+[.]dead"})`:                                 {"queue_messages"},
		`sum by (queue) (rate(mq_acks_total[5m])) / on (queue) group_left (job) mq_consumers`: {"mq_acks_total", "mq_consumers"},
		`(sum by (job) (rate(http_requests_total{status_class="5xx"}[1m])) or sum by (job) (rate(http_requests_total[1m])) * 0) / sum by (job) (rate(http_requests_total[1m]))`: {"http_requests_total"},
		`label_replace(app_ready, "service", "$1", "job", "(.*)")`:                                           {"app_ready"},
		`{__name__="outbox_pending_events", job="order"}`:                                                    {"outbox_pending_events"},
		`max_over_time(outbox_oldest_event_age_seconds[1h:1m]) > bool 60`:                                    {"outbox_oldest_event_age_seconds"},
		`sum(rate(go_sql_wait_count_total[5m] offset 1h)) + vector(0) * scalar(go_sql_max_open_connections)`: {"go_sql_max_open_connections", "go_sql_wait_count_total"},
	} {
		got, err := MetricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: got %v, want %v", expr, got, want)
		}
	}
}

// What Prometheus would refuse, or what no check could hold to an exported name, is refused.
func TestMetricNamesRefuses(t *testing.T) {
	for _, expr := range []string{
		`sum(rate(http_requests_total[5m])`,      // unbalanced
		`rate(http_requests_total)`,              // no range: MetricsQL accepts it, PromQL does not
		`http_requests_total[5m]`,                // a range vector cannot be graphed
		`abs(http_requests_total[5m])`,           // an instant function given a range
		`median(app_ready)`,                      // a MetricsQL aggregation
		`rollup_rate(http_requests_total[5m])`,   // a MetricsQL function
		`sum(app_ready) limit 3`,                 // MetricsQL
		`app_ready default 0`,                    // a MetricsQL operator
		`{job="gateway"}`,                        // no metric name
		`{__name__=~"go_sql_.*"}`,                // no exact metric name
		`rate(http_requests_total[$__interval])`, // a variable left in
	} {
		if names, err := MetricNames(expr); err == nil {
			t.Errorf("%s: accepted, read %v", expr, names)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]bool{"job": true, "datasource": true}
	for in, want := range map[string]string{
		`rate(x{job=~"$job"}[$__rate_interval])`:      `rate(x{job=~"job"}[1m])`,
		`rate(x{job=~"${job}"}[${__interval}])`:       `rate(x{job=~"job"}[15s])`,
		`rate(x{job=~"${job:regex}"}[[[__range]]])`:   `rate(x{job=~"job"}[1h])`,
		`label_replace(x, "a", "$1", "job", "(.*)$")`: `label_replace(x, "a", "$1", "job", "(.*)$")`,
		`x > $__range_s`: `x > 3600`,
	} {
		got, err := Substitute(in, vars)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Substitute(`rate(x[$__unknown])`, vars); err == nil {
		t.Error("an unknown built-in variable was accepted")
	}
}

func TestVariableQuery(t *testing.T) {
	for raw, want := range map[string]string{
		`"label_values(app_ready, job)"`: `app_ready`,
		`{"query": "label_values(app_ready{job=~\"a|b\",x=\"y\"}, instance)", "qryType": 1}`: `app_ready{job=~"a|b",x="y"}`,
		`"query_result(sum by (job) (app_ready))"`:                                           `sum by (job) (app_ready)`,
		`"label_values(job)"`: ``,
		`"metrics(go_.*)"`:    ``,
		`""`:                  ``,
	} {
		got, err := variableQuery([]byte(raw))
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := variableQuery([]byte(`"some_other_function(x)"`)); err == nil {
		t.Error("an unknown variable query was accepted")
	}
}

// The dashboards read only metrics docs/operations.md lists: it is the contract the processes
// are tested against (a histogram brings its _bucket, _sum and _count series).
func TestDashboardsReadOnlyDocumentedMetrics(t *testing.T) {
	documented, prefixes := documentedMetrics(t, "../../../docs/operations.md")
	queries, err := LoadDashboards(dashboards)
	if err != nil {
		t.Fatal(err)
	}
	readers, err := MetricsRead(queries)
	if err != nil {
		t.Fatal(err)
	}
next:
	for name, where := range readers {
		if documented[name] {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				continue next
			}
		}
		t.Errorf("%s is not in docs/operations.md; read by %s", name, strings.Join(where, "; "))
	}
}

// documentedMetrics reads the metric table of docs/operations.md: its names, and the prefixes of
// rows like `go_*` that stand for a whole family. `go_sql_*` (`open_connections`, …) lists its
// members.
func documentedMetrics(t *testing.T, file string) (map[string]bool, []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatalf("%s has no Metrics section", file)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([a-z_*]+)`")
	names := map[string]bool{}
	var prefixes []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		var family string
		for i, m := range code.FindAllStringSubmatch(cells[1], -1) {
			switch n := m[1]; {
			case i == 0 && strings.HasSuffix(n, "*"):
				family = strings.TrimSuffix(n, "*")
			case family != "":
				names[family+n] = true
			default:
				names[n] = true
				if strings.Contains(cells[2], "histogram") {
					for _, s := range []string{"_bucket", "_sum", "_count"} {
						names[n+s] = true
					}
				}
			}
		}
		if family != "" && !strings.Contains(cells[1], "(") {
			prefixes = append(prefixes, family)
		}
	}
	if len(names) < 30 {
		t.Fatalf("only %d metrics read from %s: has its table changed shape?", len(names), file)
	}
	return names, prefixes
}

// main's comparison: each metric read is printed; one missing from the list fails with its
// readers named; the list may be Prometheus's API answer as is.
func TestRunComparesWithTheExportedNames(t *testing.T) {
	queries, err := LoadDashboards(dashboards)
	if err != nil {
		t.Fatal(err)
	}
	readers, err := MetricsRead(queries)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for n := range readers {
		all = append(all, n)
	}
	sort.Strings(all)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	var out, errOut bytes.Buffer
	full := write("all.txt", "up\n"+strings.Join(all, "\n")+"\n")
	if code := run(dashboards, full, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d with every name exported: %s", code, errOut.String())
	}
	if strings.TrimSpace(out.String()) != strings.Join(all, "\n") {
		t.Errorf("printed %q, want every metric read, sorted", out.String())
	}

	out.Reset()
	errOut.Reset()
	short := write("short.txt", strings.Join(all[1:], "\n"))
	if code := run(dashboards, short, nil, &out, &errOut); code != 1 {
		t.Fatalf("exit %d with %s missing, want 1", code, all[0])
	}
	if !strings.Contains(errOut.String(), all[0]+" is not exported; read by platform.json: panel") {
		t.Errorf("the missing metric and its panel are not named: %s", errOut.String())
	}

	api := `{"status":"success","data":["` + strings.Join(all, `","`) + `"]}`
	if code := run(dashboards, "-", strings.NewReader(api), &out, &errOut); code != 0 {
		t.Errorf("exit %d with Prometheus's answer on stdin: %s", code, errOut.String())
	}
	if code := run(dashboards, write("empty.txt", "\n"), nil, &out, &errOut); code != 2 {
		t.Errorf("exit %d with an empty list, want 2", code)
	}
	if code := run(t.TempDir(), "", nil, &out, &errOut); code != 2 {
		t.Errorf("exit %d with no dashboard, want 2", code)
	}
}
