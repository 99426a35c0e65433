package order

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullOrder has every field set, with values that test the wire form: a short schedule, a time
// outside UTC, text that JSON escapes, custom values as sent (with spaces), transfer numbers with
// and without names.
func fullOrder() Order {
	lang, one, two, three, by, client := "gb", int64(1), int64(2), int64(3), int64(7), int64(9)
	moscow := time.FixedZone("MSK", 3*3600)
	return Order{
		ID: 42, Code: "full-order_1", ServiceTitle: "svc <&>", Title: "Заказ \"1\"",
		CallSchedule:          Schedule{{"09:00", "18:00"}, {}, {"10:00", "24:00"}},
		CallHolidayOverrides:  []time.Time{time.Date(2027, 1, 7, 0, 0, 0, 0, time.UTC), time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC)},
		AutoDialingEnabled:    true,
		PredictiveModeEnabled: true, AIDefaultLanguage: &lang, AmdDetectionEnabled: true,
		CallRecordRule: "agent_is_connected", SipEndpointUsageScheme: "even_loaded_daily",
		AgentUserIDs: []int64{5, 4}, AgentGroupIDs: []int64{8}, ShowLeadContactsToAgent: true,
		CallAttemptGroupID: &one, QualifiedLeadsPerDayLimit: &two, CallScenarioID: &three,
		LeadTransformEnabled: true, Status: "secondary", SpeechRecognitionEnabled: true, IgnoreLeadTimezone: true,
		SipEndpointIDs:             []int64{5, 6},
		CustomValues:               map[string]json.RawMessage{"12": json.RawMessage(`{ "a" : [1, 2] }`), "3": json.RawMessage(`"red,blue"`)},
		AgentLeadCreationIsAllowed: true, AgentLeadEditMode: "always", AutoProcessCall: true,
		TransferNumbers: []TransferNumber{{Number: "+79990001122", Names: map[string]string{"ru": "Отдел", "gb": "Sales"}}, {Number: "101"}},
		CreatedAt:       time.Date(2027, 3, 4, 5, 6, 7, 890, moscow),
		UpdatedAt:       time.Date(2027, 3, 5, 0, 0, 0, 0, time.UTC),
		CreatedBy:       &by, UpdatedBy: &by, ClientUserID: &client,
		PacingMode: "predictive", MaxAbandonRatePercent: 2.5, AbandonWindow: "24h", MaxLinesPerAgent: 1.5,
		DropLockoutHours: 48,
	}
}

// The wire form of an order, byte for byte: getOrder, the internal read and the order.updated
// payload (forwarded as is to webhook subscribers) all carry it, so its keys keep their order.
const (
	fullView = `{"id":42,"code":"full-order_1","serviceTitle":"svc \u003c\u0026\u003e","title":"Заказ \"1\"",` +
		`"callSchedule":[["09:00","18:00"],[],["10:00","24:00"],[],[],[],[]],"callHolidayOverrides":["07.01.2027","31.12.2027"],` +
		`"autoDialingEnabled":true,"predictiveModeEnabled":true,"aiDefaultLanguage":"gb","amdDetectionEnabled":true,` +
		`"callRecordRule":"agent_is_connected","sipEndpointUsageScheme":"even_loaded_daily","agentUserIds":[5,4],` +
		`"agentGroupIds":[8],"showLeadContactsToAgent":true,"callAttemptGroupId":1,"qualifiedLeadsPerDayLimit":2,` +
		`"callScenarioId":3,"leadTransformEnabled":true,"status":"secondary","speechRecognitionEnabled":true,` +
		`"ignoreLeadTimezone":true,"sipEndpointIds":[5,6],"customValues":{"12":{"a":[1,2]},"3":"red,blue"},` +
		`"agentLeadCreationIsAllowed":true,"agentLeadEditMode":"always","autoProcessCall":true,` +
		`"transferNumbers":[{"number":"+79990001122","names":{"gb":"Sales","ru":"Отдел"}},{"number":"101","names":[]}],` +
		`"createdAt":"2027-03-04T02:06:07+00:00","updatedAt":"2027-03-05T00:00:00+00:00","createdBy":7,"updatedBy":7,"clientUserId":9,` +
		`"pacingMode":"predictive","maxAbandonRatePercent":2.5,"abandonWindow":"24h","maxLinesPerAgent":1.5,"dropLockoutHours":48}`
	emptyView = `{"id":0,"code":"","serviceTitle":"","title":"","callSchedule":[[],[],[],[],[],[],[]],"callHolidayOverrides":[],` +
		`"autoDialingEnabled":false,"predictiveModeEnabled":false,"aiDefaultLanguage":null,"amdDetectionEnabled":false,` +
		`"callRecordRule":"","sipEndpointUsageScheme":"","agentUserIds":[],"agentGroupIds":[],"showLeadContactsToAgent":false,` +
		`"callAttemptGroupId":null,"qualifiedLeadsPerDayLimit":null,"callScenarioId":null,"leadTransformEnabled":false,` +
		`"status":"","speechRecognitionEnabled":false,"ignoreLeadTimezone":false,"sipEndpointIds":[],"customValues":[],` +
		`"agentLeadCreationIsAllowed":false,"agentLeadEditMode":"","autoProcessCall":false,"transferNumbers":[],` +
		`"createdAt":"0001-01-01T00:00:00+00:00","updatedAt":"0001-01-01T00:00:00+00:00","createdBy":null,"updatedBy":null,"clientUserId":null,` +
		`"pacingMode":"","maxAbandonRatePercent":0,"abandonWindow":"","maxLinesPerAgent":0,"dropLockoutHours":0}`
)

func TestViewWireForm(t *testing.T) {
	for name, c := range map[string]struct {
		o    Order
		want string
	}{"every field set": {fullOrder(), fullView}, "nothing set": {Order{}, emptyView}} {
		got, err := json.Marshal(ViewOf(c.o))
		require.NoError(t, err)
		assert.Equal(t, c.want, string(got), name)

		ev, err := UpdatedOf(c.o)
		require.NoError(t, err)
		assert.Equal(t, c.want, string(ev.Data), name+": the order.updated payload")
	}
}

func TestInternalViewWireForm(t *testing.T) {
	v := InternalView{View: ViewOf(fullOrder())}
	got, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, fullView[:len(fullView)-1]+`,"callAttemptGroup":null}`, string(got))

	v.CallAttemptGroup = &AttemptGroupView{ID: 1, Intervals: []int64{5, 60}, ResetAttemptsEnabled: true}
	got, err = json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, fullView[:len(fullView)-1]+`,"callAttemptGroup":{"id":1,"intervals":[5,60],"resetAttemptsEnabled":true}}`, string(got))
}

// BenchmarkView is the cost of writing an order's wire form (docs/architecture.md, "Adding an
// order field").
func BenchmarkView(b *testing.B) {
	o := fullOrder()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ViewOf(o)); err != nil {
			b.Fatal(err)
		}
	}
}
