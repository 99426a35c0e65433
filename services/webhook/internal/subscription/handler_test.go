package subscription_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/webtest"
	"ccplatform/services/webhook/internal/server"
	"ccplatform/services/webhook/internal/servicetest"
	"ccplatform/services/webhook/internal/subscription"
	"ccplatform/services/webhook/internal/urlguard"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "webhook_subscription", func(e *servicetest.Env) { env = e })
}

type sub struct {
	ID                      int64    `json:"id"`
	URL                     string   `json:"url"`
	Events                  []string `json:"events"`
	OrderIDs                []int64  `json:"orderIds"`
	Description             string   `json:"description"`
	Enabled                 bool     `json:"enabled"`
	OwnerUserID             int64    `json:"ownerUserId"`
	Secret                  string   `json:"secret"`
	PreviousSecretExpiresAt *string  `json:"previousSecretExpiresAt"`
}

func decode(t *testing.T, res webtest.Response) sub {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, res.Message)
	var s sub
	require.NoError(t, json.Unmarshal(res.Data, &s))
	return s
}

func TestCreateShowsTheSecretOnceAndTheOwnerManagesTheSubscription(t *testing.T) {
	client := env.As("501", "client")
	created := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": "http://127.0.0.1:9/hooks", "events": []string{"lead.status_changed", "lead.created", "lead.created"},
		"description": "CRM", "orderIds": []int64{7, 3, 7}}))
	assert.True(t, strings.HasPrefix(created.Secret, "whsec_"), created.Secret)
	assert.Equal(t, []string{"lead.created", "lead.status_changed"}, created.Events, "sorted, once each")
	assert.Equal(t, []int64{3, 7}, created.OrderIDs)
	assert.Equal(t, int64(501), created.OwnerUserID)
	assert.True(t, created.Enabled)

	path := "/v2/webhook/detail/" + itoa(created.ID)
	var raw map[string]any
	res := client.Do(t, http.MethodGet, path, nil)
	require.NoError(t, json.Unmarshal(res.Data, &raw))
	assert.NotContains(t, raw, "secret", "the secret is shown at creation and rotation only")

	// Another client does not see it (the same answer as a missing one); staff do.
	other := env.As("502", "client")
	assert.Equal(t, http.StatusNotFound, other.Do(t, http.MethodGet, path, nil).Status)
	assert.Equal(t, http.StatusNotFound, other.Do(t, http.MethodPost, "/v2/webhook/delete/"+itoa(created.ID), nil).Status)
	assert.Equal(t, http.StatusOK, env.As("1", "moderator").Do(t, http.MethodGet, path, nil).Status)
	var page struct {
		List  []sub `json:"list"`
		Total int   `json:"total"`
	}
	require.NoError(t, json.Unmarshal(other.Do(t, http.MethodGet, "/v2/webhook", nil).Data, &page))
	assert.Zero(t, page.Total)
	require.NoError(t, json.Unmarshal(client.Do(t, http.MethodGet, "/v2/webhook?limit=10", nil).Data, &page))
	assert.Equal(t, 1, page.Total)

	// Update changes what is sent and keeps the rest.
	updated := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/update/"+itoa(created.ID), map[string]any{"enabled": false, "events": []string{"call.finished"}}))
	assert.False(t, updated.Enabled)
	assert.Equal(t, []string{"call.finished"}, updated.Events)
	assert.Equal(t, "CRM", updated.Description)

	// Rotation: a new secret, the old one signs for 24 h more.
	rotated := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/rotate-secret/"+itoa(created.ID), nil))
	assert.NotEqual(t, created.Secret, rotated.Secret)
	require.NotNil(t, rotated.PreviousSecretExpiresAt)
	assert.Equal(t, env.Clock.Now().Add(24*time.Hour).UTC().Format("2006-01-02T15:04:05-07:00"), *rotated.PreviousSecretExpiresAt)

	assert.Equal(t, http.StatusOK, client.Do(t, http.MethodPost, "/v2/webhook/delete/"+itoa(created.ID), nil).Status)
	assert.Equal(t, http.StatusNotFound, client.Do(t, http.MethodGet, path, nil).Status)
}

