// Package logging builds the zap logger every binary uses and carries a request-scoped logger
// (one that already names the request id) through a context.
package logging

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New is a JSON logger at level ("debug", "info", "warn", "error") naming the service.
func New(service, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.Sampling = nil
	log, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return log.With(zap.String("service", service)), nil
}

type key struct{}

// With returns ctx carrying log.
func With(ctx context.Context, log *zap.Logger) context.Context {
	return context.WithValue(ctx, key{}, log)
}

// From returns the logger carried by ctx, or fallback when there is none.
func From(ctx context.Context, fallback *zap.Logger) *zap.Logger {
	if l, ok := ctx.Value(key{}).(*zap.Logger); ok {
		return l
	}
	return fallback
}
