// Command ccadmin is the operators' tool that works across the platform's services as a client of
// their APIs and events: the demo data of the order, lead and call services (seed --demo), the
// telephony platform's part in demos and tests (simulate-calls, dial), and bulk imports of leads.
// It names users by e-mail and reads them from the user service's API; the user service's own
// data (its demo users and agent groups, users, API keys) is user-admin's
// (services/user/cmd/user-admin), which runs first.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"ccplatform/pkg/cli"
	"ccplatform/pkg/config"
	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/userdir"
)

// serviceTimeout bounds one request to a service.
const serviceTimeout = 10 * time.Second

// settings is everything ccadmin reads from the environment. The defaults are where the services
// and the broker are on a developer machine; a URL set to "" means that part is skipped
// (pkg/config gives a default to an unset variable only).
type settings struct {
	config.Common
	// UserURL is the user service, which names the users and agent groups the demo orders and the
	// simulated calls refer to; empty means the demo orders, leads and calls are skipped.
	UserURL string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
	// OrderURL is the order service; empty means it is not deployed and its catalogs are skipped.
	OrderURL string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
	// LeadURL is lead-api; empty means it is not deployed and its catalogs are skipped.
	LeadURL string `env:"LEAD_URL" envDefault:"http://127.0.0.1:8083"`
	// CallURL is the call service and AMQPURL the broker call-ingest reads; either empty means the
	// demo calls are skipped.
	CallURL string `env:"CALL_URL" envDefault:"http://127.0.0.1:8084"`
	AMQPURL string `env:"AMQP_URL" envDefault:"amqp://guest:guest@127.0.0.1:5672/"`
}

const usage = `usage:
  ccadmin seed --demo
  ccadmin simulate-calls --order ID [--count N]
  ccadmin dial --order ID [--dialers N] [--duration 30s]
  ccadmin pace --order ID [--duration 1m] [--speed 10]
  ccadmin import --order ID [--format csv|ndjson] FILE [--refused PATH]

seed --demo loads the order, lead and call services' demo data (idempotent); the users and agent
groups it names are the user service's, loaded before by user-admin seed.

environment: USER_URL (empty: skip demo orders, leads and calls; simulate-calls, dial and import
need it), ORDER_URL (empty: skip order catalogs and demo orders), LEAD_URL (empty: skip lead
catalogs and demo leads; simulate-calls, dial and import need it), CALL_URL and AMQP_URL (either
empty: skip demo calls), INTERNAL_TOKEN
`

func main() { cli.Main("ccadmin", usage, run) }

// env is what every command works with. stdout carries only a command's result (a listing of
// call ids, a summary), so scripts can capture it; everything else goes to stderr.
type env struct {
	cfg    settings
	stdout io.Writer
	stderr io.Writer
}

// run executes the command line args (without the program name).
func run(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	commands := cli.Commands[*env]{
		"seed":           seedCommand,          // the demo data (seed.go)
		"simulate-calls": simulateCallsCommand, // plays the telephony platform (simulate.go)
		"dial":           dialCommand,          // plays its dialers on the dialing queue (dial.go)
		"pace":           paceCommand,          // plays an order's agents and a paced dialer (pace.go)
		"import":         importCommand,        // bulk-imports a lead file through lead-api (import.go)
	}
	return commands.Run(ctx, args, usage, stdout, func(context.Context) (*env, io.Closer, error) {
		return &env{cfg: cfg, stdout: stdout, stderr: stderr}, nil, nil
	})
}

// flags is a flag set of a command that reports to stderr.
func (e *env) flags(name string) *flag.FlagSet { return cli.Flags(name, e.stderr) }

// users is the user service's directory, for a command that needs users (the agents who take
// simulated calls, the admin an import or a dialer acts for).
func (e *env) users(command string) (*userdir.Directory, error) {
	if e.cfg.UserURL == "" {
		return nil, errors.New(command + ": USER_URL is empty: the users come from the user service")
	}
	return userdir.New(svcclient.New("user", e.cfg.UserURL, e.cfg.InternalToken, serviceTimeout)), nil
}
