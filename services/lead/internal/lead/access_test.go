package lead

import (
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
)

func TestArbitrationChangesOnlyTheStatus(t *testing.T) {
	arbitration := web.Caller{UserID: 3, AccessGroup: "arbitration"}
	assert.NoError(t, CheckUpdateFields(arbitration, Changes{StatusID: optional.Of[int64](4)}))
	err := CheckUpdateFields(arbitration, Changes{StatusID: optional.Of[int64](4), Name: optional.Of("x")})
	assert.Equal(t, apperr.Forbidden, apperr.KindOf(err))
	assert.ErrorContains(t, err, "arbitration may change only statusId, not name")
	assert.NoError(t, CheckUpdateFields(web.Caller{UserID: 1, AccessGroup: "client"}, Changes{Name: optional.Of("x")}))
}

func TestAgentsSeeMaskedPhonesWhereTheOrderHidesThem(t *testing.T) {
	mp := "+79167654321"
	v := View{OrderID: 2, Phone: "+79161234567", MessengerPhone: &mp}
	scope := visibleorders.Visible{OrderIDs: []int64{1, 2}, HiddenContacts: []int64{2}}
	m := Masked(v, scope)
	assert.Equal(t, "+7********67", m.Phone)
	assert.Equal(t, "+7********21", *m.MessengerPhone)
	assert.Equal(t, "+79167654321", mp, "the lead itself is untouched")
	v.OrderID = 1
	assert.Equal(t, "+79161234567", Masked(v, scope).Phone)
	assert.Equal(t, "+79161234567", Masked(View{OrderID: 2, Phone: "+79161234567"}, visibleorders.Visible{All: true}).Phone)
}
