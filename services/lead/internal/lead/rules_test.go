package lead

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/apitime"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/phone"
	"ccplatform/services/lead/internal/catalog"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testRules = Rules{AdSystems: DefaultAdSystems, Phones: phone.New()}

// winter is an instant with no daylight saving in the northern zones used below.
var winter = time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC)

func TestNormalizePhone(t *testing.T) {
	// A nil *Phones reads every number with the library's Parse: the same answers.
	for _, phones := range []*phone.Normalizer{phone.New(), nil} {
		for raw, want := range map[string]string{
			"+79161234567":        "+79161234567",
			"79161234567":         "+79161234567",
			" +7 (916) 123-45-67": "+79161234567",
			"+1 202 555 0123":     "+12025550123",
			"442079460958":        "+442079460958",
			"+7 8 916 123 45 67":  "+79161234567", // a national prefix after the calling code is dropped
		} {
			got, ok := phones.Normalize(raw)
			assert.True(t, ok, raw)
			assert.Equal(t, want, got, raw)
		}
		for _, raw := range []string{"", "+", "abc", "+7abc1234567", "+7916", "89161234567", "+1234567890123456", "+999123456789"} {
			_, ok := phones.Normalize(raw)
			assert.False(t, ok, raw)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestSources(t *testing.T) {
	r := Rules{AdSystems: []string{"alpha", "beta"}}
	for _, s := range []string{"organic", "non-organic", "alpha.ads", "alpha.direct", "beta.ads"} {
		assert.True(t, r.ValidSource(s), s)
	}
	for _, s := range []string{"", "Organic", "gamma.ads", "alpha.banner", "alpha", ".ads", "alpha.ads.x"} {
		assert.False(t, r.ValidSource(s), s)
	}
	assert.Contains(t, r.SourceRule(), "alpha, beta")
	assert.Len(t, DefaultAdSystems, 7)
}

func decode(t *testing.T, body string) Input {
	t.Helper()
	var in Input
	require.NoError(t, json.Unmarshal([]byte(body), &in))
	return in
}

func TestMessengerPhoneIsCheckedLikePhone(t *testing.T) {
	for _, bad := range []string{"x", "8 916 abc", "12"} {
		fe := apperr.FieldErrors{}
		decode(t, `{"leadType":"straight","phone":"79161234567","orderId":5,"orderCode":"o-5","messengerPhone":"`+bad+`"}`).Check(ForCreate, testRules, winter, fe)
		assert.Equal(t, rulePhone, fe["messengerPhone"], bad)
	}
	fe := apperr.FieldErrors{}
	ch := decode(t, `{"messengerPhone":""}`).Check(ForUpdate, testRules, winter, fe)
	assert.Empty(t, fe, "an empty messengerPhone clears it")
	assert.Equal(t, "", ch.MessengerPhone.V)
}

func TestCheckCreate(t *testing.T) {
	fe := apperr.FieldErrors{}
	ch := decode(t, `{"leadType":"straight","phone":"79161234567","orderId":5,"orderCode":" o-5 ","socialNetworkId":"123",
		"messengerPhone":"+7 (916) 765-43-21","messengerId":77,"sourceComment":{"a":[1, 2]},"planningCallDateTime":"2027-01-02T03:04:05+03:00",
		"customValues":{"12":"x"},"name":null,"source":"videoads.ads","adCampaignId":"c"}`).Check(ForCreate, testRules, winter, fe)
	require.Empty(t, fe)
	l := New(ch, Meta{CreateMethod: MethodAPIv2})
	assert.Equal(t, "+79161234567", l.Phone)
	assert.Equal(t, "o-5", l.OrderCode)
	assert.Equal(t, ptr[int64](3), l.UTCOffset, "inferred")
	assert.Equal(t, ptr[int64](123), l.SocialNetworkID)
	assert.Equal(t, ptr[int64](77), l.MessengerID)
	assert.Equal(t, ptr("+79167654321"), l.MessengerPhone, "normalised like phone")
	assert.Equal(t, ptr(`{"a":[1,2]}`), l.SourceComment, "JSON kept as its text")
	assert.Equal(t, time.Date(2027, 1, 2, 0, 4, 5, 0, time.UTC), *l.PlanningCallAt)
	assert.Nil(t, l.Name, "null on create is absent")
	assert.Equal(t, "videoads.ads", l.Source)
	assert.Equal(t, int64(0), l.Priority)
	assert.Equal(t, MethodAPIv2, l.CreateMethod)
	assert.Equal(t, json.RawMessage(`"x"`), ch.CustomValues.V[12])

	fe = apperr.FieldErrors{}
	decode(t, `{"phone":null,"orderCode":""}`).Check(ForCreate, testRules, winter, fe)
	assert.Equal(t, apperr.FieldErrors{"leadType": "is required", "phone": "is required", "orderId": "is required",
		"orderCode": "must not be empty"}, fe)

	// A sent offset wins; the default source is organic.
	fe = apperr.FieldErrors{}
	ch = decode(t, `{"leadType":"selection","phone":"+79161234567","orderId":1,"orderCode":"c","utcOffset":-2}`).Check(ForCreate, testRules, winter, fe)
	require.Empty(t, fe)
	l = New(ch, Meta{})
	assert.Equal(t, ptr[int64](-2), l.UTCOffset)
	assert.Equal(t, SourceOrganic, l.Source)
}

func TestCheckFieldRules(t *testing.T) {
	for body, field := range map[string]string{
		`{"phone":"+7916"}`:         "phone",
		`{"leadType":"other"}`:      "leadType",
		`{"orderId":0}`:             "orderId",
		`{"statusId":-1}`:           "statusId",
		`{"priority":3000000000}`:   "priority",
		`{"utcOffset":15}`:          "utcOffset",
		`{"utcOffset":-13}`:         "utcOffset",
		`{"socialNetworkId":"12a"}`: "socialNetworkId",
		`{"socialNetworkId":0}`:     "socialNetworkId",
		`{"socialNetworkId":1.5}`:   "socialNetworkId",
		`{"socialNetworkId":true}`:  "socialNetworkId",
		`{"messengerId":"-4"}`:      "messengerId",
		`{"source":"tv.ads"}`:       "source",
		`{"adCampaignId":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`: "adCampaignId",
		`{"planningCallDateTime":"tomorrow"}`:                                                  "planningCallDateTime",
		`{"planningCallDateTime":-5}`:                                                          "planningCallDateTime",
		`{"sourceComment":5}`:                                                                  "sourceComment",
		`{"customValues":{"x":1}}`:                                                             "customValues",
		`{"customValues":{"3":null}}`:                                                          "customValues.3",
		`{"customValues":` + manyCustomValues(customfield.MaxValues+1) + `}`:                   "customValues",
	} {
		fe := apperr.FieldErrors{}
		decode(t, body).Check(ForUpdate, testRules, winter, fe)
		assert.Contains(t, fe, field, body)
		assert.Len(t, fe, 1, body)
	}
}

// manyCustomValues is a customValues object of n fields.
func manyCustomValues(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = `"` + strconv.Itoa(i+1) + `":"x"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestCheckUpdateNulls(t *testing.T) {
	fe := apperr.FieldErrors{}
	decode(t, `{"phone":null,"statusId":null,"priority":null,"source":null,"customValues":null,"leadType":null}`).Check(ForUpdate, testRules, winter, fe)
	for _, f := range []string{"phone", "statusId", "priority", "source", "customValues", "leadType"} {
		assert.Equal(t, "must not be null", fe[f], f)
	}

	fe = apperr.FieldErrors{}
	ch := decode(t, `{"name":null,"utcOffset":null,"socialNetworkId":null,"planningCallDateTime":null,"sourceComment":null,"adCampaignId":null}`).
		Check(ForUpdate, testRules, winter, fe)
	require.Empty(t, fe)
	l := Lead{Name: ptr("n"), UTCOffset: ptr[int64](3), SocialNetworkID: ptr[int64](9), PlanningCallAt: &winter,
		SourceComment: ptr("c"), AdCampaignID: ptr("a"), SocialLogin: ptr("kept"), Phone: "+79161234567"}
	ch.ApplyTo(&l)
	assert.Nil(t, l.Name)
	assert.Nil(t, l.UTCOffset)
	assert.Nil(t, l.SocialNetworkID)
	assert.Nil(t, l.PlanningCallAt)
	assert.Nil(t, l.SourceComment)
	assert.Nil(t, l.AdCampaignID)
	assert.Equal(t, ptr("kept"), l.SocialLogin)
	assert.Equal(t, "+79161234567", l.Phone)

	// A new phone brings its offset unless the body sends one.
	ch = decode(t, `{"phone":"+12125551234"}`).Check(ForUpdate, testRules, winter, apperr.FieldErrors{})
	ch.ApplyTo(&l)
	assert.Equal(t, "+12125551234", l.Phone)
	assert.Equal(t, ptr[int64](-5), l.UTCOffset)
	ch = decode(t, `{"phone":"+79161234567","utcOffset":7}`).Check(ForUpdate, testRules, winter, apperr.FieldErrors{})
	ch.ApplyTo(&l)
	assert.Equal(t, ptr[int64](7), l.UTCOffset)
}

func TestParseCallTime(t *testing.T) {
	for raw, want := range map[string]time.Time{
		`1798794000`:                  time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC),
		`"1798794000"`:                time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC),
		`"2027-01-01T12:00:00+03:00"`: time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC),
		`"2027-01-01 09:00:00"`:       time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC),
		`"2027-01-01"`:                time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		got, err := ParseCallTime(json.RawMessage(raw))
		assert.NoError(t, err, raw)
		assert.True(t, want.Equal(got), "%s: %s", raw, got)
	}
	for _, raw := range []string{`"soon"`, `-1`, `1.5`, `true`, `1798794000000000`, `""`} {
		_, err := ParseCallTime(json.RawMessage(raw))
		assert.EqualError(t, err, rulePlanningCall, raw)
	}
	for _, raw := range []string{`"9999-12-31T23:59:59-14:00"`, `"0000-06-01T00:00:00Z"`} {
		_, err := ParseCallTime(json.RawMessage(raw))
		assert.EqualError(t, err, apitime.RangeRule, raw)
	}
}

func TestCheckReferences(t *testing.T) {
	refs := References{
		Statuses: catalog.Statuses{
			1: {ID: 1, Code: "new", Category: catalog.CategoryInProgress},
			2: {ID: 2, Code: "callback", Category: catalog.CategoryInProgress},
			4: {ID: 4, Code: "qualified", Category: catalog.CategorySuccess},
		},
		Fields: map[int64]customfield.Field{
			10: {ID: 10, Type: customfield.TypeInteger},
			11: {ID: 11, Type: customfield.TypeMultiselect, Options: []string{"a", "b"}},
		},
	}
	// The default status fills a create without one.
	ch := Changes{}
	fe := apperr.FieldErrors{}
	ch.CheckReferences(ForCreate, refs, fe)
	assert.Empty(t, fe)
	assert.Equal(t, optional.Of[int64](1), ch.StatusID)

	for id, ok := range map[int64]bool{2: true, 4: false, 9: false} {
		fe = apperr.FieldErrors{}
		ch = Changes{StatusID: optional.Of(id)}
		ch.CheckReferences(ForCreate, refs, fe)
		assert.Equal(t, ok, len(fe) == 0, "create with status %d: %v", id, fe)
		fe = apperr.FieldErrors{}
		ch.CheckReferences(ForUpdate, refs, fe)
		assert.Equal(t, id != 9, len(fe) == 0, "update to status %d: %v", id, fe)
	}

	ch = Changes{CustomValues: optional.Of(map[int64]json.RawMessage{10: json.RawMessage(`5`), 11: json.RawMessage(`"b, a,b"`)})}
	fe = apperr.FieldErrors{}
	ch.CheckReferences(ForUpdate, refs, fe)
	assert.Empty(t, fe)
	assert.Equal(t, `"b,a"`, string(ch.CustomValues.V[11]))

	ch = Changes{CustomValues: optional.Of(map[int64]json.RawMessage{10: json.RawMessage(`"5"`), 11: json.RawMessage(`"c"`), 12: json.RawMessage(`1`)})}
	fe = apperr.FieldErrors{}
	ch.CheckReferences(ForUpdate, refs, fe)
	assert.Equal(t, "must be an integer", fe["customValues.10"])
	assert.Contains(t, fe["customValues.11"], "comma-separated values of: a, b")
	assert.Equal(t, "no lead custom field has id 12", fe["customValues.12"])

	// Issue 18: a multiselect ",," was stored as "" and a 100,000-character string was stored.
	refs.Fields[13] = customfield.Field{ID: 13, Type: customfield.TypeString}
	ch = Changes{CustomValues: optional.Of(map[int64]json.RawMessage{
		11: json.RawMessage(`",,"`), 13: json.RawMessage(`"` + strings.Repeat("x", 100_000) + `"`)})}
	fe = apperr.FieldErrors{}
	ch.CheckReferences(ForUpdate, refs, fe)
	assert.Equal(t, apperr.FieldErrors{
		"customValues.11": "must be a string of comma-separated values of: a, b",
		"customValues.13": "must be at most 1000 characters",
	}, fe)
}

func TestRenameFields(t *testing.T) {
	err := apperr.FieldErrors{"phone": "bad", "socialLogin": "is required"}.Err()
	renamed := RenameFields(err, map[string]string{"phone": "client_phone"})
	e, ok := apperr.As(renamed)
	require.True(t, ok)
	assert.Equal(t, apperr.Invalid, e.Kind)
	assert.Equal(t, apperr.FieldErrors{"client_phone": "bad", "socialLogin": "is required"}, e.Fields)
	assert.Equal(t, "client_phone: bad; socialLogin: is required", e.Message)
	assert.NoError(t, RenameFields(nil, nil))
	plain := apperr.NotFoundf("lead 1 does not exist")
	assert.Equal(t, error(plain), RenameFields(plain, map[string]string{"phone": "client_phone"}))
}

func TestViewOf(t *testing.T) {
	at := time.Date(2027, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3*3600))
	v := ViewOf(Lead{ID: 1, SocialNetworkID: ptr[int64](42), PlanningCallAt: &at, CreatedAt: at, UpdatedAt: at,
		PreviousLeadID: ptr[int64](9)})
	assert.Equal(t, ptr("42"), v.SocialNetworkID)
	assert.Equal(t, ptr("2027-01-02T00:04:05+00:00"), v.PlanningCallDateTime)
	assert.Equal(t, "2027-01-02T00:04:05+00:00", v.CreatedAt)
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "previousLeadId")
	assert.Contains(t, string(b), `"customValues":{}`)
	b, err = json.Marshal(ListItemOf(Lead{ID: 1, PreviousLeadID: ptr[int64](9)}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"previousLeadId":9`)
	assert.Contains(t, string(b), `"nextLeadId":null`)
}
