package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Query is one Prometheus expression of a dashboard: a panel target's or a variable's.
type Query struct {
	// Where names it for a person: the dashboard file, and the panel and target or the variable.
	Where string
	// Expr is the expression as written, Grafana variables included.
	Expr string
	// Vars are the dashboard's own variable names, for Substitute.
	Vars map[string]bool
}

// dashboard is the part of Grafana's dashboard JSON the check reads.
type dashboard struct {
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int      `json:"id"`
	Title   string   `json:"title"`
	Type    string   `json:"type"`
	Targets []target `json:"targets"`
	// Panels are the panels of a collapsed row.
	Panels []panel `json:"panels"`
}

type target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
}

type variable struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Query is a string or, since Grafana 10, {"query": "...", ...}.
	Query json.RawMessage `json:"query"`
}

// LoadDashboards reads every *.json file in dir (not below it) and returns the Prometheus queries
// of each, in file order. A directory without a dashboard is an error: a wrong path would
// otherwise check nothing and pass.
func LoadDashboards(dir string) ([]Query, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no dashboard (*.json) in %s", dir)
	}
	sort.Strings(files)
	var out []Query
	for _, f := range files {
		qs, err := loadDashboard(f)
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
	}
	return out, nil
}

func loadDashboard(file string) ([]Query, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	base := filepath.Base(file)
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	var out []Query
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", file, v.Name, err)
		}
		if q != "" {
			out = append(out, Query{Where: fmt.Sprintf("%s: variable %s", base, v.Name), Expr: q, Vars: vars})
		}
	}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					continue
				}
				out = append(out, Query{Where: fmt.Sprintf("%s: panel %d %q, target %s", base, p.ID, p.Title, t.RefID), Expr: t.Expr, Vars: vars})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no Prometheus query in the dashboard", file)
	}
	return out, nil
}

// Grafana's Prometheus variable functions: label_values(selector, label) and query_result(expr)
// read metrics; label_values(label), label_names() and metrics(regex) read none.
var (
	labelValuesOfSelector = regexp.MustCompile(`^\s*label_values\(\s*(.+)\s*,\s*\w+\s*\)\s*$`)
	queryResult           = regexp.MustCompile(`^\s*query_result\(\s*(.+)\s*\)\s*$`)
	metricFree            = regexp.MustCompile(`^\s*(label_values\(\s*\w+\s*\)|label_names\(.*\)|metrics\(.*\))\s*$`)
)

// variableQuery is the PromQL expression a query variable reads, or "" when it reads no metric.
func variableQuery(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var o struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return "", fmt.Errorf("query is neither a string nor an object with a query")
		}
		s = o.Query
	}
	switch {
	case strings.TrimSpace(s) == "" || metricFree.MatchString(s):
		return "", nil
	case labelValuesOfSelector.MatchString(s):
		return labelValuesOfSelector.FindStringSubmatch(s)[1], nil
	case queryResult.MatchString(s):
		return queryResult.FindStringSubmatch(s)[1], nil
	}
	return "", fmt.Errorf("%q: not a Grafana Prometheus variable query this check knows", s)
}
