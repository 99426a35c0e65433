package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"testing"

	"ccplatform/pkg/cli"
	"ccplatform/pkg/config"
	"ccplatform/tools/internal/usertest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var userURL string

// TestMain starts the real user service with its demo data: the commands that act for the admin
// or hand calls to the agents find them through its API.
func TestMain(m *testing.M) {
	usertest.Main(m, "tools_ccadmin", func(url string) int {
		userURL = url
		return m.Run()
	})
}

// testSettings name the test's user service and no other: every other service's part is skipped.
func testSettings() settings {
	return settings{Common: config.Common{InternalToken: usertest.Token}, UserURL: userURL}
}

// ccadmin runs one command line and returns what it wrote to stdout and stderr.
func ccadmin(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), testSettings(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestErrors(t *testing.T) {
	tests := map[string]struct {
		args    []string
		usage   bool
		message string
	}{
		"no command":               {args: nil, usage: true},
		"unknown command":          {args: []string{"frobnicate"}, usage: true},
		"user-admin's command":     {args: []string{"apikey", "create", "--email", "a@b.c"}, usage: true},
		"seed without demo":        {args: []string{"seed"}, usage: true},
		"seed stray argument":      {args: []string{"seed", "--demo", "extra"}, usage: true},
		"dial without order":       {args: []string{"dial"}, usage: true},
		"dial too many dialers":    {args: []string{"dial", "--order", "1", "--dialers", "33"}, usage: true},
		"dial no duration":         {args: []string{"dial", "--order", "1", "--duration", "0s"}, usage: true},
		"import without order":     {args: []string{"import", "leads.csv"}, usage: true},
		"import without file":      {args: []string{"import", "--order", "1"}, usage: true},
		"import two files":         {args: []string{"import", "--order", "1", "a.csv", "b.csv"}, usage: true},
		"import unknown extension": {args: []string{"import", "--order", "1", "leads.xlsx"}, usage: true},
		"import unknown format":    {args: []string{"import", "--order", "1", "--format", "xml", "leads.csv"}, usage: true},
		// The test's settings name no lead service and no broker.
		"simulate without lead service": {args: []string{"simulate-calls", "--order", "1"}, message: "LEAD_URL is empty"},
		"dial without lead service":     {args: []string{"dial", "--order", "1"}, message: "LEAD_URL is empty"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := ccadmin(t, tc.args...)
			require.Error(t, err)
			assert.Empty(t, out, "nothing on stdout when a command fails")
			var ue cli.UsageError
			assert.Equal(t, tc.usage, errors.As(err, &ue), "usage error: %v", err)
			assert.ErrorContains(t, err, tc.message)
		})
	}
}

func TestCommandsThatNeedUsersRefuseAnEmptyUserURL(t *testing.T) {
	cfg := testSettings()
	cfg.UserURL, cfg.LeadURL, cfg.AMQPURL = "", "http://127.0.0.1:1", "amqp://127.0.0.1:1/"
	for _, args := range [][]string{
		{"simulate-calls", "--order", "1"},
		{"dial", "--order", "1"},
	} {
		var stdout bytes.Buffer
		err := run(context.Background(), cfg, args, &stdout, &bytes.Buffer{})
		assert.ErrorContains(t, err, args[0]+": USER_URL is empty")
		assert.Empty(t, stdout.String())
	}
}

func TestHelp(t *testing.T) {
	out, _, err := ccadmin(t, "help")
	require.NoError(t, err)
	assert.Contains(t, out, "ccadmin seed --demo")
	assert.Contains(t, out, "ccadmin simulate-calls --order ID")
	assert.NotContains(t, out, "apikey", "keys are user-admin's")
	_, _, err = ccadmin(t, "dial", "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
}
