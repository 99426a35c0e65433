package lead

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/listquery"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/phone"
)

// Input is the v2 body of createLead, createLeadAsync and updateLead. Every field is an
// optional.Value so that a field not sent, sent as null and sent with a value are told apart.
// Fields the contract types loosely (socialNetworkId: a number or a string of digits;
// planningCallDateTime: Unix seconds or ISO; sourceComment: text or JSON) arrive raw.
type Input struct {
	LeadType             optional.Value[string]                     `json:"leadType"`
	Phone                optional.Value[string]                     `json:"phone"`
	OrderID              optional.Value[int64]                      `json:"orderId"`
	OrderCode            optional.Value[string]                     `json:"orderCode"`
	MessengerUserName    optional.Value[string]                     `json:"messengerUserName"`
	MessengerPhone       optional.Value[string]                     `json:"messengerPhone"`
	MessengerID          optional.Value[json.RawMessage]            `json:"messengerId"`
	SocialNetworkID      optional.Value[json.RawMessage]            `json:"socialNetworkId"`
	SocialLogin          optional.Value[string]                     `json:"socialLogin"`
	Name                 optional.Value[string]                     `json:"name"`
	SourceComment        optional.Value[json.RawMessage]            `json:"sourceComment"`
	ExternalIDCrmA       optional.Value[string]                     `json:"externalIdCrmA"`
	ExternalIDCrmB       optional.Value[string]                     `json:"externalIdCrmB"`
	ExternalIDCrmC       optional.Value[string]                     `json:"externalIdCrmC"`
	ExternalIDCrmD       optional.Value[string]                     `json:"externalIdCrmD"`
	Priority             optional.Value[int64]                      `json:"priority"`
	UTCOffset            optional.Value[int64]                      `json:"utcOffset"`
	StatusID             optional.Value[int64]                      `json:"statusId"`
	Source               optional.Value[string]                     `json:"source"`
	AdCampaignID         optional.Value[string]                     `json:"adCampaignId"`
	CustomValues         optional.Value[map[string]json.RawMessage] `json:"customValues"`
	PlanningCallDateTime optional.Value[json.RawMessage]            `json:"planningCallDateTime"`
}

// Changes is a checked Input: the same tri-state fields with values normalised (phone in E.164,
// ids parsed, times read). On create, null means the same as absent.
type Changes struct {
	LeadType          optional.Value[string]
	Phone             optional.Value[string]
	OrderID           optional.Value[int64]
	OrderCode         optional.Value[string]
	MessengerUserName optional.Value[string]
	MessengerPhone    optional.Value[string]
	MessengerID       optional.Value[int64]
	SocialNetworkID   optional.Value[int64]
	SocialLogin       optional.Value[string]
	Name              optional.Value[string]
	SourceComment     optional.Value[string]
	ExternalIDCrmA    optional.Value[string]
	ExternalIDCrmB    optional.Value[string]
	ExternalIDCrmC    optional.Value[string]
	ExternalIDCrmD    optional.Value[string]
	Priority          optional.Value[int64]
	UTCOffset         optional.Value[int64]
	StatusID          optional.Value[int64]
	Source            optional.Value[string]
	AdCampaignID      optional.Value[string]
	// CustomValues is keyed by custom-field id and holds the sent values until CheckReferences has
	// matched them with their fields.
	CustomValues   optional.Value[map[int64]json.RawMessage]
	PlanningCallAt optional.Value[time.Time]
	// PhoneUTCOffset is the offset inferred from a sent phone (nil when its zones disagree); it
	// fills utcOffset when the body does not send one.
	PhoneUTCOffset *int64
}

// Mode says which operation a body is for: a create requires some fields, an update none.
type Mode int

// The modes.
const (
	ForCreate Mode = iota
	ForUpdate
)

