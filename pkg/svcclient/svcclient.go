// Package svcclient is how one service asks another over its internal HTTP API: the shared
// secret, the request id and the trace context go along, the envelope is unwrapped, and failures
// come back as apperr kinds.
package svcclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/tracing"
	"ccplatform/pkg/web"

	"go.opentelemetry.io/otel/propagation"
)

// callerKey holds, in a context, the user on whose behalf requests are sent.
type callerKey struct{}

type caller struct {
	userID      int64
	accessGroup string
}

// WithCaller makes every request sent with the returned context act for the user userID of
// accessGroup, as the gateway's forwarded requests do: services record that user as the author
// (createdBy). Without it a request is the platform's own, with no author.
func WithCaller(ctx context.Context, userID int64, accessGroup string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{userID: userID, accessGroup: accessGroup})
}

// Client talks to one service.
type Client struct {
	name  string
	base  string
	token string
	hc    *http.Client
}

// New is a client for the service called name at base (e.g. http://127.0.0.1:8082).
func New(name, base, token string, timeout time.Duration) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{name: name, base: strings.TrimRight(base, "/"), token: token, hc: &http.Client{Timeout: timeout, Transport: tr}}
}

// Do sends in (nil for no body) as JSON and decodes the envelope's data into out (nil to drop it).
// An error answer keeps its kind, message and field errors; an unreachable service is Unavailable.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", c.name, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.name, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(web.HeaderInternalToken, c.token)
	tracing.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if id := requestid.From(ctx); id != "" {
		req.Header.Set(requestid.Header, id)
	}
	if who, ok := ctx.Value(callerKey{}).(caller); ok {
		req.Header.Set(identity.HeaderUserID, strconv.FormatInt(who.userID, 10))
		req.Header.Set(identity.HeaderAccessGroup, who.accessGroup)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "%s service is unavailable", c.name)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "%s service: reading the answer failed", c.name)
	}
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return apperr.Wrap(apperr.Unavailable, fmt.Errorf("status %d: %w", resp.StatusCode, err), "%s service gave an unreadable answer", c.name)
	}
	if !env.Success || resp.StatusCode >= 300 {
		return c.errorFrom(resp.StatusCode, env.Message, env.Data)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("%s %s: decode data: %w", c.name, path, err)
		}
	}
	return nil
}

func (c *Client) errorFrom(status int, message string, data json.RawMessage) error {
	if status >= 500 {
		return apperr.Wrap(apperr.Unavailable, fmt.Errorf("status %d: %s", status, message), "%s service failed", c.name)
	}
	e := &apperr.Error{Kind: apperr.KindForStatus(status), Message: message}
	var v web.ValidationData
	if json.Unmarshal(data, &v) == nil && len(v.Errors) > 0 {
		e.Fields = v.Errors
	}
	return e
}

// CloseIdleConnections closes the kept-alive connections to the service, for a clean shutdown.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
