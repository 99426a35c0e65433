// Command ccadmin is the operators' tool for the user service's data: demo seeding, API keys and
// users. It migrates the users schema itself, so it works before the service has ever run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"ccplatform/pkg/config"
	"ccplatform/services/user/internal/migrations"

	"github.com/jmoiron/sqlx"
)

// defaultOrderURL is where the order service listens on a developer machine.
const defaultOrderURL = "http://127.0.0.1:8082"

// defaultAMQPURL is the broker on a developer machine.
const defaultAMQPURL = "amqp://guest:guest@127.0.0.1:5672/"

// settings is everything ccadmin reads from the environment.
type settings struct {
	config.Common
	config.Database
	// OrderURL is the order service; empty means it is not deployed and its catalogs are skipped.
	OrderURL string `env:"ORDER_URL"`
	// LeadURL is lead-api; empty means it is not deployed and its catalogs are skipped.
	LeadURL string `env:"LEAD_URL"`
	// CallURL is the call service and AMQPURL the broker call-ingest reads; either empty means the
	// demo calls are skipped.
	CallURL string `env:"CALL_URL"`
	AMQPURL string `env:"AMQP_URL"`
}

const usage = `usage:
  ccadmin seed --demo
  ccadmin apikey create (--user ID | --email E) [--name LABEL] [--scopes a,b] [--expires 90d|2027-01-31]
  ccadmin apikey revoke (--id ID | --key KEY)
  ccadmin apikey list [--user ID | --email E]
  ccadmin user create --email E [--name N] [--last-name L] [--access-group G] [--active=true|false]
      [--email-notifications=true|false] [--email-priority=urgent|none]
      [--messenger-notifications=true|false] [--messenger-chat-id C] [--messenger-priority=urgent|none]
  ccadmin user set-active --id ID --active=true|false
  ccadmin user list
  ccadmin dial --order ID [--dialers N] [--duration 30s]
  ccadmin import --order ID [--format csv|ndjson] FILE [--refused PATH]

environment: DATABASE_URL, ORDER_URL (empty: skip order catalogs and demo orders), LEAD_URL
(empty: skip lead catalogs and demo leads; import needs it), CALL_URL and AMQP_URL (either empty:
skip demo calls), INTERNAL_TOKEN
`

func main() {
	cfg, err := config.Load[settings]()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ccadmin:", err)
		os.Exit(2)
	}
	// The env library treats a variable set to "" like an unset one; ORDER_URL="" must mean
	// "skip", so only a truly unset variable takes the default.
	if _, set := os.LookupEnv("ORDER_URL"); !set {
		cfg.OrderURL = defaultOrderURL
	}
	if _, set := os.LookupEnv("LEAD_URL"); !set {
		cfg.LeadURL = defaultLeadURL
	}
	if _, set := os.LookupEnv("CALL_URL"); !set {
		cfg.CallURL = defaultCallURL
	}
	if _, set := os.LookupEnv("AMQP_URL"); !set {
		cfg.AMQPURL = defaultAMQPURL
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var ue usageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "ccadmin: %v\n\n%s", err, usage)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ccadmin:", err)
		os.Exit(1)
	}
}

// usageError is a command line that names no command or breaks a command's rules.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

// env is what every command works with. stdout carries only a command's result (a key, a
// listing), so scripts can capture it; everything else goes to stderr.
type env struct {
	cfg    settings
	db     *sqlx.DB
	stdout io.Writer
	stderr io.Writer
}

// run executes the command line args (without the program name).
func run(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	commands := map[string]func(context.Context, *env, []string) error{
		"seed":   seedCommand,
		"apikey": apikeyCommand,
		"user":   userCommand,

		"simulate-calls": simulateCallsCommand, // plays the telephony platform (simulate.go)
		"dial":           dialCommand,          // plays its dialers on the dialing queue (dial.go)
		"import":         importCommand,        // bulk-imports a lead file through lead-api (import.go)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return usagef("unknown command %q", args[0])
	}
	conn, err := migrations.Schema.Open(ctx, cfg.Database.URL, 4)
	if err != nil {
		return err
	}
	defer conn.Close()
	return cmd(ctx, &env{cfg: cfg, db: conn, stdout: stdout, stderr: stderr}, args[1:])
}

// subcommand picks the subcommand of a command group.
func subcommand(group string, args []string, subs map[string]func([]string) error) error {
	if len(args) == 0 {
		return usagef("%s: no subcommand given", group)
	}
	sub, ok := subs[args[0]]
	if !ok {
		return usagef("%s: unknown subcommand %q", group, args[0])
	}
	return sub(args[1:])
}

// flags is a flag set that reports to stderr and returns errors instead of exiting.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses args, turning a bad flag into a usage error and refusing stray arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// parseFile parses args that name one FILE among the flags, on either side of it: flag stops at
// the first argument, so what follows FILE is parsed again.
func parseFile(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() == 0 {
		return "", usagef("%s: no FILE given", fs.Name())
	}
	return fs.Arg(0), parse(fs, fs.Args()[1:])
}

// isSet reports whether a flag was given on the command line (its default does not count).
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
