package logging

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestNewLevels(t *testing.T) {
	for _, lvl := range []string{"debug", "info", "warn", "error"} {
		log, err := New("order", lvl)
		require.NoError(t, err, lvl)
		want, _ := zapcore.ParseLevel(lvl)
		assert.True(t, log.Core().Enabled(want))
		if want > zapcore.DebugLevel {
			assert.False(t, log.Core().Enabled(want-1))
		}
	}
	_, err := New("order", "loud")
	assert.Error(t, err)
}

func TestContextCarriesLogger(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	fallback := zap.NewNop()
	assert.Same(t, fallback, From(context.Background(), fallback))

	l := zap.New(core).With(zap.String("request_id", "r1"))
	ctx := With(context.Background(), l)
	From(ctx, fallback).Info("hello")
	require.Equal(t, 1, logs.Len())
	assert.Equal(t, "r1", logs.All()[0].ContextMap()["request_id"])
}