func TestBadSubscriptionsAreRefusedNamingTheField(t *testing.T) {
	client := env.As("503", "client")
	for _, tc := range []struct {
		body  map[string]any
		field string
		rule  string
	}{
		{map[string]any{"events": []string{"lead.created"}}, "url", "is required"},
		{map[string]any{"url": "http://127.0.0.1:9/"}, "events", "is required"},
		{map[string]any{"url": "http://127.0.0.1:9/", "events": []string{}}, "events", "at least one"},
		{map[string]any{"url": "http://127.0.0.1:9/", "events": []string{"lead.deleted"}}, "events", `unknown event "lead.deleted"`},
		{map[string]any{"url": "ftp://example.com/", "events": []string{"lead.created"}}, "url", "https"},
		{map[string]any{"url": "http://127.0.0.1:9/", "events": []string{"lead.created"}, "orderIds": []int64{0}}, "orderIds", "integers > 0"},
		{map[string]any{"url": "http://127.0.0.1:9/", "events": []string{"lead.created"}, "description": strings.Repeat("x", 256)}, "description", "at most 255"},
		{map[string]any{"url": 5, "events": []string{"lead.created"}}, "url", ""},
	} {
		res := client.Do(t, http.MethodPost, "/v2/webhook/create", tc.body)
		assert.Equal(t, http.StatusBadRequest, res.Status, "%v: %s", tc.body, res.Message)
		assert.False(t, res.Success)
		if assert.Contains(t, res.Errors(), tc.field, "%v: %s", tc.body, res.Message) {
			assert.Contains(t, res.Errors()[tc.field], tc.rule)
		}
	}
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM subscriptions WHERE owner_user_id = 503`))
	assert.Zero(t, n, "nothing stored")
	assert.Equal(t, http.StatusBadRequest, client.Do(t, http.MethodGet, "/v2/webhook/detail/x", nil).Status)
}

// The secret is shown once: a create replayed for its Idempotency-Key answers the subscription
// without it and says why, and the idempotency table never held it.
func TestAReplayedCreateNeverShowsTheSecretAgain(t *testing.T) {
	client := env.As("506", "client")
	body := map[string]any{"url": "http://127.0.0.1:9/replay", "events": []string{"lead.created"}}
	first := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/create/", body, "Idempotency-Key", "create-1"))
	require.True(t, strings.HasPrefix(first.Secret, "whsec_"))
	var stored string
	require.NoError(t, env.DB.Get(&stored, `SELECT convert_from(response, 'UTF8') FROM idempotency_keys WHERE key = 'create-1'`))
	assert.NotContains(t, stored, first.Secret)

	res := client.Do(t, http.MethodPost, "/v2/webhook/create/", body, "Idempotency-Key", "create-1")
	assert.Equal(t, "true", res.Header.Get(idempotency.ReplayedHeader))
	again := decode(t, res)
	assert.Empty(t, again.Secret)
	assert.NotContains(t, string(res.Data), "whsec_")
	assert.Equal(t, subscription.ReplayMessage, res.Message)
	first.Secret = ""
	assert.Equal(t, first, again, "the rest of the answer")
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM subscriptions WHERE owner_user_id = 506`))
	assert.Equal(t, 1, n)
}

