package main

import (
	"context"
	"testing"
	"time"

	"ccplatform/pkg/config"
	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/mqtest"
	"ccplatform/pkg/ops"
	"ccplatform/services/call/internal/migrations"
	"ccplatform/services/call/internal/servicetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var dbURL string

func TestMain(m *testing.M) {
	dbtest.Main(m, "call_ingest_main", func(url string) int {
		dbURL = url
		return m.Run()
	})
}

// TestRunConsumesAndStops runs the whole consumer, feeds it one platform event, and stops it as a
// signal would.
func TestRunConsumesAndStops(t *testing.T) {
	amqpURL, drop, err := mqtest.CreateVhost("call_ingest_main")
	require.NoError(t, err)
	t.Cleanup(func() { _ = drop() })

	cfg := Config{
		Common:    config.Common{LogLevel: "error"},
		Database:  config.Database{URL: dbURL, MaxConns: 4},
		Broker:    config.Broker{URL: amqpURL},
		Prefetch:  16,
		BatchSize: 10,
		BatchWait: 10 * time.Millisecond,
		Workers:   1,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zap.NewNop(), ops.New("call-ingest")) }()

	b := servicetest.Dial(t, amqpURL, mq.WorkQueue("telephony.calls"))
	ev := servicetest.Event(servicetest.LeadID(), time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	b.PublishEvent(t, "telephony.calls", ev)

	conn, err := db.Open(context.Background(), dbURL, migrations.Schema.Name, 2)
	require.NoError(t, err)
	defer conn.Close()
	servicetest.Eventually(t, 20*time.Second, func() bool {
		var n int
		return conn.Get(&n, `SELECT count(*) FROM calls WHERE platform_call_id = $1 AND finished_published_at IS NOT NULL`,
			ev.PlatformCallID) == nil && n == 1
	}, "the event is stored and announced")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop")
	}
}
