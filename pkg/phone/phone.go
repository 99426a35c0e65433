// Package phone reads phone numbers as the platform's contract sends them (E.164, with or without
// the +) quickly and exactly as libphonenumber does, and infers a number's UTC offset.
package phone

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	// The offsets of a number's time zones are read from the zone database; embedding it makes
	// the answer the same on every machine, with or without system tzdata.
	_ "time/tzdata"

	"github.com/nyaruka/phonenumbers"
)

// separators are the characters people write between digits; they carry no meaning.
var separators = strings.NewReplacer(" ", "", "-", "", "(", "", ")", "", ".", "", "\u00a0", "")

// Normalizer reads phone numbers as the contract sends them: E.164 with or without the +, always as
// an international number (never as a national number of some default region).
//
// Its answers are those of libphonenumber's Parse, IsValidNumber and Format(E164) on "+" and the
// digits, but most numbers are read without Parse and IsValidNumber, from the library's own
// metadata. Parse is written for free text ("tel:" URIs, letters, extensions such as "x123" or
// ";ext=", national numbers, IDD prefixes): it runs about ten regular expressions over its input,
// the extension one alone costing more than the rest of a create's body check. For a "+" and
// digits most of those steps provably do nothing, and what is left is splitting off the country
// calling code (see simple). IsValidNumber, the costliest step after that, builds the text of
// every pattern it tries and looks it up in a locked cache on every call, and matches each twice;
// Normalizer matches the same patterns, compiled once per calling code (see valid). Every number
// it cannot prove simple goes to Parse and IsValidNumber. TestNormalizerMatchesLibrary compares the two
// over a corpus of every calling code, every region's example numbers and their variants.
//
// A nil *Normalizer reads every number with Parse and IsValidNumber.
type Normalizer struct {
	// callingCodes holds every country calling code the library knows.
	callingCodes map[int]*callingCode
}

// callingCode is what the library does with the digits after a country calling code.
type callingCode struct {
	// nationalPrefix is the anchored pattern of the national prefix Parse strips from those
	// digits when it matches there ("^(?:8)" after +7); nil when the code's main region has none.
	nationalPrefix *regexp.Regexp
	// parseOnly marks a code whose metadata could not be matched up: its numbers go to Parse.
	parseOnly bool
	// regions are the metadata of the code's regions in the library's order.
	regions []*phonenumbers.PhoneMetadata

	// rules are compiled on the first number of the code (most codes never see one).
	compile sync.Once
	rules   []regionRules // nil: ask IsValidNumber
}

// New builds the calling-code table from the library's own metadata. Should the library's
// metadata ever be unreadable, the table is empty and every number goes through Parse: slower,
// never different.
func New() *Normalizer {
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		return &Normalizer{}
	}
	byKey := map[string]*phonenumbers.PhoneMetadata{}
	for _, md := range coll.GetMetadata() {
		byKey[metadataKey(md.GetId(), int(md.GetCountryCode()))] = md
	}
	p := &Normalizer{callingCodes: map[int]*callingCode{}}
	for code := range phonenumbers.GetSupportedCallingCodes() {
		cc := &callingCode{}
		p.callingCodes[code] = cc
		for _, region := range phonenumbers.GetRegionCodesForCountryCode(code) {
			md := byKey[metadataKey(region, code)]
			if md == nil || int(md.GetCountryCode()) != code {
				// The library would find no metadata or another code's: no ground for a shortcut.
				cc.parseOnly = true
				break
			}
			cc.regions = append(cc.regions, md)
		}
		if cc.parseOnly || len(cc.regions) == 0 {
			cc.parseOnly = true
			continue
		}
		// Parse strips the national prefix of the code's main region (its first).
		if pattern := cc.regions[0].GetNationalPrefixForParsing(); pattern != "" {
			// The expression Parse compiles for it (maybeStripNationalPrefixAndCarrierCode).
			if cc.nationalPrefix, err = regexp.Compile("^(?:" + pattern + ")"); err != nil {
				cc.parseOnly = true
			}
		}
	}
	return p
}

// metadataKey names the metadata of a region; the non-geographic codes share the region "001".
func metadataKey(region string, code int) string {
	if region == "001" {
		return region + "/" + strconv.Itoa(code)
	}
	return region
}

