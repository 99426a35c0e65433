package main

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/cli"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/demo"
	"ccplatform/services/user/internal/user"
)

// seedCommand loads the user service's demo data: the users, then the agent groups that bind
// them. Each part reports one "seed <part>: <summary>" line, as ccadmin seed --demo does for the
// other services' parts, so that one log reads through both.
func seedCommand(ctx context.Context, e *env, args []string) error {
	if err := cli.Parse(e.flags("seed"), args); err != nil {
		return err
	}
	users := user.NewStore(e.db)
	summary, err := demo.LoadUsers(ctx, users, time.Now())
	if err != nil {
		return fmt.Errorf("seed users: %w", err)
	}
	fmt.Fprintf(e.stdout, "seed users: %s\n", summary)
	if summary, err = demo.LoadAgentGroups(ctx, agentgroup.NewStore(e.db), users); err != nil {
		return fmt.Errorf("seed agent groups: %w", err)
	}
	fmt.Fprintf(e.stdout, "seed agent groups: %s\n", summary)
	return nil
}
