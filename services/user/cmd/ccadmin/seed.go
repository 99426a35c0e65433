package main

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/seed"
	"ccplatform/services/user/internal/user"
)

// seedCommand loads the demo data: users here, then the catalogs of every deployed service, then
// the demo orders with their leads and calls (seed_demo.go).
func seedCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("seed")
	demo := fs.Bool("demo", false, "load the demo users, catalogs, orders, leads and calls")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !*demo {
		return usagef("seed: pass --demo (the demo data is the only data set)")
	}
	users := user.NewStore(e.db)
	steps := []seed.Step{seed.Users(users, time.Now), seed.AgentGroups(agentgroup.NewStore(e.db), users)}
	if e.cfg.OrderURL == "" {
		steps = append(steps, seed.Skipped("order custom fields", "ORDER_URL is empty"))
	} else {
		order := svcclient.New("order", e.cfg.OrderURL, e.cfg.InternalToken, 10*time.Second)
		steps = append(steps, seed.OrderCustomFields(order))
	}
	steps = append(steps, leadCatalogs(e.cfg))
	steps = append(steps, demoActivity(e)...)
	if err := seed.Run(ctx, e.stdout, steps...); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return fmt.Errorf("%w (start that service, or set its URL variable to empty to skip its part)", err)
		}
		return err
	}
	return nil
}
