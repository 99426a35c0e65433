package delivery_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ccplatform/services/webhook/internal/delivery"
	"ccplatform/services/webhook/internal/signature"
	"ccplatform/services/webhook/internal/urlguard"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func secret(t *testing.T) []string {
	s, err := signature.NewSecret()
	require.NoError(t, err)
	return []string{s}
}

// A redirect is the endpoint's answer, a failure: the dispatcher never follows it (it could lead
// inside the network). The answer is read up to a bound and 1 KiB of it kept.
func TestARedirectIsAFailureAndTheAnswerIsCut(t *testing.T) {
	var followed atomic.Bool
	inside := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer inside.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL, http.StatusFound)
	}))
	defer redirect.Close()
	s := delivery.NewSender(urlguard.Policy{AllowPrivate: true})
	defer s.Close()
	out := s.Send(context.Background(), redirect.URL, "evt-1", secret(t), []byte(`{}`), time.Now())
	assert.False(t, out.OK())
	assert.Equal(t, http.StatusFound, out.StatusCode)
	assert.Equal(t, "answered 302", out.Err)
	assert.False(t, followed.Load(), "the redirect was not followed")

	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(strings.Repeat("é", 5000) + "\x00"))
	}))
	defer long.Close()
	out = s.Send(context.Background(), long.URL, "evt-2", secret(t), []byte(`{}`), time.Now())
	assert.LessOrEqual(t, len(out.Excerpt), delivery.ExcerptBytes)
	assert.True(t, strings.HasPrefix(out.Excerpt, "éé"))
}

// With the secure default, the address actually dialed is checked: a name that resolves to
// loopback (here, the address itself) is refused at delivery, whatever was checked when saved.
func TestDeliveryRefusesAnInternalAddressAtDialTime(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Store(true) }))
	defer srv.Close()
	s := delivery.NewSender(urlguard.Policy{})
	defer s.Close()
	out := s.Send(context.Background(), srv.URL, "evt-3", secret(t), []byte(`{}`), time.Now())
	assert.False(t, out.OK())
	assert.Zero(t, out.StatusCode)
	assert.Equal(t, "address not allowed", out.Err)
	assert.ErrorIs(t, out.Cause, urlguard.ErrInternal, "the cause, for the dispatcher's log")
	assert.False(t, reached.Load())
}

// The delivery log, which the owner reads, carries stable reasons; the raw dial error (with the
// address dialed) is the Cause, which only the dispatcher's log gets.
func TestAFailedAttemptSaysWhyInStableTerms(t *testing.T) {
	s := delivery.NewSender(urlguard.Policy{AllowPrivate: true})
	defer s.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/hook"
	require.NoError(t, ln.Close())
	out := s.Send(context.Background(), closed, "evt-4", secret(t), []byte(`{}`), time.Now())
	assert.Equal(t, "connection refused", out.Err)
	assert.ErrorContains(t, out.Cause, "dial tcp")

	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	out = s.Send(context.Background(), tlsSrv.URL, "evt-5", secret(t), []byte(`{}`), time.Now())
	assert.Equal(t, "TLS handshake failed", out.Err, "a certificate no authority signed")
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	out = s.Send(ctx, slow.URL, "evt-7", secret(t), []byte(`{}`), time.Now())
	assert.Equal(t, "timed out", out.Err)

	out = s.Send(context.Background(), "https://no-such-host.invalid/hook", "evt-8", secret(t), []byte(`{}`), time.Now())
	assert.Equal(t, "host not found", out.Err)
}
