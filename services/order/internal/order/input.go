package order

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/customfield"
	"ccplatform/pkg/optional"
)

// Input is the body of create and update. Every field is an optional.Value so that a field not
// sent, sent as null and sent with a value are told apart: an update changes only what is sent and
// null clears a nullable field. createdAt, updatedAt, createdBy and updatedBy are not here: like
// any unknown field they are ignored.
type Input struct {
	Code                       optional.Value[string]                     `json:"code"`
	ServiceTitle               optional.Value[string]                     `json:"serviceTitle"`
	Title                      optional.Value[string]                     `json:"title"`
	CallSchedule               optional.Value[[][]string]                 `json:"callSchedule"`
	CallHolidayOverrides       optional.Value[[]string]                   `json:"callHolidayOverrides"`
	AutoDialingEnabled         optional.Value[bool]                       `json:"autoDialingEnabled"`
	PredictiveModeEnabled      optional.Value[bool]                       `json:"predictiveModeEnabled"`
	AIDefaultLanguage          optional.Value[string]                     `json:"aiDefaultLanguage"`
	AmdDetectionEnabled        optional.Value[bool]                       `json:"amdDetectionEnabled"`
	CallRecordRule             optional.Value[string]                     `json:"callRecordRule"`
	SipEndpointUsageScheme     optional.Value[string]                     `json:"sipEndpointUsageScheme"`
	AgentUserIDs               optional.Value[[]int64]                    `json:"agentUserIds"`
	AgentGroupIDs              optional.Value[[]int64]                    `json:"agentGroupIds"`
	ShowLeadContactsToAgent    optional.Value[bool]                       `json:"showLeadContactsToAgent"`
	CallAttemptGroupID         optional.Value[int64]                      `json:"callAttemptGroupId"`
	QualifiedLeadsPerDayLimit  optional.Value[int64]                      `json:"qualifiedLeadsPerDayLimit"`
	CallScenarioID             optional.Value[int64]                      `json:"callScenarioId"`
	LeadTransformEnabled       optional.Value[bool]                       `json:"leadTransformEnabled"`
	Status                     optional.Value[string]                     `json:"status"`
	SpeechRecognitionEnabled   optional.Value[bool]                       `json:"speechRecognitionEnabled"`
	IgnoreLeadTimezone         optional.Value[bool]                       `json:"ignoreLeadTimezone"`
	SipEndpointIDs             optional.Value[[]int64]                    `json:"sipEndpointIds"`
	CustomValues               optional.Value[map[string]json.RawMessage] `json:"customValues"`
	AgentLeadCreationIsAllowed optional.Value[bool]                       `json:"agentLeadCreationIsAllowed"`
	AgentLeadEditMode          optional.Value[string]                     `json:"agentLeadEditMode"`
	AutoProcessCall            optional.Value[bool]                       `json:"autoProcessCall"`
	TransferNumbers            optional.Value[[]TransferNumberInput]      `json:"transferNumbers"`
	ClientUserID               optional.Value[int64]                      `json:"clientUserId"`
	PacingMode                 optional.Value[string]                     `json:"pacingMode"`
	MaxAbandonRatePercent      optional.Value[float64]                    `json:"maxAbandonRatePercent"`
	AbandonWindow              optional.Value[string]                     `json:"abandonWindow"`
	MaxLinesPerAgent           optional.Value[float64]                    `json:"maxLinesPerAgent"`
	DropLockoutHours           optional.Value[int64]                      `json:"dropLockoutHours"`
}

// TransferNumberInput is one sent transfer number.
type TransferNumberInput struct {
	Number optional.Value[string]            `json:"number"`
	Names  optional.Value[map[string]string] `json:"names"`
}

