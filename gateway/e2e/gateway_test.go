package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// minimalOrder is the smallest valid create body.
func minimalOrder(title string) map[string]any {
	return map[string]any{"serviceTitle": "svc " + title, "title": title, "status": "success", "sipEndpointIds": []int{1}}
}

func createOrder(t *testing.T, body map[string]any, opts ...Option) int64 {
	t.Helper()
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", body, opts...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	id := int64(r.Data(t)["id"].(float64))
	require.Positive(t, id)
	return id
}

func TestAuthRequiresAKnownKey(t *testing.T) {
	cases := map[string]Option{
		"missing": WithKey(""),
		"wrong":   WithKey("cck_" + strings.Repeat("0", 64)),
		"garbage": WithKey("not a key"),
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			r := stack.Call(t, http.MethodGet, "/v2/order/detail/1/", nil, opt)
			assert.Equal(t, http.StatusUnauthorized, r.Status)
			assert.False(t, r.Env.Success)
			assert.Contains(t, r.Env.Message, "X-Api-Key")
			assert.JSONEq(t, `[]`, string(r.Env.Data))
			assert.NotEmpty(t, r.Header.Get("X-Request-Id"))
		})
	}
}

// waitStatus polls until the call answers want: the gateway caches verified keys for a short TTL.
func waitStatus(t *testing.T, want int, call func() Response) Response {
	t.Helper()
	var r Response
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r = call(); r.Status == want {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("still %d after 10s, want %d: %s", r.Status, want, r.Body)
	return r
}

func TestRevokedKeyStopsWorkingWithinSeconds(t *testing.T) {
	key, err := stack.UserAdmin("apikey", "create", "--email", "admin@demo.callcenter.local", "--name", "to-revoke")
	require.NoError(t, err)
	id := createOrder(t, minimalOrder("Revocation check"), WithKey(key))
	path := "/v2/order/detail/" + strconv.FormatInt(id, 10) + "/"
	assert.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, path, nil, WithKey(key)).Status)

	_, err = stack.UserAdmin("apikey", "revoke", "--key", key)
	require.NoError(t, err)
	r := waitStatus(t, http.StatusUnauthorized, func() Response { return stack.Call(t, http.MethodGet, path, nil, WithKey(key)) })
	assert.False(t, r.Env.Success)
	// The stack's own key is untouched.
	assert.Equal(t, http.StatusOK, stack.Call(t, http.MethodGet, path, nil).Status)
}

func TestDeactivatedUsersKeysStopWorking(t *testing.T) {
	users, err := stack.UserAdmin("user", "list")
	require.NoError(t, err)
	// Any active demo user other than the admin, whose key is the stack's own.
	var userID string
	for _, line := range strings.Split(users, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.Contains(line, "call-center@") {
			userID = f[0]
		}
	}
	if userID == "" {
		for _, line := range strings.Split(users, "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && !strings.Contains(line, "admin@demo") && strings.Contains(line, "true") {
				if _, err := strconv.Atoi(f[0]); err == nil {
					userID = f[0]
					break
				}
			}
		}
	}
	require.NotEmpty(t, userID, "no demo user to deactivate in:\n%s", users)
	key, err := stack.UserAdmin("apikey", "create", "--user", userID, "--name", "deactivation")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, stack.Call(t, http.MethodGet, "/v2/order/detail/999999999/", nil, WithKey(key)).Status)

	_, err = stack.UserAdmin("user", "set-active", "--id", userID, "--active=false")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = stack.UserAdmin("user", "set-active", "--id", userID, "--active=true") })
	waitStatus(t, http.StatusUnauthorized, func() Response {
		return stack.Call(t, http.MethodGet, "/v2/order/detail/999999999/", nil, WithKey(key))
	})
}

func TestSpoofedIdentityHeadersAreIgnored(t *testing.T) {
	id := createOrder(t, minimalOrder("Spoof check"),
		WithHeader("X-User-Id", "424242"), WithHeader("X-Access-Group", "admin"), WithHeader("X-Internal-Token", "guess"))
	r := stack.Call(t, http.MethodGet, "/v2/order/detail/"+strconv.FormatInt(id, 10)+"/", nil, WithHeader("X-User-Id", "424242"))
	require.Equal(t, http.StatusOK, r.Status)
	d := r.Data(t)
	if createdBy, ok := d["createdBy"]; ok {
		assert.NotEqual(t, float64(424242), createdBy)
	}
}

func TestUnknownRouteIs404Envelope(t *testing.T) {
	for _, p := range []string{"/v2/nothing/", "/v3/order/create/", "/internal/health", "/internal/auth/verify"} {
		r := stack.Call(t, http.MethodGet, p, nil)
		assert.Equal(t, http.StatusNotFound, r.Status, p)
		assert.False(t, r.Env.Success, p)
	}
}

func TestRoutesOfServicesNotDeployedAre501(t *testing.T) {
	r := stack.Call(t, http.MethodGet, "/v2/call/detail/1/", nil)
	if r.Status == http.StatusNotImplemented {
		assert.False(t, r.Env.Success)
		assert.NotEmpty(t, r.Env.Message)
	} else {
		// Once the service exists its route answers for real: never a gateway 404.
		assert.NotEqual(t, http.StatusNotFound, r.Status)
	}
}

func TestTrailingSlashIsOptional(t *testing.T) {
	id := createOrder(t, minimalOrder("Slash check"))
	for _, p := range []string{"/v2/order/detail/%d/", "/v2/order/detail/%d"} {
		r := stack.Call(t, http.MethodGet, strings.Replace(p, "%d", strconv.FormatInt(id, 10), 1), nil)
		assert.Equal(t, http.StatusOK, r.Status, p)
	}
	r := stack.Call(t, http.MethodPost, "/v2/order/create", minimalOrder("No slash"))
	assert.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

func TestBodyOverTheLimitIs413(t *testing.T) {
	big := `{"title":"` + strings.Repeat("x", 2<<20) + `"}`
	r := stack.Call(t, http.MethodPost, "/v2/order/create/", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
	assert.False(t, r.Env.Success)
}

func TestRequestIDIsEchoed(t *testing.T) {
	r := stack.Call(t, http.MethodGet, "/v2/order/detail/999999999/", nil, WithHeader("X-Request-Id", "e2e-req-1"))
	assert.Equal(t, "e2e-req-1", r.Header.Get("X-Request-Id"))
}

func TestRequestIDsThatAreNotIDsAreReplaced(t *testing.T) {
	for _, sent := range []string{"<script>x</script>", "../../etc", "a b", strings.Repeat("x", 129)} {
		r := stack.Call(t, http.MethodGet, "/v2/order/detail/999999999/", nil, WithHeader("X-Request-Id", sent))
		got := r.Header.Get("X-Request-Id")
		assert.NotEqual(t, sent, got)
		assert.Regexp(t, `^[0-9a-f-]{36}$`, got, "a fresh id instead of %q", sent)
	}
}

func TestTheAPIDescriptionNeedsNoKey(t *testing.T) {
	for _, path := range []string{"/openapi.yaml", "/openapi.json"} {
		req, err := http.NewRequest(http.MethodGet, stack.BaseURL+path, nil)
		require.NoError(t, err)
		resp, err := stack.Do(t, req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(body), "createLead", path)
	}
}
