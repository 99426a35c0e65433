package main

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/ops"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var dbURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "call_main", func(url string) int {
		dbURL = url
		return m.Run()
	})
}

// TestRunServesAndStops starts the whole service on a free port, asks its health check, then
// stops it as a signal would and expects a clean shutdown.
func TestRunServesAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	cfg := Config{
		Common:   config.Common{LogLevel: "error", InternalToken: "t"},
		Database: config.Database{URL: dbURL, MaxConns: 4},
		HTTPAddr: addr,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zap.NewNop(), ops.New("call")) }()

	var status int
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz/")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		status = resp.StatusCode
		return true
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, http.StatusOK, status)

	resp, err := http.Get("http://" + addr + "/v2/call/detail/1")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "public routes need the internal token")

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v2/call/detail/1/", nil)
	req.Header.Set("X-Internal-Token", "t")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the schema is migrated and the call is unknown")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
}
