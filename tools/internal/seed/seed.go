// Package seed loads the demo data of package demo into the services that keep it, through each
// service's API as any client would: the custom-field catalogs of the order and lead services,
// the demo orders, their leads, and their calls (published as the telephony platform does). The
// user service's own demo data (users, agent groups) is loaded before by user-admin seed; the
// steps here find those users through the user service's API. Every step finds what it made by a
// natural key (a code) and makes only what is missing, so seeding can run on every start.
package seed

import (
	"context"
	"fmt"
	"io"

	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/userdir"
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

// AsUser runs step on behalf of the user with email (looked up in the user service when the step
// runs), so that what the step creates through other services names that user as its author
// instead of none.
func AsUser(users *userdir.Directory, email string, step Step) Step {
	return Step{Name: step.Name, Run: func(ctx context.Context) (string, error) {
		u, err := users.ByEmail(ctx, email)
		if err != nil {
			return "", fmt.Errorf("author %s: %w", email, err)
		}
		return step.Run(svcclient.WithCaller(ctx, int64(u.Id), string(u.AccessGroup)))
	}}
}