// Changes is a checked Input: the same tri-state fields, with values normalized (dates parsed,
// schedule padded, ids without repeats). CustomValues is keyed by custom-field id and holds the
// sent values until customfield.CheckValues has matched them with their fields.
type Changes struct {
	Code                       optional.Value[string]
	ServiceTitle               optional.Value[string]
	Title                      optional.Value[string]
	CallSchedule               optional.Value[Schedule]
	CallHolidayOverrides       optional.Value[[]time.Time]
	AutoDialingEnabled         optional.Value[bool]
	PredictiveModeEnabled      optional.Value[bool]
	AIDefaultLanguage          optional.Value[string]
	AmdDetectionEnabled        optional.Value[bool]
	CallRecordRule             optional.Value[string]
	SipEndpointUsageScheme     optional.Value[string]
	AgentUserIDs               optional.Value[[]int64]
	AgentGroupIDs              optional.Value[[]int64]
	ShowLeadContactsToAgent    optional.Value[bool]
	CallAttemptGroupID         optional.Value[int64]
	ClientUserID               optional.Value[int64]
	QualifiedLeadsPerDayLimit  optional.Value[int64]
	CallScenarioID             optional.Value[int64]
	LeadTransformEnabled       optional.Value[bool]
	Status                     optional.Value[string]
	SpeechRecognitionEnabled   optional.Value[bool]
	IgnoreLeadTimezone         optional.Value[bool]
	SipEndpointIDs             optional.Value[[]int64]
	CustomValues               optional.Value[map[int64]json.RawMessage]
	AgentLeadCreationIsAllowed optional.Value[bool]
	AgentLeadEditMode          optional.Value[string]
	AutoProcessCall            optional.Value[bool]
	TransferNumbers            optional.Value[[]TransferNumber]
	PacingMode                 optional.Value[string]
	MaxAbandonRatePercent      optional.Value[float64]
	AbandonWindow              optional.Value[string]
	MaxLinesPerAgent           optional.Value[float64]
	DropLockoutHours           optional.Value[int64]
}

// Mode says which operation a body is for: a create requires some fields, an update none.
type Mode int

// The modes.
const (
	ForCreate Mode = iota
	ForUpdate
)

// maxTitleLen bounds the two titles; longer ones are mistakes that break lists and reports.
const maxTitleLen = 255

// MaxListItems bounds every array of an order (agents, groups, virtual numbers, transfer numbers):
// an order is worked by a team, not by thousands, and each id is checked with its owner.
const MaxListItems = 100

// maxSipEndpointID is the largest virtual-number id: the telephony platform numbers its SIP
// endpoints with 32-bit integers, so a larger id names nothing it can dial through.
const maxSipEndpointID = math.MaxInt32

// maxBigintID is the largest id of a bigint column.
const maxBigintID = math.MaxInt64

