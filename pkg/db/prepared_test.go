package db

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPreparedIsPreparedOnceAndAFailureIsNotKept(t *testing.T) {
	conn := open(t, "public", 2)
	ctx := context.Background()
	p := NewPrepared(`SELECT $1::int + 1`)
	first, err := p.Get(ctx, conn)
	require.NoError(t, err)
	second, err := p.Get(ctx, conn)
	require.NoError(t, err)
	assert.Same(t, first, second, "prepared once, then reused")
	var n int
	require.NoError(t, second.QueryRowContext(ctx, 41).Scan(&n))
	assert.Equal(t, 42, n)

	bad := NewPrepared(`SELECT * FROM no_such_table_yet`)
	_, err = bad.Get(ctx, conn)
	require.Error(t, err)
	_, err = conn.Exec(`CREATE TABLE no_such_table_yet (id int)`)
	require.NoError(t, err)
	st, err := bad.Get(ctx, conn)
	require.NoError(t, err, "the failed preparation was not kept: the next call prepares again")
	assert.NotNil(t, st)
}