// Normalize returns raw in E.164 with a leading +, or ok false when raw is not a valid phone
// number.
func (p *Normalizer) Normalize(raw string) (e164 string, ok bool) {
	digits, ok := digitsOf(raw)
	if !ok {
		return "", false
	}
	if num, cc, national := p.simple(digits); num != nil {
		if !cc.valid(num, national) {
			return "", false
		}
		// Format(E164) writes "+", the calling code and the national significant number, which
		// for a simple number are the digits as sent.
		return "+" + digits, true
	}
	num, err := phonenumbers.Parse("+"+digits, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", false
	}
	return phonenumbers.Format(num, phonenumbers.E164), true
}

// phoneDigits drops the separators and the leading + of raw and returns its digits: 1 to 15 of
// them (E.164's longest), nothing else.
func digitsOf(raw string) (string, bool) {
	s := separators.Replace(strings.TrimSpace(raw))
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 15 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", false
		}
	}
	return s, true
}

// simple is what Parse("+"+digits, "") returns when that is provably a country calling code and
// the rest of the digits unchanged; nil when it may be anything else (the caller then asks Parse).
// For "+" and ASCII digits, Parse's steps come down to these:
//   - extracting the possible number, the viability check (at least 3 digits after a +), RFC 3966
//     parameters and extensions match nothing or leave the input as it is: every extension form
//     needs a character other than a digit;
//   - the calling code is the shortest prefix of 1 to 3 digits, not starting with 0, that the
//     library knows (fewer than 3 digits in all, or no such prefix, is an error);
//   - the national prefix of the code's main region is stripped from the rest only when its
//     pattern matches there;
//   - a national number starting with 0 gets the Italian leading-zero fields; one shorter than 2
//     digits is an error.
//
// simple takes only numbers of at least 4 digits, starting with a known calling code, whose rest
// has at least 2 digits, does not start with 0 and does not match the national prefix: the
// number is then {CountryCode, NationalNumber} and nothing else, as Parse makes it. It also
// returns the code's entry and the national significant number (the rest of the digits).
func (p *Normalizer) simple(digits string) (*phonenumbers.PhoneNumber, *callingCode, string) {
	if p == nil || len(digits) < 4 || digits[0] == '0' {
		return nil, nil, ""
	}
	for i := 1; i <= 3; i++ {
		code, _ := strconv.Atoi(digits[:i])
		cc, known := p.callingCodes[code]
		if !known {
			continue
		}
		national := digits[i:]
		if cc.parseOnly || len(national) < 2 || national[0] == '0' ||
			(cc.nationalPrefix != nil && cc.nationalPrefix.MatchString(national)) {
			return nil, nil, ""
		}
		n, err := strconv.ParseUint(national, 10, 64)
		if err != nil {
			return nil, nil, ""
		}
		c := int32(code)
		return &phonenumbers.PhoneNumber{CountryCode: &c, NationalNumber: &n}, cc, national
	}
	return nil, nil, ""
}

// regionRules are the patterns IsValidNumber tries for one region.
type regionRules struct {
	// leadingDigits, when the region has them, tell its numbers from those of the other regions
	// of its calling code.
	leadingDigits *regexp.Regexp
	general       numberDesc
	// types are the number types a valid number must match one of.
	types []numberDesc
}

// numberDesc is one number type of a region: its possible lengths (none listed: any) and its
// national number pattern, anchored at both ends as the library anchors it.
type numberDesc struct {
	lengths []int32
	pattern *regexp.Regexp
}

// valid is IsValidNumber(num) for a simple number whose national significant number is national.
// IsValidNumber takes the region of the number (GetRegionCodeForNumber: the code's only region;
// else the first whose leading digits match, or, for a region without leading digits, whose
// types the number matches) and answers whether the number matches one of that region's types
// (getNumberTypeHelper is not UNKNOWN).
func (cc *callingCode) valid(num *phonenumbers.PhoneNumber, national string) bool {
	cc.compile.Do(cc.compileRules)
	if cc.rules == nil {
		return phonenumbers.IsValidNumber(num)
	}
	if len(cc.rules) == 1 {
		return cc.rules[0].known(national)
	}
	for _, r := range cc.rules {
		if r.leadingDigits != nil {
			if r.leadingDigits.MatchString(national) {
				return r.known(national)
			}
		} else if r.known(national) {
			return true
		}
	}
	return false // no region: IsValidNumberForRegion(num, "") is false
}