// Check applies every rule that needs nothing but the body and returns the normalized changes,
// adding each broken field to fe. References (languages, custom fields, groups, users) are checked
// afterwards against their catalogs.
func (in Input) Check(mode Mode, dates *DateParser, fe apperr.FieldErrors) Changes {
	c := Changes{
		AutoDialingEnabled:         notNull(fe, "autoDialingEnabled", in.AutoDialingEnabled),
		PredictiveModeEnabled:      notNull(fe, "predictiveModeEnabled", in.PredictiveModeEnabled),
		AmdDetectionEnabled:        notNull(fe, "amdDetectionEnabled", in.AmdDetectionEnabled),
		ShowLeadContactsToAgent:    notNull(fe, "showLeadContactsToAgent", in.ShowLeadContactsToAgent),
		LeadTransformEnabled:       notNull(fe, "leadTransformEnabled", in.LeadTransformEnabled),
		SpeechRecognitionEnabled:   notNull(fe, "speechRecognitionEnabled", in.SpeechRecognitionEnabled),
		IgnoreLeadTimezone:         notNull(fe, "ignoreLeadTimezone", in.IgnoreLeadTimezone),
		AgentLeadCreationIsAllowed: notNull(fe, "agentLeadCreationIsAllowed", in.AgentLeadCreationIsAllowed),
		AutoProcessCall:            notNull(fe, "autoProcessCall", in.AutoProcessCall),
		CallRecordRule:             oneOf(fe, "callRecordRule", in.CallRecordRule, CallRecordRules),
		SipEndpointUsageScheme:     oneOf(fe, "sipEndpointUsageScheme", in.SipEndpointUsageScheme, SipEndpointUsageSchemes),
		AgentLeadEditMode:          oneOf(fe, "agentLeadEditMode", in.AgentLeadEditMode, AgentLeadEditModes),
		CallAttemptGroupID:         atLeastOne(fe, "callAttemptGroupId", in.CallAttemptGroupID),
		ClientUserID:               atLeastOne(fe, "clientUserId", in.ClientUserID),
		QualifiedLeadsPerDayLimit:  atLeastOne(fe, "qualifiedLeadsPerDayLimit", in.QualifiedLeadsPerDayLimit),
		CallScenarioID:             atLeastOne(fe, "callScenarioId", in.CallScenarioID),
		AgentUserIDs:               ids(fe, "agentUserIds", in.AgentUserIDs, false, maxBigintID),
		AgentGroupIDs:              ids(fe, "agentGroupIds", in.AgentGroupIDs, false, maxBigintID),
		SipEndpointIDs:             ids(fe, "sipEndpointIds", in.SipEndpointIDs, true, maxSipEndpointID),
		ServiceTitle:               titleOf(fe, "serviceTitle", in.ServiceTitle),
		Title:                      titleOf(fe, "title", in.Title),
		Status:                     oneOf(fe, "status", in.Status, Statuses),
		PacingMode:                 oneOf(fe, "pacingMode", in.PacingMode, PacingModes),
		MaxAbandonRatePercent:      percent(fe, "maxAbandonRatePercent", in.MaxAbandonRatePercent),
		AbandonWindow:              oneOf(fe, "abandonWindow", in.AbandonWindow, AbandonWindows),
		MaxLinesPerAgent:           between(fe, "maxLinesPerAgent", in.MaxLinesPerAgent, 1, MaxLinesPerAgentCap),
		DropLockoutHours:           hours(fe, "dropLockoutHours", in.DropLockoutHours, MaxDropLockoutHours),
	}
	if mode == ForCreate {
		for field, v := range map[string]bool{
			"serviceTitle":   in.ServiceTitle.Set,
			"title":          in.Title.Set,
			"status":         in.Status.Set,
			"sipEndpointIds": in.SipEndpointIDs.Set,
		} {
			if !v {
				fe.Add(field, "is required")
			}
		}
	}

	// A create without a code (or with null or "") gets one generated from the title.
	switch {
	case !in.Code.Set:
	case in.Code.Null || in.Code.V == "":
		if mode == ForUpdate {
			fe.Add("code", "must not be null")
		}
	case !ValidCode(in.Code.V):
		fe.Addf("code", "may contain only a-z, 0-9, - and _ and be at most %d characters", MaxCodeLen)
	default:
		c.Code = in.Code
	}

	// aiDefaultLanguage is nullable; whether the code exists is a catalog check.
	if in.AIDefaultLanguage.Present() && in.AIDefaultLanguage.V == "" {
		fe.Add("aiDefaultLanguage", "must be a language code or null")
	} else {
		c.AIDefaultLanguage = in.AIDefaultLanguage
	}

	if nn := notNull(fe, "callSchedule", in.CallSchedule); nn.Present() {
		s, problems := ParseSchedule("callSchedule", nn.V)
		addAll(fe, problems)
		if problems == nil {
			c.CallSchedule = optional.Of(s)
		}
	}
	if nn := notNull(fe, "callHolidayOverrides", in.CallHolidayOverrides); nn.Present() {
		d, problems := dates.ParseHolidays("callHolidayOverrides", nn.V)
		addAll(fe, problems)
		if problems == nil {
			c.CallHolidayOverrides = optional.Of(d)
		}
	}
	// Transfer numbers and custom values are passed on even when some elements are broken, so that
	// the catalog checks report their own problems in the same answer. A body with any broken
	// field is never applied.
	if nn := notNull(fe, "transferNumbers", in.TransferNumbers); nn.Present() {
		c.TransferNumbers = optional.Of(transferNumbers(fe, nn.V))
	}
	if nn := notNull(fe, "customValues", in.CustomValues); nn.Present() {
		c.CustomValues = optional.Of(customValueIDs(fe, nn.V))
	}
	return c
}

func addAll(fe apperr.FieldErrors, problems map[string]string) {
	for f, rule := range problems {
		fe.Add(f, rule)
	}
}

// notNull passes a non-nullable field on, reporting an explicit null.
func notNull[T any](fe apperr.FieldErrors, field string, v optional.Value[T]) optional.Value[T] {
	if v.Set && v.Null {
		fe.Add(field, "must not be null")
		return optional.Value[T]{}
	}
	return v
}

