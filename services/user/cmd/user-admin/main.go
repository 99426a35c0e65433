// Command user-admin is the user service's operator tool: its demo users and agent groups, API
// keys and users, written to the users schema directly. It migrates the schema itself, so it works
// before the service has ever run, and it needs no API key: it is how the first one is made.
// Tools that drive several services (the other services' demo data, simulated calls, imports)
// are clients of their APIs and live in the tools module (tools/cmd/ccadmin).
package main

import (
	"context"
	"flag"
	"io"

	"ccplatform/pkg/cli"
	"ccplatform/pkg/config"
	"ccplatform/services/user/internal/migrations"

	"github.com/jmoiron/sqlx"
)

// settings is everything user-admin reads from the environment.
type settings struct {
	config.Common
	config.Database
}

const usage = `usage:
  user-admin seed
  user-admin apikey create (--user ID | --email E) [--name LABEL] [--scopes a,b] [--expires 90d|2027-01-31]
  user-admin apikey revoke (--id ID | --key KEY)
  user-admin apikey list [--user ID | --email E]
  user-admin user create --email E [--name N] [--last-name L] [--access-group G] [--active=true|false]
      [--email-notifications=true|false] [--email-priority=urgent|none]
      [--messenger-notifications=true|false] [--messenger-chat-id C] [--messenger-priority=urgent|none]
  user-admin user set-active --id ID --active=true|false
  user-admin user list

seed loads the demo users and agent groups (idempotent); the other services' demo data is
ccadmin seed --demo (tools/cmd/ccadmin), which needs these first.

environment: DATABASE_URL
`

func main() { cli.Main("user-admin", usage, run) }

// env is what every command works with. stdout carries only a command's result (a key, a
// listing), so scripts can capture it; everything else goes to stderr.
type env struct {
	db     *sqlx.DB
	stdout io.Writer
	stderr io.Writer
}

// run executes the command line args (without the program name).
func run(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	commands := cli.Commands[*env]{
		"seed":   seedCommand,
		"apikey": apikeyCommand,
		"user":   userCommand,
	}
	return commands.Run(ctx, args, usage, stdout, func(ctx context.Context) (*env, io.Closer, error) {
		conn, err := migrations.Schema.Open(ctx, cfg.Database.URL, 4)
		if err != nil {
			return nil, nil, err
		}
		return &env{db: conn, stdout: stdout, stderr: stderr}, conn, nil
	})
}

// flags is a flag set of a command that reports to stderr.
func (e *env) flags(name string) *flag.FlagSet { return cli.Flags(name, e.stderr) }
