// Package app runs a binary the same way everywhere: configuration from the environment, a logger,
// a context cancelled by SIGINT/SIGTERM, and a non-zero exit when run fails.
package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"ccplatform/pkg/config"
	"ccplatform/pkg/logging"

	"go.uber.org/zap"
)

// Leveled is a configuration that names its log level (config.Common does).
type Leveled interface {
	Level() string
}

// Main loads a T from the environment and calls run until a stop signal; run must return once ctx
// is done, after draining its work. Main exits the process.
func Main[T Leveled](name string, run func(ctx context.Context, cfg T, log *zap.Logger) error) {
	os.Exit(Run(name, run))
}

// Run is Main without the exit, returning the process's exit code.
func Run[T Leveled](name string, run func(ctx context.Context, cfg T, log *zap.Logger) error) int {
	cfg, err := config.Load[T]()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	log, err := logging.New(name, cfg.Level())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	defer func() { _ = log.Sync() }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error(name+" stopped", zap.Error(err))
		return 1
	}
	log.Info(name + " stopped")
	return 0
}
