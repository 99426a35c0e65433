// Package contacts masks a lead's phone numbers for those who may call a lead but not read its
// contacts (agents, in an order whose showLeadContactsToAgent is off): the country code and the
// last two digits stay, so an agent can still tell two numbers apart and greet the country.
package contacts

import (
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Mask is phone with every digit but its country code and last two replaced by '*':
// "+79161234567" → "+7*******67"; without a leading '+' (calls' clientPhone) the same digits
// without it. What is not a phone number keeps only its last two characters.
func Mask(phone string) string {
	plus := strings.HasPrefix(phone, "+")
	digits := strings.TrimPrefix(phone, "+")
	if len(digits) <= 2 {
		return strings.Repeat("*", len(digits))
	}
	cc := ""
	if n, err := phonenumbers.Parse("+"+digits, ""); err == nil {
		cc = strconv.Itoa(int(n.GetCountryCode()))
		if !strings.HasPrefix(digits, cc) {
			cc = ""
		}
	}
	rest := digits[len(cc):]
	if len(rest) <= 2 {
		rest = strings.Repeat("*", len(rest))
	} else {
		rest = strings.Repeat("*", len(rest)-2) + rest[len(rest)-2:]
	}
	if plus {
		return "+" + cc + rest
	}
	return cc + rest
}

// MaskPtr is Mask for an optional phone.
func MaskPtr(phone *string) *string {
	if phone == nil || *phone == "" {
		return phone
	}
	m := Mask(*phone)
	return &m
}
