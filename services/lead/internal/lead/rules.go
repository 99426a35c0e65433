package lead

import (
	"ccplatform/pkg/customfield"
	"slices"
	"strconv"
	"strings"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/phone"
	"ccplatform/services/lead/internal/catalog"
)

// DefaultAdSystems are the advertising systems a source may name when AD_SYSTEMS is not set. The
// contract leaves their real names out; these neutral codes stand in for them.
var DefaultAdSystems = []string{"searchads", "socialads", "videoads", "mapads", "mailads", "messengerads", "marketads"}

// Rules are the configurable parts of the field rules.
type Rules struct {
	// AdSystems are the codes of advertising systems; a source is "<code>.ads" or "<code>.direct".
	AdSystems []string
	// Phones reads phone numbers; nil leaves every number to libphonenumber's Parse and
	// IsValidNumber (the same answers, at many times the cost).
	Phones *phone.Normalizer
	// EditWindow is how long after their call with a lead an agent may edit it where the order's
	// agentLeadEditMode is during-call (0: DefaultEditWindow).
	EditWindow time.Duration
}

// DefaultEditWindow is the agent's wrap-up time after a call (LEAD_EDIT_WINDOW).
const DefaultEditWindow = 15 * time.Minute

// ValidSource reports whether s is organic, non-organic or "<system>.ads|direct" of a known system.
func (r Rules) ValidSource(s string) bool {
	if s == SourceOrganic || s == SourceNonOrganic {
		return true
	}
	system, kind, ok := strings.Cut(s, ".")
	return ok && (kind == "ads" || kind == "direct") && slices.Contains(r.AdSystems, system)
}

// SourceRule is the rule text of the source field.
func (r Rules) SourceRule() string {
	return "must be organic, non-organic, or <system>.ads or <system>.direct with a system of: " + strings.Join(r.AdSystems, ", ")
}

// New is the lead a create makes of its checked changes: the defaults of every field the body left
// out (source organic, priority 0, utcOffset from the phone), the status left 0 for the catalog's
// default.
func New(ch Changes, meta Meta) Lead {
	l := Lead{Source: SourceOrganic, CustomValues: CustomValues{}, CreateMethod: meta.CreateMethod,
		IP: meta.IP, CreatedBy: meta.CreatedBy, JobID: meta.JobID}
	ch.ApplyTo(&l)
	return l
}

// ApplyTo writes the changes onto l: a value sets a field, a null clears it, an absent field
// keeps it. A changed phone brings its inferred utcOffset along unless the body sends one.
func (ch Changes) ApplyTo(l *Lead) {
	optional.Set(&l.LeadType, ch.LeadType)
	optional.Set(&l.Phone, ch.Phone)
	optional.Set(&l.OrderID, ch.OrderID)
	optional.Set(&l.OrderCode, ch.OrderCode)
	optional.Set(&l.StatusID, ch.StatusID)
	optional.Set(&l.Priority, ch.Priority)
	optional.Set(&l.Source, ch.Source)
	optional.SetPtr(&l.MessengerUserName, ch.MessengerUserName)
	optional.SetPtr(&l.MessengerPhone, ch.MessengerPhone)
	optional.SetPtr(&l.MessengerID, ch.MessengerID)
	optional.SetPtr(&l.SocialNetworkID, ch.SocialNetworkID)
	optional.SetPtr(&l.SocialLogin, ch.SocialLogin)
	optional.SetPtr(&l.Name, ch.Name)
	optional.SetPtr(&l.SourceComment, ch.SourceComment)
	optional.SetPtr(&l.ExternalIDCrmA, ch.ExternalIDCrmA)
	optional.SetPtr(&l.ExternalIDCrmB, ch.ExternalIDCrmB)
	optional.SetPtr(&l.ExternalIDCrmC, ch.ExternalIDCrmC)
	optional.SetPtr(&l.ExternalIDCrmD, ch.ExternalIDCrmD)
	optional.SetPtr(&l.AdCampaignID, ch.AdCampaignID)
	optional.SetPtr(&l.PlanningCallAt, ch.PlanningCallAt)
	if ch.Phone.Present() && !ch.UTCOffset.Set {
		l.UTCOffset = ch.PhoneUTCOffset
	}
	optional.SetPtr(&l.UTCOffset, ch.UTCOffset)
	if ch.CustomValues.Present() {
		// Sending customValues replaces the whole map, as for orders ({} clears it).
		cv := make(CustomValues, len(ch.CustomValues.V))
		for id, v := range ch.CustomValues.V {
			cv[strconv.FormatInt(id, 10)] = v
		}
		l.CustomValues = cv
	}
}

// References is what the rules that look beyond the body need: the status catalog and the
// custom fields the body names.
type References struct {
	Statuses catalog.Statuses
	Fields   map[int64]customfield.Field
}

// FieldIDs lists the custom-field ids that changes name, for loading References.
func FieldIDs(chs ...Changes) []int64 {
	var ids []int64
	for _, ch := range chs {
		for id := range ch.CustomValues.V {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// CheckReferences checks the status and the custom values against the catalogs, replacing each
// custom value by its checked form, and resolves a create's default status.
func (ch *Changes) CheckReferences(mode Mode, refs References, fe apperr.FieldErrors) {
	switch {
	case ch.StatusID.Present() && mode == ForCreate:
		if rule := refs.Statuses.CheckForCreate(ch.StatusID.V); rule != "" {
			fe.Add("statusId", rule)
		}
	case ch.StatusID.Present():
		if rule := refs.Statuses.CheckForUpdate(ch.StatusID.V); rule != "" {
			fe.Add("statusId", rule)
		}
	case mode == ForCreate:
		if id, ok := refs.Statuses.Default(); ok {
			ch.StatusID.Set, ch.StatusID.V = true, id
		} else {
			fe.Add("statusId", "is required: the status catalog has no default status "+catalog.DefaultStatusCode)
		}
	}
	if !ch.CustomValues.Present() {
		return
	}
	customfield.CheckValues(ch.CustomValues.V, refs.Fields, "lead", fe)
}

// RenameFields returns err with its field errors renamed by names (v2 name → another version's
// name), so that each version's caller reads its own field names. Other errors pass unchanged.
func RenameFields(err error, names map[string]string) error {
	e, ok := apperr.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	fe := apperr.FieldErrors{}
	for field, rule := range e.Fields {
		if n, ok := names[field]; ok {
			field = n
		}
		fe.Add(field, rule)
	}
	out := fe.Err().(*apperr.Error)
	out.Kind, out.Err = e.Kind, e.Err
	return out
}
