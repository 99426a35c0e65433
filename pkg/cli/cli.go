// Package cli is the command-line kit of the operator tools (services/user/cmd/user-admin,
// tools/cmd/ccadmin): their main, the dispatch of a command line to its command, flag sets that
// report instead of exiting, usage errors, and the exit codes scripts rely on. The tools live in
// different modules, so this is the one place both can share.
package cli

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
)

// Main is a tool's main function: it reads the tool's settings S from the environment (exit code
// 2 when they do not load), runs the command line on a context that an interrupt or SIGTERM
// cancels, and exits with Report's code. run gets the command line without the program name;
// stdout is for a command's result only, so that scripts can capture it.
func Main[S any](tool, usage string, run func(ctx context.Context, cfg S, args []string, stdout, stderr io.Writer) error) {
	cfg, err := config.Load[S]()
	if err != nil {
		fmt.Fprintln(os.Stderr, tool+":", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(Report(os.Stderr, tool, usage, err))
}

// Commands are a tool's commands by name. Each runs on the arguments after its name, with E:
// what every command of the tool works with (a database, the service URLs, the output).
type Commands[E any] map[string]func(ctx context.Context, e E, args []string) error

// Run runs the command that args (the command line without the program name) names. A help
// request prints usage to stdout; no command or an unknown one is a usage error. open makes the
// commands' E only once the command is known, so that a help request or a mistyped name needs
// nothing to be up; the closer it returns, when not nil, is closed after the command.
func (cs Commands[E]) Run(ctx context.Context, args []string, usage string, stdout io.Writer, open func(context.Context) (E, io.Closer, error)) error {
	if len(args) == 0 {
		return Usagef("no command given")
	}
	cmd, ok := cs[args[0]]
	if !ok {
		if isHelp(args[0]) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return Usagef("unknown command %q", args[0])
	}
	e, closer, err := open(ctx)
	if err != nil {
		return err
	}
	if closer != nil {
		defer closer.Close()
	}
	return cmd(ctx, e, args[1:])
}

// UsageError is a command line that names no command or breaks a command's rules: Report prints
// the usage after it and asks for exit code 2.
type UsageError struct{ msg string }

func (e UsageError) Error() string { return e.msg }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{msg: fmt.Sprintf(format, args...)}
}

// isHelp reports whether a tool's first argument asks for its usage.
func isHelp(arg string) bool { return arg == "help" || arg == "-h" || arg == "--help" }

// Report writes err for the operator, followed by the usage when it is a UsageError, and returns
// the exit code: 0 for success or a help request, 2 for a usage error, 1 for any other failure.
func Report(w io.Writer, tool, usage string, err error) int {
	var ue UsageError
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(w, "%s: %v\n\n%s", tool, err, usage)
		return 2
	}
	fmt.Fprintf(w, "%s: %v\n", tool, err)
	return 1
}

// Subcommand runs the subcommand of a command group that args name.
func Subcommand(group string, args []string, subs map[string]func([]string) error) error {
	if len(args) == 0 {
		return Usagef("%s: no subcommand given", group)
	}
	sub, ok := subs[args[0]]
	if !ok {
		return Usagef("%s: unknown subcommand %q", group, args[0])
	}
	return sub(args[1:])
}

// Flags is a flag set that reports to w and returns errors instead of exiting: stdout carries
// only a command's result, so that scripts can capture it.
func Flags(name string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	return fs
}

// Parse parses args, turning a bad flag into a usage error and refusing stray arguments.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// ParseFile parses args that name one FILE among the flags, on either side of it: flag stops at
// the first argument, so what follows FILE is parsed again.
func ParseFile(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", Usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() == 0 {
		return "", Usagef("%s: no FILE given", fs.Name())
	}
	return fs.Arg(0), Parse(fs, fs.Args()[1:])
}

// IsSet reports whether a flag was given on the command line (its default does not count).
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
