// Command quickstart is a first program against the platform's API with the Go client: it creates
// an order, a lead in it, and a second lead asynchronously, and follows that job until the lead
// exists.
//
//	eval "$(make -s up | grep -E '^(BASE_URL|API_KEY)=')"
//	BASE_URL=$BASE_URL API_KEY=$API_KEY go run ./clients/go/examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"ccplatform/clients/go/ccapi"
)

func main() {
	if err := run(context.Background(), os.Getenv("BASE_URL"), os.Getenv("API_KEY")); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, baseURL, apiKey string) error {
	if baseURL == "" || apiKey == "" {
		return errors.New("set BASE_URL and API_KEY (make up prints both)")
	}
	// The client adds the key to every request, an Idempotency-Key to every create, and retries
	// 429 and 503 after their Retry-After.
	c, err := ccapi.New(baseURL, apiKey)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	created, err := c.CreateOrderWithResponse(ctx, nil, ccapi.OrderCreate{
		ServiceTitle: "Quick start", Title: "First order", Status: ccapi.OrderCreateStatusSuccess,
		SipEndpointIds: []int{1},
	})
	if err != nil {
		return fmt.Errorf("create order: %w", err)
	}
	if created.JSON200 == nil {
		return fmt.Errorf("create order: %s %s", created.Status(), created.Body)
	}
	orderID := created.JSON200.Data.Id
	fmt.Printf("order %d created\n", orderID)

	// A lead names its order by id and code (the code is the order's, from its detail).
	order, err := c.GetOrderWithResponse(ctx, orderID)
	if err != nil {
		return fmt.Errorf("order detail: %w", err)
	}
	if order.JSON200 == nil {
		return fmt.Errorf("order detail: %s %s", order.Status(), order.Body)
	}
	code := order.JSON200.Data.Code
	lead := func() ccapi.LeadCreate {
		return ccapi.LeadCreate{LeadType: ccapi.LeadCreateLeadTypeStraight, OrderId: orderID, OrderCode: code,
			Phone: fmt.Sprintf("7916%07d", rand.IntN(10_000_000))}
	}

	sync, err := c.CreateLeadWithResponse(ctx, nil, lead())
	if err != nil {
		return fmt.Errorf("create lead: %w", err)
	}
	if sync.JSON200 == nil {
		return fmt.Errorf("create lead: %s %s", sync.Status(), sync.Body)
	}
	fmt.Printf("lead %d created\n", sync.JSON200.Data.Id)

	// The async create answers at once with a job id; the lead is written by a worker.
	async, err := c.CreateLeadAsyncWithResponse(ctx, nil, lead())
	if err != nil {
		return fmt.Errorf("create lead async: %w", err)
	}
	if async.JSON200 == nil {
		return fmt.Errorf("create lead async: %s %s", async.Status(), async.Body)
	}
	jobID := async.JSON200.Data.JobId
	fmt.Printf("job %s accepted\n", jobID)
	for {
		job, err := c.GetLeadJobWithResponse(ctx, jobID)
		if err != nil {
			return fmt.Errorf("job %s: %w", jobID, err)
		}
		if job.JSON200 == nil {
			return fmt.Errorf("job %s: %s %s", jobID, job.Status(), job.Body)
		}
		switch d := job.JSON200.Data; d.Status {
		case ccapi.Done:
			fmt.Printf("job %s done: lead %d\n", jobID, *d.LeadId)
			return nil
		case ccapi.Failed:
			return fmt.Errorf("job %s failed: %s", jobID, *d.Reason)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s still queued: %w", jobID, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
