package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRefusesStrayArgumentsAndBadFlags(t *testing.T) {
	fs := Flags("apikey create", io.Discard)
	fs.Int64("user", 0, "")
	var ue UsageError
	assert.ErrorAs(t, Parse(fs, []string{"--user", "1", "extra"}), &ue)
	assert.EqualError(t, Parse(Flags("x", io.Discard), []string{"extra"}), `x: unexpected argument "extra"`)
	assert.ErrorAs(t, Parse(fs, []string{"--user", "x"}), &ue)
	assert.ErrorIs(t, Parse(fs, []string{"-h"}), flag.ErrHelp, "a help request is no usage error")
}

func TestParseFileTakesFlagsOnEitherSide(t *testing.T) {
	fs := Flags("import", io.Discard)
	order := fs.Int64("order", 0, "")
	refused := fs.String("refused", "", "")
	file, err := ParseFile(fs, []string{"--order", "42", "leads.csv", "--refused", "bad.csv"})
	require.NoError(t, err)
	assert.Equal(t, "leads.csv", file)
	assert.Equal(t, int64(42), *order)
	assert.Equal(t, "bad.csv", *refused)
	assert.True(t, IsSet(fs, "refused"))

	var ue UsageError
	_, err = ParseFile(Flags("import", io.Discard), nil)
	assert.ErrorAs(t, err, &ue)
	_, err = ParseFile(Flags("import", io.Discard), []string{"a.csv", "b.csv"})
	assert.ErrorAs(t, err, &ue)
}

func TestIsSetIgnoresDefaults(t *testing.T) {
	fs := Flags("user set-active", io.Discard)
	fs.Bool("active", false, "")
	fs.Int64("id", 0, "")
	require.NoError(t, Parse(fs, []string{"--id", "0"}))
	assert.True(t, IsSet(fs, "id"), "set to its default value is still set")
	assert.False(t, IsSet(fs, "active"))
}

func TestSubcommand(t *testing.T) {
	var got []string
	subs := map[string]func([]string) error{"list": func(args []string) error { got = args; return nil }}
	require.NoError(t, Subcommand("apikey", []string{"list", "--user", "1"}, subs))
	assert.Equal(t, []string{"--user", "1"}, got)
	var ue UsageError
	assert.ErrorAs(t, Subcommand("apikey", nil, subs), &ue)
	assert.ErrorAs(t, Subcommand("apikey", []string{"rotate"}, subs), &ue)
}

func TestReport(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		code int
		out  string
	}{
		"success":       {nil, 0, ""},
		"help":          {fmt.Errorf("apikey create: %w", flag.ErrHelp), 0, ""},
		"usage":         {fmt.Errorf("wrapped: %w", Usagef("no command given")), 2, "tool: wrapped: no command given\n\nusage: tool\n"},
		"other failure": {errors.New("user 7 not found"), 1, "tool: user 7 not found\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			assert.Equal(t, tc.code, Report(&out, "tool", "usage: tool\n", tc.err))
			assert.Equal(t, tc.out, out.String())
		})
	}
}

// closer records that it was closed.
type closer struct{ closed bool }

func (c *closer) Close() error { c.closed = true; return nil }

func TestCommandsRun(t *testing.T) {
	var got []string
	commands := Commands[string]{"seed": func(_ context.Context, e string, args []string) error {
		got = append([]string{e}, args...)
		return nil
	}}
	var opened int
	c := &closer{}
	open := func(context.Context) (string, io.Closer, error) { opened++; return "env", c, nil }
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := commands.Run(context.Background(), args, "usage: tool\n", &out, open)
		return out.String(), err
	}

	out, err := run("seed", "--demo")
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Equal(t, []string{"env", "--demo"}, got, "the command gets the env and the arguments after its name")
	assert.True(t, c.closed, "closed after the command")

	opened = 0
	for _, help := range []string{"help", "-h", "--help"} {
		out, err := run(help)
		require.NoError(t, err)
		assert.Equal(t, "usage: tool\n", out)
	}
	var ue UsageError
	_, err = run()
	assert.ErrorAs(t, err, &ue)
	_, err = run("frobnicate")
	assert.ErrorAs(t, err, &ue)
	assert.EqualError(t, err, `unknown command "frobnicate"`)
	assert.Zero(t, opened, "help and a mistyped name open nothing")

	refused := errors.New("database is down")
	fail := func(context.Context) (string, io.Closer, error) { return "", nil, refused }
	assert.ErrorIs(t, commands.Run(context.Background(), []string{"seed"}, "", io.Discard, fail), refused)
}
