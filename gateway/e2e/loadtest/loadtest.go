// Package loadtest is what the platform's measuring programs (scripts/bench, scripts/soak) share
// when they load a stack that stacktest started: a JSON client of the public API sized for many
// concurrent workers, and the latency figures they report. The two programs are modules of their
// own that both import stacktest, so this sits beside it.
package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// Client sends JSON requests to one base URL, with the same headers on each (the API key).
type Client struct {
	HTTP    *http.Client
	BaseURL string
	Headers map[string]string
}

// NewClient keeps enough idle connections for concurrency workers: a request that had to open
// one would measure the handshake, not the platform.
func NewClient(baseURL string, concurrency int, headers map[string]string) *Client {
	tr := &http.Transport{MaxIdleConns: concurrency * 2, MaxIdleConnsPerHost: concurrency * 2, IdleConnTimeout: time.Minute}
	return &Client{HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}, BaseURL: baseURL, Headers: headers}
}

// NewRequest is a request of path with the client's headers; body is JSON, nil for none.
func (c *Client) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// Send sends body (JSON, nil for none) and returns the status and the body of the answer, whatever
// its status; without a whole answer the status is 0 and the error says why.
func (c *Client) Send(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := c.NewRequest(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	return resp.StatusCode, raw, nil
}

// Do sends body (JSON, nil for none) and decodes the envelope's data into out (when not nil);
// anything but a 200 is an error.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	status, raw, err := c.Send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %.300s", method, path, status, raw)
	}
	if out == nil {
		return nil
	}
	data, err := Data(raw)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: data: %w", method, path, err)
	}
	return nil
}

// Data is the data of an answer's envelope.
func Data(answer []byte) (json.RawMessage, error) {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(answer, &env); err != nil {
		return nil, fmt.Errorf("not an envelope: %w", err)
	}
	return env.Data, nil
}

// Percentile is the q-quantile (0..1) of latencies, 0 when there are none; latencies itself is
// left in its order.
func Percentile(latencies []time.Duration, q float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	s := slices.Clone(latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// Millis is d in milliseconds, the unit the reports print latencies in.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
