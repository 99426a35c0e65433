package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"ccplatform/clients/go/ccapi"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The generated Go client (clients/go) against the real platform: what an integrator's program
// does first, through the client's own transport (key, idempotency keys, retries) over the
// suite's HTTP client.
func newAPIClient(t *testing.T) *ccapi.ClientWithResponses {
	t.Helper()
	c, err := ccapi.New(stack.BaseURL, stack.APIKey, ccapi.WithBaseHTTPClient(stack.ClientFor(t)))
	require.NoError(t, err)
	return c
}

func TestClientCreatesOrderLeadAndFollowsAJob(t *testing.T) {
	c := newAPIClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	created, err := c.CreateOrderWithResponse(ctx, nil, ccapi.OrderCreate{
		ServiceTitle: "Client", Title: "Client order", Status: ccapi.OrderCreateStatusSuccess, SipEndpointIds: []int{1},
	})
	require.NoError(t, err)
	require.NotNil(t, created.JSON200, "%d %s", created.StatusCode(), created.Body)
	orderID := created.JSON200.Data.Id

	order, err := c.GetOrderWithResponse(ctx, orderID)
	require.NoError(t, err)
	require.NotNil(t, order.JSON200, "%s", order.Body)
	assert.Equal(t, "Client order", order.JSON200.Data.Title)
	code := order.JSON200.Data.Code

	phone := newPhone()
	lead, err := c.CreateLeadWithResponse(ctx, nil, ccapi.LeadCreate{
		LeadType: ccapi.LeadCreateLeadTypeStraight, OrderId: orderID, OrderCode: code, Phone: phone,
	})
	require.NoError(t, err)
	require.NotNil(t, lead.JSON200, "%s", lead.Body)
	got, err := c.GetLeadWithResponse(ctx, lead.JSON200.Data.Id)
	require.NoError(t, err)
	require.NotNil(t, got.JSON200, "%s", got.Body)
	assert.Equal(t, orderID, got.JSON200.Data.OrderId)

	async, err := c.CreateLeadAsyncWithResponse(ctx, nil, ccapi.LeadCreate{
		LeadType: ccapi.LeadCreateLeadTypeStraight, OrderId: orderID, OrderCode: code, Phone: newPhone(),
	})
	require.NoError(t, err)
	require.NotNil(t, async.JSON200, "%s", async.Body)
	var leadID int
	require.Eventually(t, func() bool {
		job, err := c.GetLeadJobWithResponse(ctx, async.JSON200.Data.JobId)
		require.NoError(t, err)
		require.NotNil(t, job.JSON200, "%s", job.Body)
		require.NotEqual(t, ccapi.Failed, job.JSON200.Data.Status, "%s", job.Body)
		if job.JSON200.Data.Status != ccapi.Done {
			return false
		}
		leadID = *job.JSON200.Data.LeadId
		return true
	}, 20*time.Second, 100*time.Millisecond)
	assert.Positive(t, leadID)
}

// The client sends an Idempotency-Key with each create by itself; a caller that repeats a create
// under its own key gets the first answer again, marked as replayed, and no second object.
func TestClientCreatesAreIdempotent(t *testing.T) {
	c := newAPIClient(t)
	ctx := context.Background()
	key := "client-e2e-" + newPhone()
	params := &ccapi.CreateOrderParams{IdempotencyKey: &key}
	body := ccapi.OrderCreate{ServiceTitle: "Client", Title: "Idempotent " + key, Status: ccapi.OrderCreateStatusSuccess, SipEndpointIds: []int{1}}

	first, err := c.CreateOrderWithResponse(ctx, params, body)
	require.NoError(t, err)
	require.NotNil(t, first.JSON200, "%s", first.Body)
	again, err := c.CreateOrderWithResponse(ctx, params, body)
	require.NoError(t, err)
	require.NotNil(t, again.JSON200, "%s", again.Body)
	assert.Equal(t, first.JSON200.Data.Id, again.JSON200.Data.Id)
	assert.Equal(t, "true", again.HTTPResponse.Header.Get("Idempotent-Replayed"))

	// Without a key of the caller's, two calls are two creates, each with the client's own key.
	a, err := c.CreateOrderWithResponse(ctx, nil, body)
	require.NoError(t, err)
	b, err := c.CreateOrderWithResponse(ctx, nil, body)
	require.NoError(t, err)
	require.NotNil(t, a.JSON200, "%s", a.Body)
	require.NotNil(t, b.JSON200, "%s", b.Body)
	assert.NotEqual(t, a.JSON200.Data.Id, b.JSON200.Data.Id)
	assert.Empty(t, b.HTTPResponse.Header.Get("Idempotent-Replayed"))
}

// A wrong key is the caller's problem, not a retry: one 401, answered as the spec says.
func TestClientReportsRefusals(t *testing.T) {
	c, err := ccapi.New(stack.BaseURL, "cck_"+strings.Repeat("0", 64), ccapi.WithBaseHTTPClient(stack.ClientFor(t)))
	require.NoError(t, err)
	r, err := c.GetOrderWithResponse(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, r.StatusCode())
	require.NotNil(t, r.JSON401, "%s", r.Body)
	assert.Equal(t, ccapi.ErrorEnvelopeSuccessFalse, r.JSON401.Success)
	assert.Contains(t, r.JSON401.Message, "X-Api-Key")
}
