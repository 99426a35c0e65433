package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"ccplatform/services/webhook/internal/signature"
	"ccplatform/services/webhook/internal/urlguard"
)

// Bounds of one attempt.
const (
	// AttemptTimeout is how long an endpoint has to answer 2xx.
	AttemptTimeout = 10 * time.Second
	// ExcerptBytes is the part of a response body kept for the log.
	ExcerptBytes = 1024
	// drainBytes is the most of a response body read (so the connection can be reused); the
	// rest is dropped with the connection.
	drainBytes = 64 << 10
)

// Sender makes one signed POST: no redirects followed, the address dialed checked by the guard.
type Sender struct {
	client *http.Client
}

// NewSender is a sender under guard.
func NewSender(guard urlguard.Policy) *Sender {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: guard.Control}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: AttemptTimeout,
	}
	return &Sender{client: &http.Client{
		Transport: transport,
		Timeout:   AttemptTimeout,
		// A redirect is the endpoint's answer, not an instruction: following it could lead inside.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Close drops the idle connections.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

// Outcome is what one attempt got.
type Outcome struct {
	StatusCode int // 0: no answer
	Latency    time.Duration
	Err        string // why there was no answer, or the status that was not 2xx: a stable message the owner sees
	Cause      error  // the raw error behind Err, for the dispatcher's log only (it names internal addresses)
	Excerpt    string // up to ExcerptBytes of the answer
}

// OK reports whether the endpoint took the event.
func (o Outcome) OK() bool { return o.StatusCode >= 200 && o.StatusCode < 300 }

// Send posts body to url signed by secrets as event id at now.
func (s *Sender) Send(ctx context.Context, url, id string, secrets []string, body []byte, now time.Time) Outcome {
	headers, err := signature.Headers(secrets, id, now, body)
	if err != nil {
		return Outcome{Err: "signing failed", Cause: err}
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Outcome{Err: "invalid request", Cause: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ccplatform-webhooks/1")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	res, err := s.client.Do(req)
	if err != nil {
		return Outcome{Latency: time.Since(start), Err: reason(err), Cause: err}
	}
	defer res.Body.Close()
	buf, _ := io.ReadAll(io.LimitReader(res.Body, drainBytes))
	out := Outcome{StatusCode: res.StatusCode, Latency: time.Since(start), Excerpt: excerpt(buf)}
	if !out.OK() {
		out.Err = fmt.Sprintf("answered %d", res.StatusCode)
	}
	return out
}

// reason says why an attempt got no answer, in stable terms an integrator acts on: the raw error
// names the addresses dialed (of the platform's network too) and Go's internals, so it goes to
// the dispatcher's log only.
func reason(err error) string {
	var (
		ne    net.Error
		dns   *net.DNSError
		cert  *tls.CertificateVerificationError
		rec   tls.RecordHeaderError
		alert tls.AlertError
	)
	switch {
	case errors.Is(err, urlguard.ErrInternal), errors.Is(err, urlguard.ErrPort):
		return "address not allowed"
	case errors.As(err, &dns):
		return "host not found"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.As(err, &cert), errors.As(err, &rec), errors.As(err, &alert):
		return "TLS handshake failed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return "connection failed"
}

// excerpt is the first ExcerptBytes of b, as text: invalid UTF-8 and NUL (which the log's text
// column cannot hold) replaced by "?".
func excerpt(b []byte) string {
	if len(b) > ExcerptBytes {
		b = b[:ExcerptBytes]
	}
	return strings.ReplaceAll(string(bytes.ToValidUTF8(b, []byte("?"))), "\x00", "?")
}
