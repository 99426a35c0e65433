package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every operation of the API description is sent by a valid request of the mix, and every
// request of the mix names an operation of it: a route added to openapi.yaml without soak coverage
// fails here (and the soak before it starts).
func TestTheMixSendsEveryOperationOfTheDescription(t *testing.T) {
	routes, err := loadRoutes()
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 40 {
		t.Fatalf("%d operations read from the description: not the whole API", len(routes))
	}
	all := append(append([]op{}, ops...), badOps...)
	missing, unknown := uncovered(routes, all)
	if len(missing) > 0 {
		t.Errorf("operations the mix does not send: %v", missing)
	}
	if len(unknown) > 0 {
		t.Errorf("operations of the mix the description does not have: %v", unknown)
	}
	for _, o := range all {
		if o.weight <= 0 || o.run == nil {
			t.Errorf("%s %q: weight %v, run set %v", o.id, o.bad, o.weight, o.run != nil)
		}
	}
}

func TestUncoveredNamesWhatIsMissingAndWhatIsUnknown(t *testing.T) {
	routes := map[string]route{"getA": {"GET", "/a/"}, "getB": {"GET", "/b/{id}/"}, "getC": {"GET", "/c/"}}
	mixOps := []op{
		{id: "getA", weight: 1},
		// A bad input alone does not cover its operation.
		{id: "getB", bad: "%00 in path", weight: 1},
		{id: "getRenamed", weight: 1},
		{id: "getRenamed", bad: "unknown id", weight: 1},
	}
	missing, unknown := uncovered(routes, mixOps)
	if !slices.Equal(missing, []string{"getB", "getC"}) {
		t.Errorf("missing %v, want [getB getC]", missing)
	}
	if !slices.Equal(unknown, []string{"getRenamed"}) {
		t.Errorf("unknown %v, want [getRenamed]", unknown)
	}
}

func TestBadInputsAreCountedApart(t *testing.T) {
	bad := 0.0
	total := 0.0
	for _, o := range append(append([]op{}, ops...), badOps...) {
		total += o.weight
		if o.bad != "" {
			bad += o.weight
		}
	}
	// "A few percent" of the requests: enough to meet every bad input many times a minute, not so
	// many that the valid traffic's figures change.
	if share := bad / total; share < 0.02 || share > 0.08 {
		t.Errorf("bad input is %.1f%% of the mix, want 2-8%%", 100*share)
	}
	for _, o := range ops {
		if o.bad != "" {
			t.Errorf("%s: a bad input among the valid requests (%q)", o.id, o.bad)
		}
	}
	for _, o := range badOps {
		if o.bad == "" {
			t.Errorf("%s: a valid request among the bad inputs", o.id)
		}
	}
}

func TestRouteFill(t *testing.T) {
	r := route{http.MethodPost, "/v2/webhook/{webhookId}/redeliver/{eventId}/"}
	if got := r.fill("%00", "%ff"); got != "/v2/webhook/%00/redeliver/%ff/" {
		t.Errorf("fill: %s", got)
	}
	for _, params := range [][]string{{"1"}, {"1", "2", "3"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("fill%v: no panic", params)
				}
			}()
			r.fill(params...)
		}()
	}
}

func TestRefusedIsA4xx(t *testing.T) {
	for status, want := range map[int]bool{400: true, 404: true, 413: true, 499: true, 200: false, 500: false, 503: false, 0: false} {
		if refused(status) != want {
			t.Errorf("refused(%d) = %v", status, !want)
		}
	}
}

func TestUnansweredListsOperationsWithoutASuccess(t *testing.T) {
	routes := map[string]route{"getA": {"GET", "/a/"}, "getB": {"GET", "/b/"}, "getC": {"GET", "/c/"}}
	tot := tally{
		{route: "GET /a/", status: 200, expected: true}: 3,
		// A refused bad input or a failed request is no success of the operation.
		{route: "GET /b/", bad: "unknown id", status: 404, expected: true}: 2,
		{route: "GET /c/", status: 503}:                                    1,
	}
	if got := unanswered(routes, tot); strings.Join(got, ",") != "GET /b/,GET /c/" {
		t.Errorf("unanswered %v", got)
	}
}
