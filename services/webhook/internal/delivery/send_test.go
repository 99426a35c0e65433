package delivery_test

import (
	"context"
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
	assert.Contains(t, out.Err, "internal address")
	assert.False(t, reached.Load())
}
