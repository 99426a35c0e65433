// Command gateway-nopolicy is the bench's gateway without the route policy: the real gateway's
// wiring (ccplatform/gateway/launch) with every route open to every verified key. The bench runs
// it beside the real one and reports what the policy costs (figure (1a), docs/performance.md).
// It lives with the bench, never in a deployment.
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
	// As the real gateway's main does, so that both make request ids alike.
	uuid.EnableRandPool()
	app.Main("gateway", run)
}

func run(ctx context.Context, cfg launch.Config, log *zap.Logger, o *ops.Ops) error {
	return launch.Run(ctx, cfg, log, o, launch.Options{OpenRoutes: true})
}
