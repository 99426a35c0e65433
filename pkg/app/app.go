// Package app runs a binary the same way everywhere: configuration from the environment, a logger,
// tracing (pkg/tracing), the operations surface (pkg/ops), a context cancelled by SIGINT/SIGTERM
// after the process has announced it is draining, and a non-zero exit when run fails.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"ccplatform/pkg/buildinfo"
	"ccplatform/pkg/config"
	"ccplatform/pkg/logging"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/tracing"

	"go.uber.org/zap"
)

// Leveled is a configuration that names its log level (config.Common does).
type Leveled interface {
	Level() string
}

// RunFunc is a binary's body: it builds its parts from cfg, registers its readiness checks and
// metrics on o, and serves until ctx is done, then drains its work and returns.
type RunFunc[T Leveled] func(ctx context.Context, cfg T, log *zap.Logger, o *ops.Ops) error

// Main loads a T from the environment and calls run until a stop signal. Main exits the process.
func Main[T Leveled](name string, run RunFunc[T]) {
	os.Exit(Run(name, run))
}

// Process is what every binary reads besides its own configuration (docs/operations.md).
type Process struct {
	// Env is "development" on a developer's machine; anything else is a deployment, which must
	// not run with the development internal token.
	Env string `env:"APP_ENV" envDefault:"development"`
	// InternalToken is unset (the development token) or set; set but empty is refused everywhere
	// (config.Load: empty is empty), since every internal call would then be refused.
	InternalToken string `env:"INTERNAL_TOKEN" envDefault:"dev-internal-token"`
	// DrainDelay is how long a process answers /readyz with 503 after SIGTERM before it stops
	// taking work: the time a load balancer needs to notice.
	DrainDelay time.Duration `env:"DRAIN_DELAY" envDefault:"0s"`
	// MemoryLimit is the container's memory limit in bytes (Kubernetes: the downward API's
	// limits.memory); 0 is none. The Go runtime gets a soft limit below it (softMemoryLimit).
	MemoryLimit int64 `env:"MEMORY_LIMIT" envDefault:"0"`
}

// memoryLimitShare is the part of the container's memory limit the Go heap may use before the
// collector works harder: the rest is for the runtime's own memory, stacks and what the
// collector frees late, so that the kernel's OOM killer is not the first to act.
const memoryLimitShare = 0.9

// softMemoryLimit is the GOMEMLIMIT to set for a container limit of limit bytes, or 0 to leave
// the runtime as it is: when there is no limit, or GOMEMLIMIT was set explicitly.
func softMemoryLimit(limit int64, goMemLimitSet bool) int64 {
	if limit <= 0 || goMemLimitSet {
		return 0
	}
	return int64(float64(limit) * memoryLimitShare)
}

// Development is the APP_ENV of a developer's machine.
const Development = "development"

// ErrDevToken refuses a deployment that runs with the development internal token.
var ErrDevToken = errors.New("INTERNAL_TOKEN must be set to a secret of its own when APP_ENV is not " + Development)

// ErrEmptyToken refuses an INTERNAL_TOKEN set to the empty string.
var ErrEmptyToken = errors.New("INTERNAL_TOKEN is set but empty: set a secret, or unset it in " + Development + " for the development token")

// PlaceholderMarker marks the placeholder secrets of the Kubernetes base
// (deployments/k8s/base/kustomization.yaml): a token containing it was never replaced.
const PlaceholderMarker = "CHANGE-ME"

// ErrPlaceholderToken refuses an INTERNAL_TOKEN that still holds a placeholder, in every
// environment: anyone who has read the manifests knows it.
var ErrPlaceholderToken = errors.New("INTERNAL_TOKEN is a placeholder (it contains " + PlaceholderMarker + "): set a secret of its own")

// Check refuses settings no deployment may run with.
func (p Process) Check() error {
	if p.InternalToken == "" {
		return ErrEmptyToken
	}
	if strings.Contains(p.InternalToken, PlaceholderMarker) {
		return ErrPlaceholderToken
	}
	if p.Env != Development && p.InternalToken == config.DevInternalToken {
		return ErrDevToken
	}
	if p.DrainDelay < 0 {
		return fmt.Errorf("DRAIN_DELAY must not be negative")
	}
	if p.MemoryLimit < 0 {
		return fmt.Errorf("MEMORY_LIMIT must not be negative")
	}
	return nil
}

// Run is Main without the exit, returning the process's exit code.
func Run[T Leveled](name string, run RunFunc[T]) int {
	proc, err := config.Load[Process]()
	if err == nil {
		err = proc.Check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	_, goMemLimitSet := os.LookupEnv("GOMEMLIMIT")
	if soft := softMemoryLimit(proc.MemoryLimit, goMemLimitSet); soft > 0 {
		debug.SetMemoryLimit(soft)
	}
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
	log.Info(name+" starting", zap.String("version", buildinfo.Version),
		zap.String("revision", buildinfo.Revision()), zap.String("go", runtime.Version()), zap.String("env", proc.Env),
		zap.Int64("go_memory_limit", debug.SetMemoryLimit(-1)),
		zap.Bool("trace_export", tracing.Exporting()))

	shutdownTracing, err := tracing.Setup(context.Background(), name, buildinfo.Version)
	if err != nil {
		log.Error(name+" cannot start", zap.Error(err))
		return 1
	}
	defer func() {
		// Spans still buffered for the exporter get a few seconds to leave.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(sctx); err != nil {
			log.Warn("tracing: spans not flushed", zap.Error(err))
		}
	}()
	o := ops.New(name)
	signals, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go drainOnSignal(signals, ctx, cancel, o, proc.DrainDelay, log)
	go releaseAfterBursts(ctx, quietCheck, quietAllocs, freeOSMemory)
	if err := run(ctx, cfg, log, o); err != nil {
		log.Error(name+" stopped", zap.Error(err))
		return 1
	}
	log.Info(name + " stopped")
	return 0
}

// drainOnSignal turns a stop signal into "draining" on /readyz at once, and into the end of
// run's context delay later.
func drainOnSignal(signals, ctx context.Context, cancel context.CancelFunc, o *ops.Ops, delay time.Duration, log *zap.Logger) {
	select {
	case <-signals.Done():
	case <-ctx.Done():
		return
	}
	o.Drain()
	log.Info("draining", zap.Duration("delay", delay))
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	cancel()
}