// A key subscribes only to events whose data it may read (leads:read for the lead events,
// calls:read for call.finished, orders:read for order.updated): a 403 names the event type and the
// scope. A key without scopes has its user's full rights. The subscription keeps the scopes of the
// key that created or last updated it.
func TestAKeySubscribesOnlyToEventsItMayRead(t *testing.T) {
	client := env.As("507", "client")
	scoped := func(scopes string) []string { return []string{"X-Key-Scopes", scopes} }
	body := map[string]any{"url": "http://127.0.0.1:9/scopes", "events": []string{"lead.created", "call.finished"}}
	res := client.Do(t, http.MethodPost, "/v2/webhook/create/", body, scoped("webhooks:write")...)
	assert.Equal(t, http.StatusForbidden, res.Status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Message, "lead.created needs leads:read")
	assert.Contains(t, res.Message, "call.finished needs calls:read")
	res = client.Do(t, http.MethodPost, "/v2/webhook/create/", body, scoped("webhooks:write,leads:read")...)
	assert.Equal(t, http.StatusForbidden, res.Status)
	assert.Contains(t, res.Message, "call.finished needs calls:read")
	assert.NotContains(t, res.Message, "lead.created")
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM subscriptions WHERE owner_user_id = 507`))
	assert.Zero(t, n)

	created := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/create/", body, scoped("webhooks:write,leads:read,calls:read")...))
	var stored []string
	require.NoError(t, env.DB.Get((*pq.StringArray)(&stored), `SELECT key_scopes FROM subscriptions WHERE id = $1`, created.ID))
	assert.Equal(t, []string{"webhooks:write", "leads:read", "calls:read"}, stored)
	path := "/v2/webhook/update/" + itoa(created.ID)
	res = client.Do(t, http.MethodPost, path, map[string]any{"events": []string{"order.updated"}}, scoped("webhooks:write,leads:read")...)
	assert.Equal(t, http.StatusForbidden, res.Status)
	assert.Contains(t, res.Message, "order.updated needs orders:read")
	res = client.Do(t, http.MethodPost, path, map[string]any{"description": "x"}, scoped("webhooks:write,leads:read")...)
	assert.Equal(t, http.StatusForbidden, res.Status, "the updating key must read what the subscription keeps")
	assert.Contains(t, res.Message, "call.finished needs calls:read")

	decode(t, client.Do(t, http.MethodPost, path, map[string]any{"events": []string{"order.updated"}}, scoped("webhooks:write,orders:read")...))
	require.NoError(t, env.DB.Get((*pq.StringArray)(&stored), `SELECT key_scopes FROM subscriptions WHERE id = $1`, created.ID))
	assert.Equal(t, []string{"webhooks:write", "orders:read"}, stored, "the last updating key's")
	decode(t, client.Do(t, http.MethodPost, path, map[string]any{"events": []string{"lead.created"}}))
	var null bool
	require.NoError(t, env.DB.Get(&null, `SELECT key_scopes IS NULL FROM subscriptions WHERE id = $1`, created.ID))
	assert.True(t, null, "a key without scopes: full rights")
}

// One event makes a delivery per subscription: an owner has at most 25 subscriptions, and at most
// 3 to one URL (a 409 naming the limit); a URL changed by an update counts too.
func TestSubscriptionsPerOwnerAndPerURLAreCapped(t *testing.T) {
	client := env.As("508", "client")
	create := func(url string) webtest.Response {
		return client.Do(t, http.MethodPost, "/v2/webhook/create/", map[string]any{"url": url, "events": []string{"lead.created"}})
	}
	var ids []int64
	for range subscription.DefaultLimits.PerURL {
		ids = append(ids, decode(t, create("http://127.0.0.1:9/same")).ID)
	}
	res := create("http://127.0.0.1:9/same")
	assert.Equal(t, http.StatusConflict, res.Status)
	assert.Contains(t, res.Message, "at most 3 webhook subscriptions to one URL")
	other := decode(t, create("http://127.0.0.1:9/other"))
	res = client.Do(t, http.MethodPost, "/v2/webhook/update/"+itoa(other.ID), map[string]any{"url": "http://127.0.0.1:9/same"})
	assert.Equal(t, http.StatusConflict, res.Status, "an update onto a full URL")
	decode(t, client.Do(t, http.MethodPost, "/v2/webhook/update/"+itoa(ids[0]), map[string]any{"url": "http://127.0.0.1:9/same", "description": "kept"}))

	for i := len(ids) + 1; i < subscription.DefaultLimits.PerOwner; i++ {
		decode(t, create("http://127.0.0.1:9/n"+strconv.Itoa(i)))
	}
	res = create("http://127.0.0.1:9/last")
	assert.Equal(t, http.StatusConflict, res.Status)
	assert.False(t, res.Success)
	assert.Contains(t, res.Message, "at most 25 webhook subscriptions")
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM subscriptions WHERE owner_user_id = 508`))
	assert.Equal(t, 25, n)
	require.Equal(t, http.StatusOK, client.Do(t, http.MethodPost, "/v2/webhook/delete/"+itoa(ids[1]), nil).Status)
	decode(t, create("http://127.0.0.1:9/last"))
	decode(t, env.As("509", "client").Do(t, http.MethodPost, "/v2/webhook/create/", map[string]any{"url": "http://127.0.0.1:9/same",
		"events": []string{"lead.created"}}))
}

