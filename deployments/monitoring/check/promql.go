package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/VictoriaMetrics/metricsql"
)

// grafanaBuiltins are Grafana's own variables that can stand in a Prometheus query, with a value
// of the right kind (a duration or a number) so that the query parses as Prometheus would get it.
var grafanaBuiltins = map[string]string{
	"__rate_interval":    "1m",
	"__interval":         "15s",
	"__range":            "1h",
	"__rate_interval_ms": "60000",
	"__interval_ms":      "15000",
	"__range_ms":         "3600000",
	"__range_s":          "3600",
}

// variableRef matches Grafana's three syntaxes: $name, ${name} or ${name:format}, [[name]] or
// [[name:format]].
var variableRef = regexp.MustCompile(`\$(\w+)|\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]`)

// Substitute replaces Grafana's variables in expr: the built-in intervals by a duration, and each
// of the dashboard's own variables (vars) by its name, which is as good a label value or regex as
// any. Anything else that looks like a variable stays (label_replace's "$1" is no variable); an
// unknown built-in ($__something) is an error, as Grafana would send it to Prometheus as is.
func Substitute(expr string, vars map[string]bool) (string, error) {
	var err error
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := grafanaBuiltins[name]; ok {
			return v
		}
		if vars[name] {
			return name
		}
		if strings.HasPrefix(name, "__") && err == nil {
			err = fmt.Errorf("unknown Grafana variable %s", ref)
		}
		return ref
	})
	return out, err
}

// PromQL's own functions and aggregations: metricsql parses MetricsQL, a superset, and a query
// that uses an extension would fail on Prometheus.
var (
	promqlAggregations = set("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
		"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio")
	// promqlRangeFunctions take a range vector (metric[5m] or a subquery) as their argument.
	promqlRangeFunctions = set("rate", "irate", "increase", "delta", "idelta", "deriv",
		"predict_linear", "holt_winters", "double_exponential_smoothing", "changes", "resets",
		"avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
		"quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
		"present_over_time", "absent_over_time", "mad_over_time", "ts_of_min_over_time",
		"ts_of_max_over_time", "ts_of_last_over_time", "first_over_time", "ts_of_first_over_time")
	promqlFunctions = set("abs", "absent", "acos", "acosh", "asin", "asinh", "atan", "atanh",
		"ceil", "clamp", "clamp_max", "clamp_min", "cos", "cosh", "day_of_month", "day_of_week",
		"day_of_year", "days_in_month", "deg", "exp", "floor", "histogram_avg", "histogram_count",
		"histogram_fraction", "histogram_quantile", "histogram_stddev", "histogram_stdvar",
		"histogram_sum", "hour", "label_join", "label_replace", "ln", "log10", "log2", "minute",
		"month", "pi", "rad", "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_desc",
		"sort_by_label", "sort_by_label_desc", "sqrt", "tan", "tanh", "time", "timestamp",
		"vector", "year")
	promqlBinaryOps = set("+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=", "and",
		"or", "unless", "atan2")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// MetricNames parses a PromQL expression (its Grafana variables already substituted) and returns
// the metric names it reads, sorted and each once. Label names in by (...), on (...) and the like
// are no metrics. It fails on a syntax error, on MetricsQL extensions Prometheus would refuse, and
// on a selector without an exact metric name (which no check could hold to an exported name).
func MetricNames(expr string) ([]string, error) {
	e, err := metricsql.Parse(expr)
	if err != nil {
		return nil, err
	}
	if r, ok := e.(*metricsql.RollupExpr); ok && r.Window != nil && !isSubquery(r) {
		return nil, fmt.Errorf("a range vector (%s) cannot be graphed: wrap it in a function such as rate()", r.AppendString(nil))
	}
	seen := map[string]bool{}
	var problems []string
	metricsql.VisitAll(e, func(x metricsql.Expr) {
		if p := promqlProblem(x, seen); p != "" {
			problems = append(problems, p)
		}
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// promqlProblem checks one node; a selector's metric name goes into names.
func promqlProblem(x metricsql.Expr, names map[string]bool) string {
	switch x := x.(type) {
	case *metricsql.MetricExpr:
		if len(x.LabelFilterss) != 1 {
			return fmt.Sprintf("%s: \"or\" inside a selector is MetricsQL, not PromQL", x.AppendString(nil))
		}
		lfs := x.LabelFilterss[0]
		if len(lfs) == 0 || lfs[0].Label != "__name__" || lfs[0].IsRegexp || lfs[0].IsNegative || lfs[0].Value == "" {
			return fmt.Sprintf("%s: a selector must name its metric exactly", x.AppendString(nil))
		}
		names[lfs[0].Value] = true
	case *metricsql.AggrFuncExpr:
		if !promqlAggregations[x.Name] {
			return fmt.Sprintf("%s is no PromQL aggregation", x.Name)
		}
		if x.Limit > 0 {
			return fmt.Sprintf("%s(...) limit is MetricsQL, not PromQL", x.Name)
		}
	case *metricsql.FuncExpr:
		if x.KeepMetricNames {
			return fmt.Sprintf("%s(...) keep_metric_names is MetricsQL, not PromQL", x.Name)
		}
		switch {
		case promqlRangeFunctions[x.Name]:
			i := metricsql.GetRollupArgIdx(x)
			if i < 0 || i >= len(x.Args) {
				return fmt.Sprintf("%s() takes a range vector", x.Name)
			}
			r, ok := x.Args[i].(*metricsql.RollupExpr)
			if !ok || (r.Window == nil && !isSubquery(r)) {
				return fmt.Sprintf("%s() needs a range, as in %s(metric[5m])", x.Name, x.Name)
			}
		case promqlFunctions[x.Name]:
			for _, a := range x.Args {
				if r, ok := a.(*metricsql.RollupExpr); ok && r.Window != nil && !isSubquery(r) {
					return fmt.Sprintf("%s() takes no range vector", x.Name)
				}
			}
		default:
			return fmt.Sprintf("%s is no PromQL function", x.Name)
		}
	case *metricsql.BinaryOpExpr:
		if !promqlBinaryOps[strings.ToLower(x.Op)] {
			return fmt.Sprintf("%q is no PromQL operator", x.Op)
		}
	}
	return ""
}

func isSubquery(r *metricsql.RollupExpr) bool { return r.Step != nil || r.InheritStep }
