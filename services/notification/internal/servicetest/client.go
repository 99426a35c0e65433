package servicetest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/web"

	"ccplatform/pkg/identity"
	"ccplatform/pkg/webtest"
)

// Envelope is a decoded answer with its status and headers.
type Envelope = webtest.Response

// Call sends a request with the internal token and, when userID > 0, the verified caller.
// headers are name/value pairs.
func Call(t testing.TB, method, url string, userID int64, body string, headers ...string) (int, Envelope) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.HeaderInternalToken, Token)
	if userID > 0 {
		req.Header.Set(identity.HeaderUserID, strconv.FormatInt(userID, 10))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s %s: not an envelope (%d): %s", method, url, resp.StatusCode, raw)
	}
	env.Status, env.Header = resp.StatusCode, resp.Header
	return resp.StatusCode, env
}

// Event is one server-sent event.
type Event struct {
	Name string
	Data string
}

// Stream opens an event stream at url with headers (name/value pairs) and returns its events; it
// waits for the first event (the stream's "ready") before returning, so anything sent after is
// seen. The stream closes when the test ends.
func Stream(t testing.TB, url string, headers ...string) <-chan Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream: content type %q", ct)
	}
	events := make(chan Event, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" || ev.Data != "" {
					events <- ev
				}
				ev = Event{}
			case strings.HasPrefix(line, "event:"):
				ev.Name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.Data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
			}
		}
	}()
	select {
	case ev := <-events:
		if ev.Name != "ready" {
			t.Fatalf("stream: first event %q, want ready", ev.Name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream: no ready event")
	}
	return events
}

// Next is the next event named name within wait (others are skipped); ok is false if none came.
func Next(events <-chan Event, name string, wait time.Duration) (Event, bool) {
	deadline := time.After(wait)
	for {
		select {
		case ev, open := <-events:
			if !open {
				return Event{}, false
			}
			if ev.Name == name {
				return ev, true
			}
		case <-deadline:
			return Event{}, false
		}
	}
}

func splitAddr(t testing.TB, addr string) (string, int) {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}
