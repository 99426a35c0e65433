package app

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"ccplatform/pkg/config"

	"github.com/stretchr/testify/assert"
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
	code := Run("t", func(_ context.Context, c cfg, _ *zap.Logger) error { got = c.Name; return nil })
	assert.Equal(t, 0, code)
	assert.Equal(t, "from-env", got)
	assert.Equal(t, 1, Run("t", func(context.Context, cfg, *zap.Logger) error { return errors.New("boom") }))
}

func TestRunRefusesBadConfig(t *testing.T) {
	t.Setenv("LOG_LEVEL", "loud")
	assert.Equal(t, 1, Run("t", func(context.Context, cfg, *zap.Logger) error { return nil }))
}

func TestRunStopsOnSIGTERM(t *testing.T) {
	t.Setenv("LOG_LEVEL", "error")
	done := make(chan int)
	go func() {
		done <- Run("t", func(ctx context.Context, _ cfg, _ *zap.Logger) error {
			<-ctx.Done()
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