// Limits of text fields; longer values are mistakes that break lists and exports.
const (
	maxTextLen        = 255
	maxCodeLen        = 100
	maxCommentLen     = 65535
	MaxAdCampaignLen  = 64
	minUTCOffset      = -12
	maxUTCOffset      = 14
	ruleNotNull       = "must not be null"
	ruleRequired      = "is required"
	rulePhone         = "must be a phone number in E.164 format"
	rulePositiveID    = "must be an integer > 0"
	ruleDigitsID      = "must be an integer > 0 or a string of its digits"
	rulePlanningCall  = "must be a Unix time in seconds or an ISO 8601 date-time"
	ruleSourceComment = "must be a string (or JSON, kept as its text)"
)

// Check applies every rule that needs nothing but the body (and the configured ad systems) and
// returns the normalised changes, adding each broken field to fe under its v2 name. References
// (the order, the status category, custom fields) are checked afterwards against their owners.
// now is the instant at which time-zone offsets are read.
func (in Input) Check(mode Mode, rules Rules, now time.Time, fe apperr.FieldErrors) Changes {
	f := checker{mode: mode, fe: fe}
	c := Changes{
		LeadType:          f.oneOf("leadType", in.LeadType, Types),
		OrderID:           f.positive("orderId", in.OrderID),
		OrderCode:         f.text("orderCode", in.OrderCode, maxCodeLen, false),
		MessengerUserName: f.text("messengerUserName", in.MessengerUserName, maxTextLen, true),
		SocialLogin:       f.text("socialLogin", in.SocialLogin, maxTextLen, true),
		Name:              f.text("name", in.Name, maxTextLen, true),
		ExternalIDCrmA:    f.text("externalIdCrmA", in.ExternalIDCrmA, maxTextLen, true),
		ExternalIDCrmB:    f.text("externalIdCrmB", in.ExternalIDCrmB, maxTextLen, true),
		ExternalIDCrmC:    f.text("externalIdCrmC", in.ExternalIDCrmC, maxTextLen, true),
		ExternalIDCrmD:    f.text("externalIdCrmD", in.ExternalIDCrmD, maxTextLen, true),
		AdCampaignID:      f.text("adCampaignId", in.AdCampaignID, MaxAdCampaignLen, true),
		SocialNetworkID:   f.digitsID("socialNetworkId", in.SocialNetworkID),
		MessengerID:       f.digitsID("messengerId", in.MessengerID),
		StatusID:          f.positive("statusId", in.StatusID),
		Priority:          f.priority("priority", in.Priority),
		UTCOffset:         f.utcOffset("utcOffset", in.UTCOffset),
		SourceComment:     f.sourceComment("sourceComment", in.SourceComment),
		PlanningCallAt:    f.planningCall("planningCallDateTime", in.PlanningCallDateTime),
	}
	if mode == ForCreate {
		for field, sent := range map[string]bool{
			"leadType":  in.LeadType.Present(),
			"phone":     in.Phone.Present(),
			"orderId":   in.OrderID.Present(),
			"orderCode": in.OrderCode.Present(),
		} {
			if !sent {
				fe.Add(field, ruleRequired)
			}
		}
	}
	if v, ok := f.value("phone", in.Phone, false); ok {
		if e164, valid := rules.Phones.Normalize(v); valid {
			c.Phone = optional.Of(e164)
			c.PhoneUTCOffset = phone.UTCOffset(e164, now)
		} else {
			fe.Add("phone", rulePhone)
		}
	}
	// messengerPhone is "E.164 recommended": the platform dials it like phone, so it is checked and
	// normalised like phone (null or "" clears it); "x" would be a number nobody can call.
	c.MessengerPhone = f.text("messengerPhone", in.MessengerPhone, maxTextLen, true)
	if c.MessengerPhone.Present() && c.MessengerPhone.V != "" {
		if e164, ok := rules.Phones.Normalize(c.MessengerPhone.V); ok {
			c.MessengerPhone.V = e164
		} else {
			fe.Add("messengerPhone", rulePhone)
			c.MessengerPhone = optional.Value[string]{}
		}
	}
	if v, ok := f.value("source", in.Source, false); ok {
		v = strings.TrimSpace(v)
		if rules.ValidSource(v) {
			c.Source = optional.Of(v)
		} else {
			fe.Add("source", rules.SourceRule())
		}
	}
	c.CustomValues = f.customValues(in.CustomValues)
	return c
}

