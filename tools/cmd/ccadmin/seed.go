package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/cli"
	"ccplatform/pkg/svcclient"
	"ccplatform/tools/internal/demo"
	"ccplatform/tools/internal/seed"
	"ccplatform/tools/internal/userdir"
)

// demoCallsWait bounds how long the seed waits for call-ingest to store the demo calls.
const demoCallsWait = time.Minute

// seedCommand loads the demo data of the order, lead and call services: the catalogs of every
// deployed service, then the demo orders with their leads and calls. The demo users and agent
// groups they name are the user service's (user-admin seed, run before).
func seedCommand(ctx context.Context, e *env, args []string) error {
	fs := e.flags("seed")
	withDemo := fs.Bool("demo", false, "load the demo catalogs, orders, leads and calls")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if !*withDemo {
		return cli.Usagef("seed: pass --demo (the demo data is the only data set)")
	}
	steps := []seed.Step{orderCatalogs(e.cfg), leadCatalogs(e.cfg)}
	steps = append(steps, demoActivity(e)...)
	if err := seed.Run(ctx, e.stdout, steps...); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return fmt.Errorf("%w (start that service, or set its URL variable to empty to skip its part)", err)
		}
		return err
	}
	return nil
}

// orderCatalogs is the seed step of the order service's catalogs, skipped when ORDER_URL is empty.
func orderCatalogs(cfg settings) seed.Step {
	if cfg.OrderURL == "" {
		return seed.Skipped("order custom fields", "ORDER_URL is empty")
	}
	return seed.CustomFields("order custom fields", svcclient.New("order", cfg.OrderURL, cfg.InternalToken, serviceTimeout),
		demo.OrderCustomFields())
}

// leadCatalogs is the seed step of the lead service's catalogs, skipped when LEAD_URL is empty.
func leadCatalogs(cfg settings) seed.Step {
	if cfg.LeadURL == "" {
		return seed.Skipped("lead custom fields", "LEAD_URL is empty")
	}
	return seed.CustomFields("lead custom fields", svcclient.New("lead", cfg.LeadURL, cfg.InternalToken, serviceTimeout),
		demo.LeadCustomFields())
}

// demoActivity is the seed steps of the demo orders, their leads and their calls, each skipped
// when a service it needs has no URL.
func demoActivity(e *env) []seed.Step {
	cfg := e.cfg
	switch {
	case cfg.OrderURL == "":
		return []seed.Step{seed.Skipped("demo orders, leads and calls", "ORDER_URL is empty")}
	case cfg.UserURL == "":
		return []seed.Step{seed.Skipped("demo orders, leads and calls", "USER_URL is empty")}
	}
	order := svcclient.New("order", cfg.OrderURL, cfg.InternalToken, serviceTimeout)
	users := userdir.New(svcclient.New("user", cfg.UserURL, cfg.InternalToken, serviceTimeout))
	// The demo orders and leads are the demo administrator's, as if made with its API key.
	steps := []seed.Step{seed.AsUser(users, demo.AdminEmail, seed.Orders(order, users, time.Now))}
	if cfg.LeadURL == "" {
		return append(steps, seed.Skipped("demo leads and calls", "LEAD_URL is empty"))
	}
	lead := svcclient.New("lead", cfg.LeadURL, cfg.InternalToken, serviceTimeout)
	steps = append(steps, seed.AsUser(users, demo.AdminEmail, seed.OrderLeads(order, lead, time.Now)))
	switch {
	case cfg.CallURL == "":
		return append(steps, seed.Skipped("demo calls", "CALL_URL is empty"))
	case cfg.AMQPURL == "":
		return append(steps, seed.Skipped("demo calls", "AMQP_URL is empty"))
	}
	call := svcclient.New("call", cfg.CallURL, cfg.InternalToken, serviceTimeout)
	return append(steps, seed.OrderCalls(order, lead, call, e.publishDemoCalls, demoCallsWait, time.Now))
}

// publishDemoCalls places an order's demo calls the way simulate-calls does, quietly: the seed
// reports them itself.
func (e *env) publishDemoCalls(ctx context.Context, orderID int64, count int) error {
	quiet := *e
	quiet.stdout, quiet.stderr = io.Discard, io.Discard
	args := []string{"--order", strconv.FormatInt(orderID, 10), "--count", strconv.Itoa(count)}
	return simulateCallsCommand(ctx, &quiet, args)
}
