package order_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"ccplatform/services/order/internal/order"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storedOrder has every field the store writes set, the call-attempt group and language being
// real rows.
func storedOrder(t *testing.T) order.Order {
	lang, limit, scenario, by, client := "gb", int64(2), int64(3), int64(7), int64(9)
	g := group(t, false)
	return order.Order{
		Code: "stored-" + time.Now().Format("150405.000000"), ServiceTitle: "svc <&>", Title: "Заказ \"1\"",
		CallSchedule:          order.Schedule{{"09:00", "18:00"}, {}, {"10:00", "24:00"}},
		CallHolidayOverrides:  []time.Time{time.Date(2027, 1, 7, 0, 0, 0, 0, time.UTC), time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC)},
		AutoDialingEnabled:    true,
		PredictiveModeEnabled: true, AIDefaultLanguage: &lang, AmdDetectionEnabled: true,
		CallRecordRule: "agent_is_connected", SipEndpointUsageScheme: "even_loaded_daily",
		AgentUserIDs: []int64{5, 4}, AgentGroupIDs: []int64{8}, ShowLeadContactsToAgent: true,
		CallAttemptGroupID: &g, QualifiedLeadsPerDayLimit: &limit, CallScenarioID: &scenario,
		LeadTransformEnabled: true, Status: "secondary", SpeechRecognitionEnabled: true, IgnoreLeadTimezone: true,
		SipEndpointIDs:             []int64{5, 6},
		CustomValues:               map[string]json.RawMessage{"12": json.RawMessage(`{"a": [1, 2]}`), "3": json.RawMessage(`"red,blue"`)},
		AgentLeadCreationIsAllowed: true, AgentLeadEditMode: "always", AutoProcessCall: true,
		TransferNumbers: []order.TransferNumber{{Number: "+79990001122", Names: map[string]string{"ru": "Отдел"}}, {Number: "101", Names: map[string]string{}}},
		CreatedBy:       &by, UpdatedBy: &by, ClientUserID: &client,
		PacingMode: "predictive", MaxAbandonRatePercent: 2.5, AbandonWindow: "24h", MaxLinesPerAgent: 1.5,
		DropLockoutHours: 48,
	}
}

// storedText is how the orders table holds order id's structured columns.
func storedText(t *testing.T, id int64) map[string]string {
	t.Helper()
	var r struct {
		Schedule string `db:"call_schedule"`
		Holidays string `db:"call_holiday_overrides"`
		Agents   string `db:"agent_user_ids"`
		Custom   string `db:"custom_values"`
		Transfer string `db:"transfer_numbers"`
	}
	require.NoError(t, env.DB.Get(&r, `SELECT call_schedule::text, call_holiday_overrides::text, agent_user_ids::text,
		custom_values::text, transfer_numbers::text FROM orders WHERE id = $1`, id))
	return map[string]string{"call_schedule": r.Schedule, "call_holiday_overrides": r.Holidays,
		"agent_user_ids": r.Agents, "custom_values": r.Custom, "transfer_numbers": r.Transfer}
}

func TestStoreWritesAndReadsEveryField(t *testing.T) {
	ctx := context.Background()
	store := order.NewStore(env.DB)
	want := storedOrder(t)
	id, code, err := store.Create(ctx, want)
	require.NoError(t, err)
	assert.Equal(t, want.Code, code)
	assert.Equal(t, map[string]string{
		"call_schedule":          `[["09:00", "18:00"], [], ["10:00", "24:00"], [], [], [], []]`,
		"call_holiday_overrides": `{2027-01-07,2027-12-31}`,
		"agent_user_ids":         `{5,4}`,
		"custom_values":          `{"3": "red,blue", "12": {"a": [1, 2]}}`,
		"transfer_numbers":       `[{"names": {"ru": "Отдел"}, "number": "+79990001122"}, {"names": {}, "number": "101"}]`,
	}, storedText(t, id), "stored: the schedule padded to 7 days")

	got, err := store.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, got.ID)
	assert.WithinDuration(t, time.Now(), got.CreatedAt, time.Minute, "created_at is the database's")
	assert.Equal(t, got.CreatedAt, got.UpdatedAt)
	want.ID, want.CreatedAt, want.UpdatedAt = id, got.CreatedAt, got.UpdatedAt
	want.CallSchedule = want.CallSchedule.Padded()
	assert.Equal(t, want, got)

	// An update writes every field but created_by, and stamps updated_at.
	other := int64(8)
	saved, err := store.Update(ctx, id, func(o *order.Order) error {
		o.Title, o.CreatedBy, o.UpdatedBy = "changed", &other, &other
		o.CustomValues, o.TransferNumbers, o.AgentUserIDs, o.CallHolidayOverrides = nil, nil, nil, nil
		o.AIDefaultLanguage, o.CallScenarioID = nil, nil
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "changed", saved.Title)
	assert.Equal(t, int64(7), *saved.CreatedBy, "created_by is never updated")
	assert.Equal(t, int64(8), *saved.UpdatedBy)
	assert.True(t, saved.UpdatedAt.After(got.UpdatedAt), "updated_at is stamped")
	assert.Nil(t, saved.AIDefaultLanguage)
	assert.Nil(t, saved.CallScenarioID)
	assert.Equal(t, map[string]string{
		"call_schedule":          `[["09:00", "18:00"], [], ["10:00", "24:00"], [], [], [], []]`,
		"call_holiday_overrides": `{}`,
		"agent_user_ids":         `{}`,
		"custom_values":          `{}`,
		"transfer_numbers":       `[]`,
	}, storedText(t, id), "emptied lists and maps are stored empty, not null")
	again, err := store.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, saved, again, "Update returns the order as stored")
	assert.Equal(t, []int64{}, again.AgentUserIDs)
	assert.Equal(t, []time.Time{}, again.CallHolidayOverrides)
	assert.Equal(t, map[string]json.RawMessage{}, again.CustomValues)
	assert.Equal(t, []order.TransferNumber{}, again.TransferNumbers)

	byCode, err := store.GetByCode(ctx, code)
	require.NoError(t, err)
	assert.Equal(t, again, byCode)
}