// checker applies the per-field rules of one mode.
type checker struct {
	mode Mode
	fe   apperr.FieldErrors
}

// value returns a sent value. A null is "absent" on create; on update it is refused for a field
// that is not nullable, and returned as (zero, false) with the caller keeping the null.
func (f checker) value(field string, v optional.Value[string], nullable bool) (string, bool) {
	if !v.Set {
		return "", false
	}
	if v.Null {
		if f.mode == ForUpdate && !nullable {
			f.fe.Add(field, ruleNotNull)
		}
		return "", false
	}
	return v.V, true
}

// keepNull carries an update's null through to the changes (create ignores nulls).
func keepNull[T, U any](f checker, v optional.Value[T]) optional.Value[U] {
	if f.mode == ForUpdate && v.Set && v.Null {
		return optional.Null[U]()
	}
	return optional.Value[U]{}
}

func nullable[T any](f checker, field string, v optional.Value[T], canBeNull bool) (T, bool) {
	var zero T
	if !v.Set {
		return zero, false
	}
	if v.Null {
		if f.mode == ForUpdate && !canBeNull {
			f.fe.Add(field, ruleNotNull)
		}
		return zero, false
	}
	return v.V, true
}

func (f checker) text(field string, v optional.Value[string], max int, canBeNull bool) optional.Value[string] {
	s, ok := nullable(f, field, v, canBeNull)
	if !ok {
		return keepNull[string, string](f, v)
	}
	s = strings.TrimSpace(s)
	switch {
	case !canBeNull && s == "":
		f.fe.Add(field, "must not be empty")
	case utf8.RuneCountInString(s) > max:
		f.fe.Addf(field, "must be at most %d characters", max)
	default:
		return optional.Of(s)
	}
	return optional.Value[string]{}
}

func (f checker) oneOf(field string, v optional.Value[string], allowed []string) optional.Value[string] {
	s, ok := nullable(f, field, v, false)
	if !ok {
		return optional.Value[string]{}
	}
	if !slices.Contains(allowed, s) {
		f.fe.Add(field, "must be one of: "+strings.Join(allowed, ", "))
		return optional.Value[string]{}
	}
	return optional.Of(s)
}

func (f checker) positive(field string, v optional.Value[int64]) optional.Value[int64] {
	n, ok := nullable(f, field, v, false)
	if !ok {
		return optional.Value[int64]{}
	}
	if n <= 0 {
		f.fe.Add(field, rulePositiveID)
		return optional.Value[int64]{}
	}
	return optional.Of(n)
}

func (f checker) priority(field string, v optional.Value[int64]) optional.Value[int64] {
	n, ok := nullable(f, field, v, false)
	if !ok {
		return optional.Value[int64]{}
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		f.fe.Addf(field, "must be an integer from %d to %d", math.MinInt32, math.MaxInt32)
		return optional.Value[int64]{}
	}
	return optional.Of(n)
}

func (f checker) utcOffset(field string, v optional.Value[int64]) optional.Value[int64] {
	n, ok := nullable(f, field, v, true)
	if !ok {
		return keepNull[int64, int64](f, v)
	}
	if n < minUTCOffset || n > maxUTCOffset {
		f.fe.Addf(field, "must be an integer from %d to %d", minUTCOffset, maxUTCOffset)
		return optional.Value[int64]{}
	}
	return optional.Of(n)
}