// compileRules compiles the code's patterns as the library writes them; on any failure rules
// stay nil and the code's numbers go to IsValidNumber.
func (cc *callingCode) compileRules() {
	rules := make([]regionRules, 0, len(cc.regions))
	for _, md := range cc.regions {
		var r regionRules
		var err error
		if ld := md.GetLeadingDigits(); ld != "" {
			if r.leadingDigits, err = regexp.Compile("^(?:" + ld + ")"); err != nil {
				return
			}
		}
		if r.general, err = newNumberDesc(md.GetGeneralDesc()); err != nil {
			return
		}
		// The types getNumberTypeHelper tries; a number of any of them is valid, so the commonest
		// come first. Mobile only counts apart from fixed line when the region gives them
		// different patterns.
		descs := []*phonenumbers.PhoneNumberDesc{md.GetFixedLine()}
		if !md.GetSameMobileAndFixedLinePattern() {
			descs = append(descs, md.GetMobile())
		}
		descs = append(descs, md.GetTollFree(), md.GetPremiumRate(), md.GetSharedCost(), md.GetVoip(),
			md.GetPersonalNumber(), md.GetPager(), md.GetUan(), md.GetVoicemail())
		for _, d := range descs {
			nd, err := newNumberDesc(d)
			if err != nil {
				return
			}
			r.types = append(r.types, nd)
		}
		rules = append(rules, r)
	}
	cc.rules = rules
}

func newNumberDesc(d *phonenumbers.PhoneNumberDesc) (numberDesc, error) {
	re, err := regexp.Compile("^(?:" + d.GetNationalNumberPattern() + ")$")
	if err != nil {
		return numberDesc{}, err
	}
	return numberDesc{lengths: d.GetPossibleLength(), pattern: re}, nil
}

// known is getNumberTypeHelper(national, region) != UNKNOWN.
func (r regionRules) known(national string) bool {
	if !r.general.matches(national) {
		return false
	}
	for _, d := range r.types {
		if d.matches(national) {
			return true
		}
	}
	return false
}

// matches is the library's isNumberMatchingDesc: a possible length, and the pattern.
func (d numberDesc) matches(national string) bool {
	if len(d.lengths) > 0 && !slices.Contains(d.lengths, int32(len(national))) {
		return false
	}
	return d.pattern.MatchString(national)
}

// InferUTCOffset is the client's offset from UTC in whole hours, read from the time zones the
// number belongs to, when they all have the same whole-hour offset at now; nil when the number
// spans zones of different offsets, is of an unknown zone, or its zone is off by half hours.
func InferUTCOffset(e164 string, now time.Time) *int64 {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return nil
	}
	return UTCOffset(phonenumbers.Format(num, phonenumbers.E164), now)
}

// UTCOffset is InferUTCOffset of a number Normalize returned (cheaper: no parse). GetTimezonesForNumber(num) is
// GetTimezonesForPrefix(Format(num, E164)), which Normalize has already written.
func UTCOffset(e164 string, now time.Time) *int64 {
	zones, err := phonenumbers.GetTimezonesForPrefix(e164)
	if err != nil || len(zones) == 0 {
		return nil
	}
	var offset int
	for i, z := range zones {
		loc, ok := location(z)
		if !ok {
			return nil // "Etc/Unknown" and zones this build does not know
		}
		_, off := now.In(loc).Zone()
		if i > 0 && off != offset {
			return nil
		}
		offset = off
	}
	if offset%3600 != 0 {
		return nil
	}
	h := int64(offset / 3600)
	return &h
}

// locations caches loaded zones: loading one parses the zone database, and every create asks.
var locations sync.Map // zone name → *time.Location, or nil for an unknown zone

func location(name string) (*time.Location, bool) {
	if v, ok := locations.Load(name); ok {
		loc, _ := v.(*time.Location)
		return loc, loc != nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		locations.Store(name, (*time.Location)(nil))
		return nil, false
	}
	locations.Store(name, loc)
	return loc, true
}
