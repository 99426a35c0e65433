package order

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// HolidayLayout is how holiday dates are returned (dd.mm.yyyy).
const HolidayLayout = "02.01.2006"

// View is the wire form of an order (getOrder, the internal read, the order.updated payload): an
// object with every field of Order.fields, in that order, under its wire name, in its wire form.
type View struct {
	o Order
}

// ViewOf is the wire form of o.
func ViewOf(o Order) View { return View{o: o} }

// MarshalJSON writes the object.
func (v View) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := v.writeMembers(&b); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeMembers writes the object without its closing brace, for a wider view to add members.
func (v View) writeMembers(b *bytes.Buffer) error {
	b.WriteByte('{')
	for i, f := range v.o.fields() {
		value := f.ptr
		if f.wire != nil {
			value = f.wire(&v.o)
		}
		if err := writeMember(b, i > 0, f.name, value); err != nil {
			return fmt.Errorf("order %d: %w", v.o.ID, err)
		}
	}
	return nil
}

// writeMember writes "name":value, after a comma unless it is the first member.
func writeMember(b *bytes.Buffer, comma bool, name string, value any) error {
	if comma {
		b.WriteByte(',')
	}
	// Wire names are letters only (TestEveryFieldIsDescribed): nothing to escape.
	b.WriteByte('"')
	b.WriteString(name)
	b.WriteString(`":`)
	enc, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	b.Write(enc)
	return nil
}

// The wire forms that differ from the stored value (Order.fields).

// scheduleWire is the schedule as 7 days, [] for days off: a stored one may have fewer.
func scheduleWire(o *Order) any { return o.CallSchedule.Padded() }

// holidaysWire are the dates as dd.mm.yyyy.
func holidaysWire(o *Order) any {
	out := make([]string, 0, len(o.CallHolidayOverrides))
	for _, d := range o.CallHolidayOverrides {
		out = append(out, d.Format(HolidayLayout))
	}
	return out
}

// emptyList is how the contract writes an empty map: as an empty array.
var emptyList = json.RawMessage("[]")

// customValuesWire is the map, or [] when it is empty (contract).
func customValuesWire(o *Order) any {
	if len(o.CustomValues) == 0 {
		return emptyList
	}
	return o.CustomValues
}

// transferNumber is the wire form: names is an object, or [] when there are none (contract).
type transferNumber struct {
	Number string `json:"number"`
	Names  any    `json:"names"`
}

func transferNumbersWire(o *Order) any {
	out := make([]transferNumber, 0, len(o.TransferNumbers))
	for _, t := range o.TransferNumbers {
		w := transferNumber{Number: t.Number, Names: emptyList}
		if len(t.Names) > 0 {
			w.Names = t.Names
		}
		out = append(out, w)
	}
	return out
}
