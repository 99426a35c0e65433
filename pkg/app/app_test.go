package app

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/ops"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

type cfg struct {
	config.Common
	Name string `env:"APP_TEST_NAME" envDefault:"default"`
}

func TestRunPassesConfigAndReportsFailure(t *testing.T) {
	t.Setenv("APP_TEST_NAME", "from-env")
	t.Setenv("LOG_LEVEL", "error")
	var got string
	code := Run("t", func(_ context.Context, c cfg, _ *zap.Logger, _ *ops.Ops) error { got = c.Name; return nil })
	assert.Equal(t, 0, code)
	assert.Equal(t, "from-env", got)
	assert.Equal(t, 1, Run("t", func(context.Context, cfg, *zap.Logger, *ops.Ops) error { return errors.New("boom") }))
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Setenv("LOG_LEVEL", "loud")
	assert.Equal(t, 1, Run("t", func(context.Context, cfg, *zap.Logger, *ops.Ops) error { return nil }))
}

func TestRunStopsOnSIGTERM(t *testing.T) {
	t.Setenv("LOG_LEVEL", "error")
	done := make(chan int)
	go func() {
		done <- Run("t", func(ctx context.Context, _ cfg, _ *zap.Logger, o *ops.Ops) error {
			<-ctx.Done()
			if !o.Draining() {
				return errors.New("run's context ended before the process was marked draining")
			}
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond)
	assert.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop on SIGTERM")
	}
}

func TestRunDrainsForTheDelayBeforeStopping(t *testing.T) {
	t.Setenv("LOG_LEVEL", "error")
	t.Setenv("DRAIN_DELAY", "300ms")
	draining := make(chan time.Time, 1)
	done := make(chan int)
	var stopped time.Time
	go func() {
		done <- Run("t", func(ctx context.Context, _ cfg, _ *zap.Logger, o *ops.Ops) error {
			go func() {
				for !o.Draining() {
					time.Sleep(5 * time.Millisecond)
				}
				draining <- time.Now()
			}()
			<-ctx.Done()
			stopped = time.Now()
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond)
	assert.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop on SIGTERM")
	}
	began := <-draining
	assert.GreaterOrEqual(t, stopped.Sub(began), 250*time.Millisecond, "the context must end only after the drain delay")
}

func TestRunRefusesAPlaceholderTokenEverywhere(t *testing.T) {
	t.Setenv("LOG_LEVEL", "error")
	ran := false
	body := func(context.Context, cfg, *zap.Logger, *ops.Ops) error { ran = true; return nil }
	for _, env := range []string{"production", "staging", Development} {
		t.Setenv("APP_ENV", env)
		for _, token := range []string{"CHANGE-ME-placeholder-internal-token", "x" + PlaceholderMarker} {
			t.Setenv("INTERNAL_TOKEN", token)
			assert.Equal(t, 1, Run("t", body), "APP_ENV %q, token %q", env, token)
		}
	}
	assert.False(t, ran)
	assert.ErrorIs(t, Process{Env: "production", InternalToken: "CHANGE-ME"}.Check(), ErrPlaceholderToken)
	assert.NoError(t, Process{Env: "production", InternalToken: "change-me-is-not-the-marker-but-odd"}.Check())
}

func TestRunRefusesTheDevelopmentTokenOutsideDevelopment(t *testing.T) {
	t.Setenv("LOG_LEVEL", "error")
	ran := false
	body := func(context.Context, cfg, *zap.Logger, *ops.Ops) error { ran = true; return nil }

	t.Setenv("APP_ENV", "production")
	for _, token := range []string{"", config.DevInternalToken} {
		t.Setenv("INTERNAL_TOKEN", token)
		assert.Equal(t, 1, Run("t", body), "token %q", token)
	}
	assert.False(t, ran)

	t.Setenv("INTERNAL_TOKEN", "a-real-secret")
	assert.Equal(t, 0, Run("t", body))
	assert.True(t, ran)

	ran = false
	t.Setenv("APP_ENV", Development)
	t.Setenv("INTERNAL_TOKEN", "")
	assert.Equal(t, 1, Run("t", body), "an empty token would refuse every internal call")
	require.NoError(t, os.Unsetenv("INTERNAL_TOKEN"))
	assert.Equal(t, 0, Run("t", body), "development runs with the default token")
	assert.True(t, ran)
}

func TestSoftMemoryLimitLeavesHeadroomBelowTheContainerLimit(t *testing.T) {
	assert.Equal(t, int64(241591910), softMemoryLimit(256<<20, false), "90% of 256 MiB")
	assert.Zero(t, softMemoryLimit(0, false), "no container limit: the runtime's default")
	assert.Zero(t, softMemoryLimit(256<<20, true), "an explicit GOMEMLIMIT wins")
	assert.Error(t, Process{InternalToken: "x", MemoryLimit: -1}.Check())
}
