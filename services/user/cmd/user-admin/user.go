package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"ccplatform/pkg/cli"
	"ccplatform/services/user/internal/user"
)

func userCommand(ctx context.Context, e *env, args []string) error {
	users := user.NewStore(e.db)
	return cli.Subcommand("user", args, map[string]func([]string) error{
		"create":     func(args []string) error { return userCreate(ctx, e, users, args) },
		"set-active": func(args []string) error { return userSetActive(ctx, e, users, args) },
		"list":       func(args []string) error { return userList(ctx, e, users, args) },
	})
}

// userCreate adds one user with the given group, state and notification settings and prints its
// id alone on stdout. The public API has no operation that creates users: operators (and tests
// that need users of their own) make them here. Fields not offered take the schema's defaults.
func userCreate(ctx context.Context, e *env, users *user.Store, args []string) error {
	fs := e.flags("user create")
	email := fs.String("email", "", "e-mail address (required, unique)")
	name := fs.String("name", "", "first name")
	lastName := fs.String("last-name", "", "last name")
	group := fs.String("access-group", "", "access group: client, call-center, call-center-senior, arbitration, moderator, admin; empty for none")
	active := fs.Bool("active", true, "false makes the user inactive (no keys work, no group or public notifications)")
	emailOn := fs.Bool("email-notifications", true, "send notifications by e-mail")
	emailPriority := fs.String("email-priority", priorityNone, "urgent: e-mail only urgent notifications; none: every notification")
	messengerOn := fs.Bool("messenger-notifications", false, "send notifications to the messenger chat")
	chatID := fs.String("messenger-chat-id", "", "messenger chat id")
	messengerPriority := fs.String("messenger-priority", priorityNone, "urgent: only urgent notifications to the messenger; none: every notification")
	phoneMode := fs.String("phone-mode", string(user.PhoneDefault), "default, outgoing-only, incoming-only or predictive (predictive pacing counts only predictive agents)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if !cli.IsSet(fs, "email") {
		return cli.Usagef("user create: --email is required")
	}
	if !user.PhoneMode(*phoneMode).Valid() {
		return cli.Usagef("user create: --phone-mode: must be default, outgoing-only, incoming-only or predictive")
	}
	emailSetting, err := prioritySetting("email-priority", *emailPriority)
	if err != nil {
		return err
	}
	messengerSetting, err := prioritySetting("messenger-priority", *messengerPriority)
	if err != nil {
		return err
	}
	u := user.User{
		Name: optional(*name), LastName: optional(*lastName), Email: *email, IsActive: *active,
		AccessGroup: user.AccessGroup(*group), InterfaceLanguageCode: "ru", PhoneMode: user.PhoneMode(*phoneMode),
		EmailNotificationsEnabled: *emailOn, EmailNotificationsPriority: emailSetting,
		MessengerNotificationsEnabled: *messengerOn, MessengerChatID: optional(*chatID), MessengerNotificationsPriority: messengerSetting,
	}
	id, err := users.Create(ctx, u)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "created user %d %s\n", id, user.NormalizeEmail(*email))
	fmt.Fprintln(e.stdout, id)
	return nil
}

// priorityNone is the command line's word for a null priority setting: every notification.
const priorityNone = "none"

// prioritySetting turns a priority flag into the stored setting: nil for none, "urgent" for urgent.
func prioritySetting(flagName, value string) (*string, error) {
	switch value {
	case priorityNone:
		return nil, nil
	case user.PriorityUrgent:
		s := user.PriorityUrgent
		return &s, nil
	}
	return nil, cli.Usagef("user create: --%s must be urgent or none, not %q", flagName, value)
}

// optional is nil for an empty flag, so that the field is null rather than "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func userSetActive(ctx context.Context, e *env, users *user.Store, args []string) error {
	fs := e.flags("user set-active")
	id := fs.Int64("id", 0, "id of the user")
	active := fs.Bool("active", false, "true to activate, false to deactivate (the user's keys stop working)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if !cli.IsSet(fs, "id") || !cli.IsSet(fs, "active") {
		return cli.Usagef("user set-active: --id and --active are required")
	}
	if err := users.SetActive(ctx, *id, *active); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "user %d active: %t\n", *id, *active)
	return nil
}

func userList(ctx context.Context, e *env, users *user.Store, args []string) error {
	fs := e.flags("user list")
	if err := cli.Parse(fs, args); err != nil {
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
