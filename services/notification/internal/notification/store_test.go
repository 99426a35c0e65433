package notification_test

import (
	"context"
	"testing"

	"ccplatform/pkg/db"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/servicetest"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var env *servicetest.Env

func TestMain(m *testing.M) {
	servicetest.Main(m, "notification_store", func(e *servicetest.Env) { env = e })
}

// TestInsertIsIdempotentPerCommandAndUser: a redelivered command stores nothing twice, and a
// recipient added since gets the one record missing.
func TestInsertIsIdempotentPerCommandAndUser(t *testing.T) {
	commandID := uuid.NewString()
	c := notification.Content{Title: "once", Text: "t", Priority: "default", Level: "default"}
	insert := func(users ...int64) []int64 {
		var created []notification.Notification
		require.NoError(t, db.InTx(context.Background(), env.DB, func(tx *sqlx.Tx) error {
			var err error
			created, err = notification.InsertForRecipients(context.Background(), tx, commandID, c, users)
			return err
		}))
		var ids []int64
		for _, n := range created {
			ids = append(ids, n.UserID)
		}
		return ids
	}
	assert.ElementsMatch(t, []int64{601, 602}, insert(601, 602))
	assert.Empty(t, insert(601, 602), "the same command again stores nothing")
	assert.Equal(t, []int64{603}, insert(601, 602, 603))
	var n int
	require.NoError(t, env.DB.Get(&n, `SELECT count(*) FROM notifications WHERE command_id = $1`, commandID))
	assert.Equal(t, 3, n)
}
