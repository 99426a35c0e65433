package main

import (
	"time"

	"ccplatform/pkg/svcclient"
	"ccplatform/services/user/internal/seed"
)

// defaultLeadURL is where lead-api listens on a developer machine.
const defaultLeadURL = "http://127.0.0.1:8083"

// leadCatalogs is the seed step of the lead service's catalogs, skipped when LEAD_URL is empty.
func leadCatalogs(cfg settings) seed.Step {
	if cfg.LeadURL == "" {
		return seed.Skipped("lead custom fields", "LEAD_URL is empty")
	}
	return seed.LeadCustomFields(svcclient.New("lead", cfg.LeadURL, cfg.InternalToken, 10*time.Second))
}
