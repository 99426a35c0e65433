package imports_test

import (
	"fmt"
	"net/http"
	"testing"

	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImportedLeadsRecordLeadCreated(t *testing.T) {
	orderID, code := newOrder()
	first, second := newPhone(), newPhone()
	before := len(env.Events(t, lead.EventCreated))
	file := "phone,leadType,name\n" + first + ",straight,Ann\n12,straight,Bob\n" + second + ",selection,Cy\n"
	res := post(t, "text/csv", fmt.Sprintf("?orderId=%d&orderCode=%s", orderID, code), file)
	require.Equal(t, http.StatusAccepted, res.Status, "%s %s", res.Message, res.Data)
	drain(t)

	var ids []int64
	require.NoError(t, env.DB.Select(&ids, `SELECT id FROM leads WHERE order_id = $1 ORDER BY id`, orderID))
	require.Len(t, ids, 2)
	assert.Len(t, env.Events(t, lead.EventCreated), before+2, "none for the refused row")
	for n, id := range ids {
		evs := env.LeadEvents(t, lead.EventCreated, id)
		require.Len(t, evs, 1)
		assert.Equal(t, orderID, evs[0].OrderID)
		assert.Equal(t, servicetest.UserID, fmt.Sprint(evs[0].ActorUserID), "the user who submitted the import")
		assert.JSONEq(t, string(env.Detail(t, id)), string(evs[0].Data), "the lead as the detail route answers it")
		l := servicetest.LeadOf(t, evs[0])
		assert.Equal(t, []any{id, int64(1), []string{first, second}[n]}, []any{l.ID, l.StatusID, l.Phone})
		assert.Equal(t, lead.MethodAPIv2Import, l.CreateMethod)
	}
}
