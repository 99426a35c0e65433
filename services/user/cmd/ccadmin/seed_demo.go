package main

import (
	"context"
	"io"
	"strconv"
	"time"

	"ccplatform/pkg/svcclient"
	"ccplatform/services/user/internal/agentgroup"
	"ccplatform/services/user/internal/seed"
	"ccplatform/services/user/internal/user"
)

// defaultCallURL is where the call service listens on a developer machine.
const defaultCallURL = "http://127.0.0.1:8084"

// demoCallsWait bounds how long the seed waits for call-ingest to store the demo calls.
const demoCallsWait = time.Minute

// demoActivity is the seed steps of the demo orders, their leads and their calls, each skipped
// when a service it needs has no URL.
func demoActivity(e *env) []seed.Step {
	cfg := e.cfg
	if cfg.OrderURL == "" {
		return []seed.Step{seed.Skipped("demo orders, leads and calls", "ORDER_URL is empty")}
	}
	order := svcclient.New("order", cfg.OrderURL, cfg.InternalToken, 10*time.Second)
	users := user.NewStore(e.db)
	// The demo orders and leads are the demo administrator's, as if made with its API key.
	steps := []seed.Step{seed.AsUser(users, seed.AdminEmail, seed.Orders(order, users, agentgroup.NewStore(e.db), time.Now))}
	if cfg.LeadURL == "" {
		return append(steps, seed.Skipped("demo leads and calls", "LEAD_URL is empty"))
	}
	lead := svcclient.New("lead", cfg.LeadURL, cfg.InternalToken, 10*time.Second)
	steps = append(steps, seed.AsUser(users, seed.AdminEmail, seed.OrderLeads(order, lead, time.Now)))
	switch {
	case cfg.CallURL == "":
		return append(steps, seed.Skipped("demo calls", "CALL_URL is empty"))
	case cfg.AMQPURL == "":
		return append(steps, seed.Skipped("demo calls", "AMQP_URL is empty"))
	}
	call := svcclient.New("call", cfg.CallURL, cfg.InternalToken, 10*time.Second)
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
