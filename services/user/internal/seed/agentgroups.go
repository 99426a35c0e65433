package seed

import (
	"context"
	"fmt"

	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/user"
)

// DemoAgentGroup is a demo group whose agents are named by e-mail, since ids differ between
// databases.
type DemoAgentGroup struct {
	Names       agentgroup.Names
	AgentEmails []string
}

// DemoAgentGroups are two teams of the demo call-center agents; the senior agent is in both.
func DemoAgentGroups() []DemoAgentGroup {
	return []DemoAgentGroup{
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

// AgentGroups is the step that makes DemoAgentGroups exist with exactly their agents (found by
// name, so repeating it changes nothing). It runs after Users, whose agents it binds.
func AgentGroups(groups *agentgroup.Store, users *user.Store) Step {
	return Step{Name: "agent groups", Run: func(ctx context.Context) (string, error) {
		demo := DemoAgentGroups()
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
				return "", err
			}
		}
		return fmt.Sprintf("%d demo agent groups ensured", len(demo)), nil
	}}
}