func oneOf(fe apperr.FieldErrors, field string, v optional.Value[string], allowed []string) optional.Value[string] {
	v = notNull(fe, field, v)
	if v.Present() && !slices.Contains(allowed, v.V) {
		fe.Add(field, "must be one of: "+strings.Join(allowed, ", "))
		return optional.Value[string]{}
	}
	return v
}

// atLeastOne checks a nullable integer that must be >= 1 when it has a value.
func atLeastOne(fe apperr.FieldErrors, field string, v optional.Value[int64]) optional.Value[int64] {
	if v.Present() && v.V < 1 {
		fe.Add(field, "must be an integer >= 1 or null")
		return optional.Value[int64]{}
	}
	return v
}

// percent checks a non-null rate in percent: more than 0, at most 100.
func percent(fe apperr.FieldErrors, field string, v optional.Value[float64]) optional.Value[float64] {
	v = notNull(fe, field, v)
	if v.Present() && (v.V <= 0 || v.V > 100 || math.IsNaN(v.V)) {
		fe.Add(field, "must be a number > 0 and <= 100")
		return optional.Value[float64]{}
	}
	return v
}

// between checks a non-null number within [lo, hi].
func between(fe apperr.FieldErrors, field string, v optional.Value[float64], lo, hi float64) optional.Value[float64] {
	v = notNull(fe, field, v)
	if v.Present() && !(v.V >= lo && v.V <= hi) {
		fe.Addf(field, "must be a number from %g to %g", lo, hi)
		return optional.Value[float64]{}
	}
	return v
}

// hours checks a non-null whole number of hours within [0, hi].
func hours(fe apperr.FieldErrors, field string, v optional.Value[int64], hi int64) optional.Value[int64] {
	v = notNull(fe, field, v)
	if v.Present() && (v.V < 0 || v.V > hi) {
		fe.Addf(field, "must be an integer from 0 to %d", hi)
		return optional.Value[int64]{}
	}
	return v
}

