// Command gateway is the platform's public entry point: it authenticates API keys, limits each
// key's rate and body size, and forwards the contract's routes to the services that answer them.
// Its configuration and wiring are package launch.
package main

import (
	"context"

	"ccplatform/gateway/launch"

	"ccplatform/pkg/app"
	"ccplatform/pkg/ops"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

func main() {
	// Every public request without an X-Request-Id gets a random (v4) id. Drawn from a pool
	// refilled in batches, that costs no getrandom system call per request; the ids are for
	// tracing, not secrets. It must be set before any id is made, hence here.
	uuid.EnableRandPool()
	app.Main("gateway", run)
}

// run is the gateway as deployed: every route's policy enforced.
func run(ctx context.Context, cfg launch.Config, log *zap.Logger, o *ops.Ops) error {
	return launch.Run(ctx, cfg, log, o, launch.Options{})
}