// No field of a subscription is nullable: null is a 400 naming the field and changes nothing, on
// update as on create (it used to read as "not sent" and answer 200).
func TestNullFieldsAreRefused(t *testing.T) {
	client := env.As("505", "client")
	created := decode(t, client.Do(t, http.MethodPost, "/v2/webhook/create/", map[string]any{
		"url": "http://127.0.0.1:9/hooks", "events": []string{"lead.created"}, "description": "CRM", "orderIds": []int64{4}}))
	path := "/v2/webhook/update/" + itoa(created.ID)
	for _, field := range []string{"url", "events", "description", "enabled", "orderIds"} {
		res := client.Do(t, http.MethodPost, path, map[string]any{field: nil})
		assert.Equal(t, http.StatusBadRequest, res.Status, field)
		assert.Contains(t, res.Errors()[field], "must not be null", field)
		body := map[string]any{"url": "http://127.0.0.1:9/other", "events": []string{"lead.updated"}}
		body[field] = nil
		res = client.Do(t, http.MethodPost, "/v2/webhook/create/", body)
		assert.Equal(t, http.StatusBadRequest, res.Status, field)
		assert.Contains(t, res.Errors()[field], "must not be null", field)
	}
	after := decode(t, client.Do(t, http.MethodGet, "/v2/webhook/detail/"+itoa(created.ID), nil))
	created.Secret = ""
	assert.Equal(t, created, after, "nothing changed")
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM subscriptions WHERE owner_user_id = 505`))
	assert.Equal(t, 1, n, "nothing created")
}

// With the secure defaults (no WEBHOOK_ALLOW_HTTP, no WEBHOOK_ALLOW_PRIVATE) an http URL and an
// address inside the network are refused when the subscription is saved.
func TestTheSecureDefaultsRefuseHTTPAndInternalAddresses(t *testing.T) {
	strict := webtest.Client{Token: servicetest.Token, UserID: "504", AccessGroup: "client", Handler: server.New(server.Deps{
		API: ops.API{Ops: ops.New("webhook-api"), Log: zap.NewNop(), InternalToken: servicetest.Token}, DB: env.DB,
		Idempotency: idempotency.New(env.DB, zap.NewNop()), Guard: urlguard.Policy{}, Now: env.Clock.Now,
	})}
	for url, rule := range map[string]string{
		"http://93.184.215.14/hook":        "must use https",
		"https://127.0.0.1/hook":           "special-purpose address",
		"https://169.254.169.254/metadata": "special-purpose address",
		"https://[::1]/hook":               "special-purpose address",
		"https://93.184.215.14:8080/hook":  "port 8080 is not allowed",
	} {
		res := strict.Do(t, http.MethodPost, "/v2/webhook/create", map[string]any{"url": url, "events": []string{"lead.created"}})
		assert.Equal(t, http.StatusBadRequest, res.Status, url)
		assert.Contains(t, res.Errors()["url"], rule, url)
	}
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
