package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/demo"
	"ccplatform/services/user/internal/migrations"
	"ccplatform/services/user/internal/user"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "user_admin", func(url string) int {
		testURL = url
		return m.Run()
	})
}

// testSettings point at the package's database.
func testSettings() settings {
	return settings{Common: config.Common{InternalToken: "t"}, Database: config.Database{URL: testURL}}
}

// userAdmin runs one command line and returns what it wrote to stdout and stderr.
func userAdmin(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), testSettings(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func openDB(t *testing.T) *sqlx.DB {
	t.Helper()
	conn, err := db.Open(context.Background(), testURL, migrations.Schema.Name, 2)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func TestSeedIsIdempotent(t *testing.T) {
	ctx := context.Background()
	out, _, err := userAdmin(t, "seed")
	require.NoError(t, err)
	assert.Equal(t, "seed users: 9 demo users upserted (admin: "+demo.AdminEmail+")\n"+
		"seed agent groups: 2 demo agent groups ensured\n", out, "one line a part, on stdout")

	conn := openDB(t)
	users := user.NewStore(conn)
	groups := agentgroup.NewStore(conn)
	firstUsers, err := users.Count(ctx, user.Filter{})
	require.NoError(t, err)
	firstGroups, err := groups.Count(ctx, agentgroup.Filter{})
	require.NoError(t, err)

	_, _, err = userAdmin(t, "seed")
	require.NoError(t, err)
	secondUsers, err := users.Count(ctx, user.Filter{})
	require.NoError(t, err)
	secondGroups, err := groups.Count(ctx, agentgroup.Filter{})
	require.NoError(t, err)
	assert.Equal(t, firstUsers, secondUsers)
	assert.Equal(t, len(demo.Users(time.Now())), secondUsers)
	assert.Equal(t, firstGroups, secondGroups)
	assert.Equal(t, len(demo.AgentGroups()), secondGroups)
}

func TestAPIKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	_, _, err := userAdmin(t, "seed")
	require.NoError(t, err)
	conn := openDB(t)
	keys := apikey.NewStore(conn)
	admin, err := user.NewStore(conn).GetByEmail(ctx, demo.AdminEmail)
	require.NoError(t, err)

	out, errOut, err := userAdmin(t, "apikey", "create", "--email", demo.AdminEmail, "--name", "dev")
	require.NoError(t, err)
	key := strings.TrimSuffix(out, "\n")
	assert.Equal(t, key+"\n", out, "stdout holds the key and nothing else")
	assert.True(t, apikey.WellFormed(key), key)
	assert.Contains(t, errOut, "created api key")
	assert.NotContains(t, errOut, key, "the key is printed once, on stdout")

	id, err := keys.Verify(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, admin.ID, id.UserID)
	assert.Equal(t, "admin", id.AccessGroup)
	assert.Positive(t, id.KeyID)
	assert.Empty(t, id.Scopes, "no scopes: the user's full rights")

	// Deactivating the user stops the key; activating brings it back.
	_, _, err = userAdmin(t, "user", "set-active", "--id", strconv.FormatInt(admin.ID, 10), "--active=false")
	require.NoError(t, err)
	_, err = keys.Verify(ctx, key)
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))
	_, _, err = userAdmin(t, "user", "set-active", "--id", strconv.FormatInt(admin.ID, 10), "--active=true")
	require.NoError(t, err)
	_, err = keys.Verify(ctx, key)
	require.NoError(t, err)

	// Revoke by the key itself.
	_, _, err = userAdmin(t, "apikey", "revoke", "--key", key)
	require.NoError(t, err)
	_, err = keys.Verify(ctx, key)
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))

	// Create by user id, revoke by key id.
	out, _, err = userAdmin(t, "apikey", "create", "--user", strconv.FormatInt(admin.ID, 10))
	require.NoError(t, err)
	key2 := strings.TrimSpace(out)
	_, err = keys.Verify(ctx, key2)
	require.NoError(t, err)
	list, err := keys.List(ctx, []int64{admin.ID})
	require.NoError(t, err)
	require.NotEmpty(t, list)
	_, _, err = userAdmin(t, "apikey", "revoke", "--id", strconv.FormatInt(list[0].ID, 10))
	require.NoError(t, err)
	_, err = keys.Verify(ctx, key2)
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))

	out, _, err = userAdmin(t, "apikey", "list", "--user", strconv.FormatInt(admin.ID, 10))
	require.NoError(t, err)
	assert.Contains(t, out, key2[:12]+"...")
	assert.NotContains(t, out, key2)
}

