package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"ccplatform/pkg/cli"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/wiring"
)

const replayUsage = `usage:
  lead-worker replay-events -since RFC3339 -until RFC3339

announces again, through the lead events' slot, every lead changed in [since, until): the runbook
of a dropped or invalidated slot (docs/operations.md). Prints how many events it wrote.

environment: DATABASE_URL
`

// replay is the replay-events command: args is the command line without the program name.
func replay(ctx context.Context, s wiring.Settings, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("replay-events", stderr)
	since := fs.String("since", "", "start of the window (RFC 3339), included")
	until := fs.String("until", "", "end of the window (RFC 3339), excluded")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	from, err := time.Parse(time.RFC3339, *since)
	if err != nil {
		return cli.Usagef("replay-events: -since: %v", err)
	}
	to, err := time.Parse(time.RFC3339, *until)
	if err != nil {
		return cli.Usagef("replay-events: -until: %v", err)
	}
	if !from.Before(to) {
		return cli.Usagef("replay-events: -since must be before -until")
	}
	conn, err := wiring.OpenDB(ctx, s)
	if err != nil {
		return err
	}
	defer conn.Close()
	n, err := lead.ReplayEvents(ctx, conn, from, to)
	if err != nil {
		return fmt.Errorf("replay-events: %d written before: %w", n, err)
	}
	fmt.Fprintln(stdout, n)
	return nil
}
