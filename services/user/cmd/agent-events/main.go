// Command agent-events records the telephony platform's agent state events: it consumes the
// telephony.agents queue into the user service's agent states (internal/agentstate), and relays the
// user schema's outbox (agent.state.changed) to the events exchange. Ops scale it apart from the
// user API.
package main

import (
	"context"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/event"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/outbox"
	"ccplatform/pkg/telephony"
	"ccplatform/services/user/internal/agentstate"
	"ccplatform/services/user/internal/migrations"

	"go.uber.org/zap"
)

// Config is everything the process reads from the environment.
type Config struct {
	config.Common
	config.Database
	config.Broker
	HTTPAddr  string        `env:"HTTP_ADDR" envDefault:"127.0.0.1:8098"`
	Prefetch  int           `env:"AGENT_EVENTS_PREFETCH" envDefault:"256"`
	BatchSize int           `env:"AGENT_EVENTS_BATCH_SIZE" envDefault:"100"`
	BatchWait time.Duration `env:"AGENT_EVENTS_BATCH_WAIT" envDefault:"10ms"`
	Workers   int           `env:"AGENT_EVENTS_WORKERS" envDefault:"1"`
}

func main() { app.Main("agent-events", run) }

// run consumes until ctx is done: the batch in hand is committed and acked, the rest goes back to
// the broker; then the broker connection and the database close, the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	broker := mq.Dial(cfg.Broker.URL, "agent-events", log, mq.WorkQueue(telephony.AgentsQueue), mq.EventExchange(event.Exchange))
	defer broker.Close()
	o.Broker(broker)
	pub := mq.NewPublisher(broker)
	defer pub.Close()
	consumer := agentstate.NewConsumer(agentstate.NewStore(conn), time.Now, log)
	log.Info("consuming", zap.String("queue", telephony.AgentsQueue))
	var tasks app.Tasks
	// The relay publishes the user schema's outbox (agent.state.changed, of the states this
	// process records and of those agents set through the user API) after each commit; what it
	// leaves when stopping waits there for the next start or another replica.
	relay := outbox.NewRelay(conn, pub, log, o.Registry)
	tasks.Background("outbox relay", app.Every(relay.Run))
	tasks.Work("consumer "+telephony.AgentsQueue, func(ctx context.Context) error {
		return broker.Consume(ctx, mq.ConsumerConfig{Queue: telephony.AgentsQueue, Prefetch: cfg.Prefetch,
			BatchSize: cfg.BatchSize, BatchWait: cfg.BatchWait, Workers: cfg.Workers, Tag: "agent-events"}, consumer.Handle)
	})
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}
