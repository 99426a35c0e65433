// Package seed loads the demo data that makes a fresh platform usable at once: users of every
// access group, and the catalogs other services keep (order custom fields), each loaded through
// the owning service's internal API. Every step upserts by a natural key (e-mail, code), so seeding
// can run on every start.
package seed

import (
	"context"
	"fmt"
	"io"

	"ccplatform/pkg/svcclient"
	"ccplatform/services/user/internal/user"
)

// Step is one part of the demo data. Steps run in order, and each can run any number of times
// with the same result.
type Step struct {
	Name string
	// Run loads the part and returns a one-line summary for the operator.
	Run func(ctx context.Context) (string, error)
}

// Run runs steps in order, reporting each to out; it stops at the first failure, since later parts
// may refer to earlier ones.
func Run(ctx context.Context, out io.Writer, steps ...Step) error {
	for _, s := range steps {
		summary, err := s.Run(ctx)
		if err != nil {
			return fmt.Errorf("seed %s: %w", s.Name, err)
		}
		fmt.Fprintf(out, "seed %s: %s\n", s.Name, summary)
	}
	return nil
}

// Skipped is a step that loads nothing and says why, for a part whose service is not deployed.
func Skipped(name, reason string) Step {
	return Step{Name: name, Run: func(context.Context) (string, error) { return "skipped: " + reason, nil }}
}

// AsUser runs step on behalf of the user with email (looked up when the step runs, after the
// users step made it), so that what the step creates through other services names that user as
// its author instead of none.
func AsUser(users *user.Store, email string, step Step) Step {
	return Step{Name: step.Name, Run: func(ctx context.Context) (string, error) {
		u, err := users.GetByEmail(ctx, email)
		if err != nil {
			return "", fmt.Errorf("author %s: %w", email, err)
		}
		return step.Run(svcclient.WithCaller(ctx, u.ID, string(u.AccessGroup)))
	}}
}
