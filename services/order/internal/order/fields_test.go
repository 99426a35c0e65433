package order

import (
	"reflect"
	"testing"

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

	o := fullOrder()
	assert.Len(t, o.insertArgs(), 30, "every field but id, created_at, updated_at")
	assert.Len(t, o.updateArgs(o.ID), 30, "every field but id, created_at, updated_at, created_by; then the id")
}