func TestAPIKeyScopesAndExpiry(t *testing.T) {
	ctx := context.Background()
	_, _, err := userAdmin(t, "seed")
	require.NoError(t, err)
	keys := apikey.NewStore(openDB(t))

	out, _, err := userAdmin(t, "apikey", "create", "--email", "client@demo.callcenter.local", "--name", "crm",
		"--scopes", "leads:read,leads:write", "--expires", "90d")
	require.NoError(t, err)
	id, err := keys.Verify(ctx, strings.TrimSpace(out))
	require.NoError(t, err)
	assert.Equal(t, []string{"leads:read", "leads:write"}, id.Scopes)

	list, _, err := userAdmin(t, "apikey", "list", "--email", "client@demo.callcenter.local")
	require.NoError(t, err)
	assert.Contains(t, list, "SCOPES")
	assert.Contains(t, list, "leads:read,leads:write")
	assert.Contains(t, list, time.Now().AddDate(0, 0, 90).UTC().Format(time.DateOnly))

	// A scope beyond the user's group, an unknown scope, an expiry in the past: refused.
	for _, args := range [][]string{
		{"--email", "client@demo.callcenter.local", "--scopes", "notifications:send"},
		{"--email", "client@demo.callcenter.local", "--scopes", "leads:delete"},
		{"--email", "client@demo.callcenter.local", "--expires", "2020-01-01"},
	} {
		_, _, err := userAdmin(t, append([]string{"apikey", "create"}, args...)...)
		assert.ErrorContains(t, err, "apikey create: --", "%v", args)
	}
}

func TestUserList(t *testing.T) {
	_, _, err := userAdmin(t, "seed")
	require.NoError(t, err)
	out, _, err := userAdmin(t, "user", "list")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.GreaterOrEqual(t, len(lines), 10)
	assert.Regexp(t, `^ID\s+EMAIL\s+ACCESS GROUP\s+ACTIVE$`, lines[0])
	assert.Regexp(t, `admin@demo\.callcenter\.local\s+admin\s+true`, out)
	assert.Regexp(t, `newcomer@demo\.callcenter\.local\s+-\s+true`, out)
	assert.Regexp(t, `former\.agent@demo\.callcenter\.local\s+call-center\s+false`, out)
}

func TestErrors(t *testing.T) {
	tests := map[string]struct {
		args  []string
		usage bool
		kind  apperr.Kind
	}{
		"no command":               {args: nil, usage: true},
		"unknown command":          {args: []string{"frobnicate"}, usage: true},
		"seed with a flag":         {args: []string{"seed", "--demo"}, usage: true},
		"apikey without sub":       {args: []string{"apikey"}, usage: true},
		"apikey unknown sub":       {args: []string{"apikey", "rotate"}, usage: true},
		"create with both":         {args: []string{"apikey", "create", "--user", "1", "--email", "a@b.c"}, usage: true},
		"create with neither":      {args: []string{"apikey", "create"}, usage: true},
		"create unknown flag":      {args: []string{"apikey", "create", "--owner", "1"}, usage: true},
		"create stray argument":    {args: []string{"apikey", "create", "--user", "1", "extra"}, usage: true},
		"create bad id":            {args: []string{"apikey", "create", "--user", "x"}, usage: true},
		"revoke with neither":      {args: []string{"apikey", "revoke"}, usage: true},
		"set-active without flag":  {args: []string{"user", "set-active", "--id", "1"}, usage: true},
		"set-active bad bool":      {args: []string{"user", "set-active", "--id", "1", "--active=maybe"}, usage: true},
		"another tool's command":   {args: []string{"simulate-calls", "--order", "1"}, usage: true},
		"create for unknown user":  {args: []string{"apikey", "create", "--user", "987654"}, kind: apperr.NotFound},
		"create for unknown email": {args: []string{"apikey", "create", "--email", "nobody@x.io"}, kind: apperr.NotFound},
		"revoke unknown id":        {args: []string{"apikey", "revoke", "--id", "987654"}, kind: apperr.NotFound},
		"set-active unknown user":  {args: []string{"user", "set-active", "--id", "987654", "--active=false"}, kind: apperr.NotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := userAdmin(t, tc.args...)
			require.Error(t, err)
			assert.Empty(t, out, "nothing on stdout when a command fails")
			var ue cli.UsageError
			assert.Equal(t, tc.usage, errors.As(err, &ue), "usage error: %v", err)
			if !tc.usage {
				assert.Equal(t, tc.kind, apperr.KindOf(err), "%v", err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	out, _, err := userAdmin(t, "help")
	require.NoError(t, err)
	assert.Contains(t, out, "user-admin apikey create")
	assert.Contains(t, out, "user-admin seed\n")
	_, _, err = userAdmin(t, "apikey", "create", "-h")
	assert.ErrorIs(t, err, flag.ErrHelp)
}