// digitsID reads an id sent as a number or as a string of digits (the contract types
// socialNetworkId as a string on create and an int on update: both are accepted in both).
func (f checker) digitsID(field string, v optional.Value[json.RawMessage]) optional.Value[int64] {
	raw, ok := nullable(f, field, v, true)
	if !ok {
		return keepNull[json.RawMessage, int64](f, v)
	}
	n, ok := ParseDigitsID(raw)
	if !ok {
		f.fe.Add(field, ruleDigitsID)
		return optional.Value[int64]{}
	}
	return optional.Of(n)
}

// ParseDigitsID reads a JSON number or string of digits as an id > 0.
func ParseDigitsID(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
		for _, r := range s {
			if r < '0' || r > '9' {
				return 0, false
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

func (f checker) sourceComment(field string, v optional.Value[json.RawMessage]) optional.Value[string] {
	raw, ok := nullable(f, field, v, true)
	if !ok {
		return keepNull[json.RawMessage, string](f, v)
	}
	raw = bytes.TrimSpace(raw)
	var s string
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if json.Unmarshal(raw, &s) != nil {
			f.fe.Add(field, ruleSourceComment)
			return optional.Value[string]{}
		}
	case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
		// A questionnaire log sent as JSON rather than as a JSON string: kept as its text.
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			f.fe.Add(field, ruleSourceComment)
			return optional.Value[string]{}
		}
		s = buf.String()
	default:
		f.fe.Add(field, ruleSourceComment)
		return optional.Value[string]{}
	}
	if utf8.RuneCountInString(s) > maxCommentLen {
		f.fe.Addf(field, "must be at most %d characters", maxCommentLen)
		return optional.Value[string]{}
	}
	return optional.Of(s)
}

func (f checker) planningCall(field string, v optional.Value[json.RawMessage]) optional.Value[time.Time] {
	raw, ok := nullable(f, field, v, true)
	if !ok {
		return keepNull[json.RawMessage, time.Time](f, v)
	}
	t, err := ParseCallTime(raw)
	if err != nil {
		f.fe.Add(field, err.Error())
		return optional.Value[time.Time]{}
	}
	return optional.Of(t)
}

var errNotCallTime = errors.New(rulePlanningCall)

// ParseCallTime reads a time sent as Unix seconds (a number or a string of digits) or as an ISO
// 8601 date-time (a zone-less one is UTC; a date alone is its midnight UTC). The error is the rule
// the value breaks: not such a time, or outside the years 0001 to 9999 in UTC (apitime.InRange).
func ParseCallTime(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return time.Time{}, errNotCallTime
	}
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, errNotCallTime
		}
		s = strings.TrimSpace(s)
		t, _, err := listquery.ParseTime(s)
		switch {
		case errors.Is(err, listquery.ErrTimeRange):
			return time.Time{}, err
		case err == nil:
			return t.Truncate(time.Second), nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	// Up to the year 9999: anything larger is milliseconds or a mistake.
	if err != nil || n < 0 || n > 253402300799 {
		return time.Time{}, errNotCallTime
	}
	return time.Unix(n, 0).UTC(), nil
}

func (f checker) customValues(v optional.Value[map[string]json.RawMessage]) optional.Value[map[int64]json.RawMessage] {
	m, ok := nullable(f, "customValues", v, false)
	if !ok {
		return optional.Value[map[int64]json.RawMessage]{}
	}
	if rule := customfield.CountRule(len(m)); rule != "" {
		f.fe.Add("customValues", rule)
		return optional.Value[map[int64]json.RawMessage]{}
	}
	out := make(map[int64]json.RawMessage, len(m))
	for k, raw := range m {
		id, err := strconv.ParseInt(strings.TrimSpace(k), 10, 64)
		if err != nil || id <= 0 {
			f.fe.Add("customValues", "keys must be custom-field ids (integers > 0)")
			continue
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			f.fe.Add(fmt.Sprintf("customValues.%d", id), ruleNotNull)
			continue
		}
		out[id] = raw
	}
	return optional.Of(out)
}
