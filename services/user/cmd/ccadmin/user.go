package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"ccplatform/services/user/internal/user"
)

func userCommand(ctx context.Context, e *env, args []string) error {
	users := user.NewStore(e.db)
	return subcommand("user", args, map[string]func([]string) error{
		"set-active": func(args []string) error { return userSetActive(ctx, e, users, args) },
		"list":       func(args []string) error { return userList(ctx, e, users, args) },
	})
}

func userSetActive(ctx context.Context, e *env, users *user.Store, args []string) error {
	fs := e.flags("user set-active")
	id := fs.Int64("id", 0, "id of the user")
	active := fs.Bool("active", false, "true to activate, false to deactivate (the user's keys stop working)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !isSet(fs, "id") || !isSet(fs, "active") {
		return usagef("user set-active: --id and --active are required")
	}
	if err := users.SetActive(ctx, *id, *active); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "user %d active: %t\n", *id, *active)
	return nil
}

func userList(ctx context.Context, e *env, users *user.Store, args []string) error {
	fs := e.flags("user list")
	if err := parse(fs, args); err != nil {
		return err
	}
	list, err := users.List(ctx, user.Filter{})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tACCESS GROUP\tACTIVE")
	for _, u := range list {
		fmt.Fprintf(w, "%d\t%s\t%s\t%t\n", u.ID, u.Email, orDash(string(u.AccessGroup)), u.IsActive)
	}
	return w.Flush()
}
