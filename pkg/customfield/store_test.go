package customfield

import (
	"context"
	"testing"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "customfield", func(url string) int { testURL = url; return m.Run() })
}

func TestStoreUpsertsByCodeAndReadsByID(t *testing.T) {
	ctx := context.Background()
	conn, err := db.Open(ctx, testURL, "fields_a", 4)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, db.Migrate(ctx, conn, "fields_a", Migrations()))
	s := NewStore(conn)

	f, err := Definition{Code: "industry", Name: "Industry", Type: TypeSelect, Options: []string{"retail", "finance"}}.Validate()
	require.NoError(t, err)
	id, err := s.Upsert(ctx, f)
	require.NoError(t, err)
	f.Name = "Sector"
	again, err := s.Upsert(ctx, f)
	require.NoError(t, err)
	assert.Equal(t, id, again, "the same code is the same field")

	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "Sector", list[0].Name)

	byID, err := s.ByIDs(ctx, []int64{id, id + 1000})
	require.NoError(t, err)
	assert.Len(t, byID, 1, "unknown ids are left out")
	assert.Equal(t, TypeSelect, byID[id].Type)
}

func TestEachSchemaHasItsOwnCatalog(t *testing.T) {
	ctx := context.Background()
	a, err := db.Open(ctx, testURL, "fields_b", 4)
	require.NoError(t, err)
	defer a.Close()
	b, err := db.Open(ctx, testURL, "fields_c", 4)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, db.Migrate(ctx, a, "fields_b", Migrations()))
	require.NoError(t, db.Migrate(ctx, b, "fields_c", Migrations()))
	f, err := Definition{Code: "note", Name: "Note", Type: TypeString}.Validate()
	require.NoError(t, err)
	_, err = NewStore(a).Upsert(ctx, f)
	require.NoError(t, err)
	list, err := NewStore(b).List(ctx)
	require.NoError(t, err)
	assert.Empty(t, list)
}
