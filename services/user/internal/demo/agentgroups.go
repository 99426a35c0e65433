package demo

import (
	"context"
	"fmt"

	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/user"
)

// AgentGroup is a demo group whose agents are named by e-mail, since ids differ between
// databases.
type AgentGroup struct {
	Names       agentgroup.Names
	AgentEmails []string
}

// AgentGroups are two teams of the demo call-center agents; the senior agent is in both. The demo
// orders of the tools module name them by their English names.
func AgentGroups() []AgentGroup {
	return []AgentGroup{
		{
			Names:       agentgroup.Names{RU: "Продажи", GB: "Sales"},
			AgentEmails: []string{"agent.petrov@demo.callcenter.local", "senior@demo.callcenter.local"},
		},
		{
			Names:       agentgroup.Names{RU: "Поддержка клиентов", GB: "Customer support"},
			AgentEmails: []string{"agent.smith@demo.callcenter.local", "senior@demo.callcenter.local"},
		},
	}
}

// LoadAgentGroups makes AgentGroups exist with exactly their agents (found by name, so repeating
// it changes nothing) and returns a one-line summary for the operator. It runs after LoadUsers,
// whose agents it binds.
func LoadAgentGroups(ctx context.Context, groups *agentgroup.Store, users *user.Store) (string, error) {
	demo := AgentGroups()
	for _, g := range demo {
		ids := make([]int64, 0, len(g.AgentEmails))
		for _, email := range g.AgentEmails {
			u, err := users.GetByEmail(ctx, email)
			if err != nil {
				return "", fmt.Errorf("agent of %q: %w", g.Names.GB, err)
			}
			ids = append(ids, u.ID)
		}
		if _, err := groups.Ensure(ctx, g.Names, ids); err != nil {
			return "", fmt.Errorf("group %q: %w", g.Names.GB, err)
		}
	}
	return fmt.Sprintf("%d demo agent groups ensured", len(demo)), nil
}
