package delivery_test

import (
	"net/http"
	"strconv"
	"testing"

	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The service reached directly, without the gateway in front: an event id or a filter that is not
// text PostgreSQL can hold is a 400 naming it, never the database's 500.
func TestTextTheDatabaseCannotHoldIsA400(t *testing.T) {
	sub := strconv.FormatInt(subscribe(t, "http://127.0.0.1:9/params", "order.updated").ID, 10)
	as := env.As("601", "client")
	for _, bad := range []string{"%00", "%ff", "%c3%28", "a%00b"} {
		res := as.Do(t, http.MethodPost, "/v2/webhook/"+sub+"/redeliver/"+bad, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "eventId=%s: %s", bad, res.Message)
		assert.Equal(t, web.RuleText, res.Errors()["eventId"])

		res = as.Do(t, http.MethodGet, "/v2/webhook/"+sub+"/deliveries?state="+bad, nil)
		require.Equal(t, http.StatusBadRequest, res.Status, "state=%s: %s", bad, res.Message)
		assert.Equal(t, web.RuleText, res.Errors()["state"])
	}
}
