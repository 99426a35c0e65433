package order

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"ccplatform/pkg/apperr"

	"github.com/stretchr/testify/assert"
)

// Every field of Order is in the description exactly once, so that a field added to Order alone
// cannot be left out of the table or the wire form unnoticed.
func TestEveryFieldIsDescribed(t *testing.T) {
	var o Order
	described := map[uintptr]string{}
	columns, names := map[string]bool{}, map[string]bool{}
	for _, f := range o.fields() {
		p := reflect.ValueOf(f.ptr).Pointer()
		assert.NotContains(t, described, p, "%s: described twice", f.column)
		described[p] = f.column
		assert.False(t, columns[f.column], "column %s twice", f.column)
		assert.False(t, names[f.name], "wire name %s twice", f.name)
		assert.Regexp(t, `^[a-zA-Z]+$`, f.name, "View writes wire names unescaped")
		columns[f.column], names[f.name] = true, true
	}
	v := reflect.ValueOf(&o).Elem()
	for i := range v.NumField() {
		_, ok := described[v.Field(i).Addr().Pointer()]
		assert.True(t, ok, "Order.%s is not in Order.fields", v.Type().Field(i).Name)
	}
}

func TestStatements(t *testing.T) {
	s := statementsFor([]field{
		{column: "id", writes: byDatabase}, {column: "a"}, {column: "created_by", writes: byCreate},
		{column: "updated_at", writes: stamped}, {column: "b"},
	})
	assert.Equal(t, "id, a, created_by, updated_at, b", s.columns)
	assert.Equal(t, "INSERT INTO orders (a, created_by, b) VALUES ($1, $2, $3) RETURNING id", s.insert)
	assert.Equal(t, "UPDATE orders SET a = $1, updated_at = now(), b = $2 WHERE id = $3 RETURNING id, a, created_by, updated_at, b", s.update)

	// The order's own statements take as many arguments as they have placeholders.
	s = statementsFor((&Order{}).fields())
	o := fullOrder()
	assert.Len(t, o.insertArgs(), strings.Count(s.insert, "$"))
	assert.Len(t, o.updateArgs(o.ID), strings.Count(s.update, "$"))
}

// Every field of Changes is applied: a Changes with that one field sent changes a new Order.
func TestEveryChangeIsApplied(t *testing.T) {
	ct := reflect.TypeFor[Changes]()
	for i := range ct.NumField() {
		var c Changes
		sent := reflect.ValueOf(&c).Elem().Field(i)
		sent.FieldByName("Set").SetBool(true)
		sent.FieldByName("V").Set(nonZero(sent.FieldByName("V").Type()))
		var o Order
		c.ApplyTo(&o)
		assert.NotEqual(t, Order{}, o, "Changes.%s is not applied", ct.Field(i).Name)
	}
}

// nonZero is a value of t that is not its zero value.
func nonZero(t reflect.Type) reflect.Value {
	if t == reflect.TypeFor[time.Time]() {
		return reflect.ValueOf(time.Unix(1, 0).UTC())
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Uint8:
		v.SetUint('1')
	case reflect.Slice:
		v.Set(reflect.Append(v, nonZero(t.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(nonZero(t.Key()), nonZero(t.Elem()))
	case reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(nonZero(t.Field(i).Type))
		}
	default:
		panic("nonZero: no value for " + t.String())
	}
	return v
}

// Every field of Input is read by Check: sent alone, it is either refused or passed on in Changes.
func TestEverySentFieldIsChecked(t *testing.T) {
	it := reflect.TypeFor[Input]()
	for i := range it.NumField() {
		var in Input
		sent := reflect.ValueOf(&in).Elem().Field(i)
		sent.FieldByName("Set").SetBool(true)
		sent.FieldByName("V").Set(nonZero(sent.FieldByName("V").Type()))
		fe := apperr.FieldErrors{}
		ch := in.Check(ForUpdate, NewDateParser(), fe)
		assert.True(t, len(fe) > 0 || !reflect.ValueOf(ch).IsZero(), "Input.%s is not checked", it.Field(i).Name)
	}
}
