package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"ccplatform/pkg/access"
	"ccplatform/pkg/cli"
	"ccplatform/services/user/internal/apikey"
	"ccplatform/services/user/internal/user"
)

func apikeyCommand(ctx context.Context, e *env, args []string) error {
	keys := apikey.NewStore(e.db)
	return cli.Subcommand("apikey", args, map[string]func([]string) error{
		"create": func(args []string) error { return apikeyCreate(ctx, e, keys, args) },
		"revoke": func(args []string) error { return apikeyRevoke(ctx, e, keys, args) },
		"list":   func(args []string) error { return apikeyList(ctx, e, keys, args) },
	})
}

// apikeyCreate prints the new key alone on stdout: it is shown this once and never again.
func apikeyCreate(ctx context.Context, e *env, keys *apikey.Store, args []string) error {
	fs := e.flags("apikey create")
	userID := fs.Int64("user", 0, "id of the user the key speaks for")
	email := fs.String("email", "", "e-mail of the user the key speaks for")
	name := fs.String("name", "", "label that tells the key apart in listings")
	scopes := fs.String("scopes", "", "comma-separated scopes that narrow the key (none: the user's full rights): "+strings.Join(access.ScopeNames(), ", "))
	expires := fs.String("expires", "", "when the key ends: 90d, 2027-01-31 (through that day, UTC) or an RFC 3339 time; none: never")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if cli.IsSet(fs, "user") == cli.IsSet(fs, "email") {
		return cli.Usagef("apikey create: give exactly one of --user and --email")
	}
	u, err := findUser(ctx, user.NewStore(e.db), *userID, *email)
	if err != nil {
		return err
	}
	n := apikey.New{Name: *name}
	if *scopes != "" {
		if n.Scopes, err = apikey.CheckScopes(strings.Split(*scopes, ","), u.AccessGroup); err != nil {
			return cli.Usagef("apikey create: --scopes: %v", err)
		}
	}
	if n.ExpiresAt, err = apikey.ParseExpiry(*expires, time.Now()); err != nil {
		return cli.Usagef("apikey create: --expires: %v", err)
	}
	k, plain, err := keys.Create(ctx, u.ID, n)
	if err != nil {
		return err
	}
	if !u.IsActive {
		fmt.Fprintf(e.stderr, "warning: user %d is inactive; the key works only once the user is active again\n", u.ID)
	}
	fmt.Fprintf(e.stderr, "created api key %d (%s...) for user %d %s\n", k.ID, k.Prefix, u.ID, u.Email)
	fmt.Fprintln(e.stdout, plain)
	return nil
}

func findUser(ctx context.Context, users *user.Store, id int64, email string) (user.User, error) {
	if email != "" {
		return users.GetByEmail(ctx, email)
	}
	return users.Get(ctx, id)
}

func apikeyRevoke(ctx context.Context, e *env, keys *apikey.Store, args []string) error {
	fs := e.flags("apikey revoke")
	id := fs.Int64("id", 0, "id of the key")
	key := fs.String("key", "", "the key itself")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if cli.IsSet(fs, "id") == cli.IsSet(fs, "key") {
		return cli.Usagef("apikey revoke: give exactly one of --id and --key")
	}
	if cli.IsSet(fs, "key") {
		revoked, err := keys.RevokeKey(ctx, *key)
		if err != nil {
			return err
		}
		*id = revoked
	} else if err := keys.Revoke(ctx, *id); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "revoked api key %d\n", *id)
	return nil
}

func apikeyList(ctx context.Context, e *env, keys *apikey.Store, args []string) error {
	fs := e.flags("apikey list")
	userID := fs.Int64("user", 0, "only the keys of this user")
	email := fs.String("email", "", "only the keys of the user with this e-mail")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if cli.IsSet(fs, "user") && cli.IsSet(fs, "email") {
		return cli.Usagef("apikey list: give at most one of --user and --email")
	}
	var ids []int64
	if cli.IsSet(fs, "user") || cli.IsSet(fs, "email") {
		u, err := findUser(ctx, user.NewStore(e.db), *userID, *email)
		if err != nil {
			return err
		}
		ids = []int64{u.ID}
	}
	list, err := keys.List(ctx, ids)
	if err != nil {
		return err
	}
	// Never the secret: only its prefix, which tells keys apart.
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tUSER\tNAME\tPREFIX\tSCOPES\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
	for _, k := range list {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s...\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.UserID, orDash(k.Name), k.Prefix,
			orDash(strings.Join(k.Scopes, ",")), k.CreatedAt.UTC().Format(time.DateTime), timeOrDash(k.LastUsedAt),
			timeOrDash(k.ExpiresAt), timeOrDash(k.RevokedAt))
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.DateTime)
}
