package leadv1

import (
	"encoding/json"
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/services/lead/internal/lead"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rulesOnly is a service for the body rules alone (no store, orders or catalogs).
var rulesOnly = lead.NewService(nil, nil, nil, lead.Rules{AdSystems: lead.DefaultAdSystems})

func TestV1FieldsMapOntoV2(t *testing.T) {
	ch, err := Decode(rulesOnly, []byte(`{"lead_type":"selection","client_phone":"79161234567","order_id":3,"order_code":"c3",
		"messengerId":"88","socialNetworkId":"123","socialLogin":"sl","client_name":"N","quiz_log":"log","campaign_id":"camp",
		"external_id":"ext","priority":4,"utc_offset":5,"status":2,"call_timestamp":1798794000,"messengerUserName":"mu",
		"messengerPhone":"+79160000000","source":"ignored.ads"}`))
	require.NoError(t, err)
	l := lead.New(ch, lead.Meta{})
	assert.Equal(t, "selection", l.LeadType)
	assert.Equal(t, "+79161234567", l.Phone)
	assert.Equal(t, int64(3), l.OrderID)
	assert.Equal(t, "c3", l.OrderCode)
	assert.Equal(t, int64(88), *l.MessengerID)
	assert.Equal(t, int64(123), *l.SocialNetworkID)
	assert.Equal(t, "sl", *l.SocialLogin)
	assert.Equal(t, "N", *l.Name)
	assert.Equal(t, "log", *l.SourceComment)
	assert.Equal(t, "camp", *l.AdCampaignID)
	assert.Equal(t, "ext", *l.ExternalIDCrmA)
	assert.Equal(t, int64(4), l.Priority)
	assert.Equal(t, int64(5), *l.UTCOffset)
	assert.Equal(t, int64(2), l.StatusID)
	assert.Equal(t, int64(1798794000), l.PlanningCallAt.Unix())
	assert.Equal(t, "mu", *l.MessengerUserName)
	assert.Equal(t, "+79160000000", *l.MessengerPhone)
	assert.Equal(t, lead.SourceOrganic, l.Source, "v1 has no source: v2 fields are ignored")
}

func TestV1ErrorsUseV1Names(t *testing.T) {
	_, err := Decode(rulesOnly, []byte(`{"client_phone":"12","utc_offset":40,"campaign_id":"`+string(make65())+`","status":0}`))
	e, ok := apperr.As(err)
	require.True(t, ok)
	for _, f := range []string{"lead_type", "client_phone", "order_id", "order_code", "messengerId", "socialNetworkId",
		"socialLogin", "utc_offset", "campaign_id", "status"} {
		assert.Contains(t, e.Fields, f)
		assert.Contains(t, e.Message, f+": ")
	}
	for _, f := range []string{"leadType", "phone", "orderId", "orderCode", "utcOffset", "adCampaignId", "statusId"} {
		assert.NotContains(t, e.Fields, f)
	}

	// Updates require nothing and refuse nulls of fields that cannot be empty.
	var in Input
	require.NoError(t, json.Unmarshal([]byte(`{"client_phone":null,"client_name":null,"call_timestamp":"x"}`), &in))
	_, err = Check(rulesOnly, in, lead.ForUpdate)
	e, ok = apperr.As(err)
	require.True(t, ok)
	assert.Equal(t, apperr.FieldErrors{"client_phone": "must not be null",
		"call_timestamp": "must be a Unix time in seconds or an ISO 8601 date-time"}, e.Fields)

	_, err = Decode(rulesOnly, []byte(`{"order_id":"7"}`))
	e, ok = apperr.As(err)
	require.True(t, ok)
	assert.Equal(t, "must be an integer", e.Fields["order_id"], "type errors name the field as sent")
}

func make65() []byte {
	b := make([]byte, 65)
	for i := range b {
		b[i] = 'x'
	}
	return b
}