// ids checks an array of ids > 0 and drops repeats, keeping the first appearance.
func ids(fe apperr.FieldErrors, field string, v optional.Value[[]int64], nonEmpty bool, maxID int64) optional.Value[[]int64] {
	v = notNull(fe, field, v)
	if !v.Present() {
		return v
	}
	switch {
	case nonEmpty && len(v.V) == 0:
		fe.Add(field, "must not be empty")
		return optional.Value[[]int64]{}
	case len(v.V) > MaxListItems:
		fe.Addf(field, "must have at most %d elements", MaxListItems)
		return optional.Value[[]int64]{}
	}
	out := make([]int64, 0, len(v.V))
	for _, id := range v.V {
		if id <= 0 || id > maxID {
			if maxID == maxBigintID {
				fe.Add(field, "must contain only integers > 0")
			} else {
				fe.Addf(field, "must contain only integers from 1 to %d", maxID)
			}
			return optional.Value[[]int64]{}
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return optional.Of(out)
}

func titleOf(fe apperr.FieldErrors, field string, v optional.Value[string]) optional.Value[string] {
	v = notNull(fe, field, v)
	if !v.Present() {
		return v
	}
	t := strings.TrimSpace(v.V)
	switch {
	case t == "":
		fe.Add(field, "must not be empty")
	case utf8.RuneCountInString(t) > maxTitleLen:
		fe.Addf(field, "must be at most %d characters", maxTitleLen)
	default:
		return optional.Of(t)
	}
	return optional.Value[string]{}
}

func transferNumbers(fe apperr.FieldErrors, in []TransferNumberInput) []TransferNumber {
	if len(in) > MaxListItems {
		fe.Addf("transferNumbers", "must have at most %d elements", MaxListItems)
		return nil
	}
	out := make([]TransferNumber, 0, len(in))
	for i, t := range in {
		field := "transferNumbers[" + strconv.Itoa(i) + "]"
		switch {
		case !t.Number.Present():
			fe.Add(field+".number", "is required")
		case t.Number.V == "":
			fe.Add(field+".number", "must not be empty")
		case strings.ContainsFunc(t.Number.V, unicode.IsSpace):
			fe.Add(field+".number", "must not contain spaces")
		case !Dialable(t.Number.V):
			fe.Add(field+".number", ruleDialable)
		}
		names := map[string]string{}
		for lang, name := range t.Names.V {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				fe.Add(field+".names."+lang, "must not be empty")
			case utf8.RuneCountInString(name) > maxTitleLen:
				fe.Addf(field+".names."+lang, "must be at most %d characters", maxTitleLen)
			}
			names[lang] = name
		}
		out = append(out, TransferNumber{Number: t.Number.V, Names: names})
	}
	return out
}

// customValueIDs reads the keys of customValues as custom-field ids.
func customValueIDs(fe apperr.FieldErrors, in map[string]json.RawMessage) map[int64]json.RawMessage {
	if rule := customfield.CountRule(len(in)); rule != "" {
		fe.Add("customValues", rule)
		return nil
	}
	out := make(map[int64]json.RawMessage, len(in))
	for key, v := range in {
		id, err := strconv.ParseInt(key, 10, 64)
		if err != nil || id <= 0 {
			fe.Add("customValues."+key, "must be keyed by a custom field id (an integer > 0)")
			continue
		}
		out[id] = v
	}
	return out
}

// ApplyTo writes the sent fields onto o: a value replaces, null clears a nullable field, and an
// unsent field keeps its value.
func (c Changes) ApplyTo(o *Order) {
	optional.Set(&o.Code, c.Code)
	optional.Set(&o.ServiceTitle, c.ServiceTitle)
	optional.Set(&o.Title, c.Title)
	optional.Set(&o.CallSchedule, c.CallSchedule)
	optional.Set(&o.CallHolidayOverrides, c.CallHolidayOverrides)
	optional.Set(&o.AutoDialingEnabled, c.AutoDialingEnabled)
	optional.Set(&o.PredictiveModeEnabled, c.PredictiveModeEnabled)
	optional.SetPtr(&o.AIDefaultLanguage, c.AIDefaultLanguage)
	optional.Set(&o.AmdDetectionEnabled, c.AmdDetectionEnabled)
	optional.Set(&o.CallRecordRule, c.CallRecordRule)
	optional.Set(&o.SipEndpointUsageScheme, c.SipEndpointUsageScheme)
	optional.Set(&o.AgentUserIDs, c.AgentUserIDs)
	optional.Set(&o.AgentGroupIDs, c.AgentGroupIDs)
	optional.Set(&o.ShowLeadContactsToAgent, c.ShowLeadContactsToAgent)
	optional.SetPtr(&o.CallAttemptGroupID, c.CallAttemptGroupID)
	optional.SetPtr(&o.ClientUserID, c.ClientUserID)
	optional.SetPtr(&o.QualifiedLeadsPerDayLimit, c.QualifiedLeadsPerDayLimit)
	optional.SetPtr(&o.CallScenarioID, c.CallScenarioID)
	optional.Set(&o.LeadTransformEnabled, c.LeadTransformEnabled)
	optional.Set(&o.Status, c.Status)
	optional.Set(&o.SpeechRecognitionEnabled, c.SpeechRecognitionEnabled)
	optional.Set(&o.IgnoreLeadTimezone, c.IgnoreLeadTimezone)
	optional.Set(&o.SipEndpointIDs, c.SipEndpointIDs)
	if c.CustomValues.Present() {
		// customValues is one field: sending it replaces the whole map.
		o.CustomValues = make(map[string]json.RawMessage, len(c.CustomValues.V))
		for id, v := range c.CustomValues.V {
			o.CustomValues[strconv.FormatInt(id, 10)] = v
		}
	}
	optional.Set(&o.AgentLeadCreationIsAllowed, c.AgentLeadCreationIsAllowed)
	optional.Set(&o.AgentLeadEditMode, c.AgentLeadEditMode)
	optional.Set(&o.PacingMode, c.PacingMode)
	optional.Set(&o.MaxAbandonRatePercent, c.MaxAbandonRatePercent)
	optional.Set(&o.AbandonWindow, c.AbandonWindow)
	optional.Set(&o.MaxLinesPerAgent, c.MaxLinesPerAgent)
	optional.Set(&o.DropLockoutHours, c.DropLockoutHours)
	optional.Set(&o.AutoProcessCall, c.AutoProcessCall)
	optional.Set(&o.TransferNumbers, c.TransferNumbers)
}
