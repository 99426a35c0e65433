// Package demo is the user service's part of the demo data that makes a fresh platform usable at
// once: users of every access group and two agent groups of the demo agents. Both are upserted by
// a natural key (e-mail, names), so loading them can run on every start; user-admin seed does.
// The demo data of the other services, which names these users by e-mail and these groups by
// name, is loaded through their APIs by the tools module (tools/cmd/ccadmin seed --demo).
package demo

import (
	"context"
	"fmt"
	"time"

	"ccplatform/services/user/internal/user"
)

// AdminEmail is the demo administrator, the user the dev scripts issue the first API key for and
// the author of the other services' demo data.
const AdminEmail = "admin@demo.callcenter.local"

// LoadUsers upserts Users by e-mail and returns a one-line summary for the operator.
func LoadUsers(ctx context.Context, store *user.Store, now time.Time) (string, error) {
	demo := Users(now)
	for _, u := range demo {
		if _, err := store.Upsert(ctx, u); err != nil {
			return "", fmt.Errorf("upsert %s: %w", u.Email, err)
		}
	}
	return fmt.Sprintf("%d demo users upserted (admin: %s)", len(demo), AdminEmail), nil
}

// Users are users of every access group and one without a group, with the spread of settings
// a real call center has: Russian- and English-speaking agents, every phone mode, auto-answer off,
// instant and delayed, users who never logged in, and one who left (inactive). Login and activity
// times are relative to now so that the demo looks alive whenever it is loaded.
func Users(now time.Time) []user.User {
	now = now.UTC().Truncate(time.Second)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	s := func(v string) *string { return &v }
	urgent := s(user.PriorityUrgent)
	const day = 24 * time.Hour
	return []user.User{
		{
			Name: s("Алексей"), LastName: s("Смирнов"), Email: AdminEmail, IsActive: true,
			AccessGroup: user.GroupAdmin, InterfaceLanguageCode: "ru", LanguageSkillsCode: []string{"ru", "gb"},
			AutoAnswer: 0, PhoneMode: user.PhoneDefault, Avatar: s("https://demo.callcenter.local/avatars/admin.png"),
			MessengerNotificationsEnabled: true, MessengerChatID: s("100200301"), MessengerNotificationsPriority: urgent,
			EmailNotificationsEnabled: true,
			LastLoginAt:               ago(2 * time.Hour), LastActivityAt: ago(5 * time.Minute),
		},
		{
			Name: s("Мария"), LastName: s("Кузнецова"), Email: "moderator@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupModerator, InterfaceLanguageCode: "ru", LanguageSkillsCode: []string{"ru"},
			AutoAnswer: 0, PhoneMode: user.PhoneDefault,
			EmailNotificationsEnabled: true, EmailNotificationsPriority: urgent,
			LastLoginAt: ago(day + 3*time.Hour), LastActivityAt: ago(day),
		},
		{
			Name: s("Emily"), LastName: s("Clarke"), Email: "arbitration@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupArbitration, InterfaceLanguageCode: "gb", LanguageSkillsCode: []string{"gb", "ru"},
			AutoAnswer: 0, PhoneMode: user.PhoneDefault,
			EmailNotificationsEnabled: true,
		},
		{
			Name: s("Ольга"), LastName: s("Иванова"), Email: "senior@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupCallCenterSenior, WebRTCEnabled: true, InterfaceLanguageCode: "ru",
			LanguageSkillsCode: []string{"ru", "gb"}, AutoAnswer: 3, PhoneMode: user.PhonePredictive,
			Avatar:                        s("https://demo.callcenter.local/avatars/senior.png"),
			MessengerNotificationsEnabled: true, MessengerChatID: s("100200304"),
			EmailNotificationsEnabled: true, EmailNotificationsPriority: urgent,
			LastLoginAt: ago(40 * time.Minute), LastActivityAt: ago(time.Minute),
		},
		{
			Name: s("Иван"), LastName: s("Петров"), Email: "agent.petrov@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupCallCenter, WebRTCEnabled: true, InterfaceLanguageCode: "ru",
			LanguageSkillsCode: []string{"ru"}, AutoAnswer: -1, PhoneMode: user.PhoneOutgoingOnly,
			MessengerNotificationsEnabled: true, MessengerChatID: s("100200305"), MessengerNotificationsPriority: urgent,
			EmailNotificationsEnabled: false,
			LastLoginAt:               ago(3 * time.Hour), LastActivityAt: ago(10 * time.Minute),
		},
		{
			Name: s("John"), LastName: s("Smith"), Email: "agent.smith@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupCallCenter, WebRTCEnabled: true, InterfaceLanguageCode: "gb",
			LanguageSkillsCode: []string{"gb"}, AutoAnswer: 5, PhoneMode: user.PhoneIncomingOnly,
			EmailNotificationsEnabled: true,
			LastLoginAt:               ago(26 * time.Hour), LastActivityAt: ago(25 * time.Hour),
		},
		{
			Name: s("Oliver"), LastName: s("Brown"), Email: "client@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupClient, InterfaceLanguageCode: "gb", LanguageSkillsCode: []string{"gb"},
			AutoAnswer: 0, PhoneMode: user.PhoneDefault,
			EmailNotificationsEnabled: true,
			LastLoginAt:               ago(7 * day), LastActivityAt: ago(7*day - time.Hour),
		},
		{
			// A new hire: only a first name yet, no group assigned, never logged in.
			Name: s("Анна"), Email: "newcomer@demo.callcenter.local", IsActive: true,
			AccessGroup: user.GroupNone, InterfaceLanguageCode: "ru", LanguageSkillsCode: []string{},
			AutoAnswer: 0, PhoneMode: user.PhoneDefault,
			EmailNotificationsEnabled: true,
		},
		{
			// An agent who left: deactivated, so the keys issued to them no longer work.
			Name: s("Сергей"), LastName: s("Морозов"), Email: "former.agent@demo.callcenter.local", IsActive: false,
			AccessGroup: user.GroupCallCenter, WebRTCEnabled: true, InterfaceLanguageCode: "ru",
			LanguageSkillsCode: []string{"ru"}, AutoAnswer: 10, PhoneMode: user.PhoneDefault,
			MessengerChatID:           s("100200309"),
			EmailNotificationsEnabled: false,
			LastLoginAt:               ago(90 * day), LastActivityAt: ago(90 * day),
		},
	}
}
