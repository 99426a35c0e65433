package call

import (
	"testing"

	"ccplatform/pkg/visibleorders"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
)

func TestWhoSeesWhichCalls(t *testing.T) {
	agent := web.Caller{UserID: 5, AccessGroup: "call-center"}
	client := web.Caller{UserID: 9, AccessGroup: "client"}
	own := visibleorders.Visible{OrderIDs: []int64{1, 2}}

	f, none := Narrow(Filter{OrderIDs: []int64{1, 3}}, agent, visibleorders.Visible{})
	assert.False(t, none)
	assert.Equal(t, []int64{5}, f.UserIDs, "an agent sees the calls they handled")
	_, none = Narrow(Filter{UserIDs: []int64{6}}, agent, visibleorders.Visible{})
	assert.True(t, none, "another agent's calls match nothing")

	f, none = Narrow(Filter{LeadIDs: []int64{7}}, client, own)
	assert.False(t, none)
	assert.Equal(t, []int64{1, 2}, f.OrderIDs, "a client's list is narrowed to its orders")
	_, none = Narrow(Filter{OrderIDs: []int64{3}}, client, own)
	assert.True(t, none)
	f, _ = Narrow(Filter{OrderIDs: []int64{3}}, web.Caller{UserID: 1, AccessGroup: "admin"}, visibleorders.Visible{All: true})
	assert.Equal(t, []int64{3}, f.OrderIDs)

	assert.True(t, Visible(Record{UserID: 5, OrderID: 3}, agent, visibleorders.Visible{}))
	assert.False(t, Visible(Record{UserID: 6, OrderID: 1}, agent, visibleorders.Visible{}))
	assert.True(t, Visible(Record{UserID: 6, OrderID: 1}, client, own))
	assert.False(t, Visible(Record{UserID: 6, OrderID: 3}, client, own))
}

func TestMaskedClientPhone(t *testing.T) {
	scope := visibleorders.Visible{OrderIDs: []int64{1, 2}, HiddenContacts: []int64{2}}
	assert.Equal(t, "7********67", Masked(Call{ClientPhone: "79161234567"}, 2, scope).ClientPhone)
	assert.Equal(t, "79161234567", Masked(Call{ClientPhone: "79161234567"}, 1, scope).ClientPhone)
}
