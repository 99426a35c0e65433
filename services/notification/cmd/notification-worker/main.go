// Command notification-worker consumes notification commands: it stores one record per recipient
// and delivers each on the recipient's channels (live stream, e-mail, messenger), retrying a
// failing channel with backoff.
package main

import (
	"context"
	"fmt"
	"time"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/email"
	"ccplatform/services/notification/internal/live"
	"ccplatform/services/notification/internal/messenger"
	"ccplatform/services/notification/internal/migrations"
	"ccplatform/services/notification/internal/recipient"
	"ccplatform/services/notification/internal/worker"

	"go.uber.org/zap"
)

// Config is read from the environment (docs/architecture.md, services/notification/README.md).
type Config struct {
	config.Common
	config.Database
	config.Broker
	// HTTPAddr serves /livez, /readyz and /metrics (docs/operations.md).
	HTTPAddr  string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8095"`
	UserURL   string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
	SMTP      email.Config
	Messenger messenger.Config
	// Delivery retries: the wait after the first failure doubles up to RetryMax; a delivery gets
	// MaxAttempts tries, then it is failed.
	RetryBase   time.Duration `env:"DELIVERY_RETRY_BASE" envDefault:"2s"`
	RetryMax    time.Duration `env:"DELIVERY_RETRY_MAX" envDefault:"10m"`
	MaxAttempts int           `env:"DELIVERY_MAX_ATTEMPTS" envDefault:"10"`
	// Poll is how often due retries are looked for.
	Poll time.Duration `env:"DELIVERY_POLL_INTERVAL" envDefault:"1s"`
	// SendTimeout bounds one send; a claimed delivery is leased for twice as long, which is how
	// long the deliveries of a worker that died mid-send wait before another try.
	SendTimeout time.Duration `env:"DELIVERY_SEND_TIMEOUT" envDefault:"30s"`
	// Prefetch bounds the commands a worker holds unacked: each may fan out to every user, so a
	// few at a time is plenty.
	Prefetch int `env:"COMMAND_PREFETCH" envDefault:"32"`
}

// userTimeout bounds a recipients call; a group or "all" may list many users.
const userTimeout = 10 * time.Second

func main() { app.Main("notification-worker", run) }

// run consumes and delivers until ctx is done, then lets in-flight work finish and closes the
// broker and the database last.
func run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops) error {
	senders, err := channels(cfg, log)
	if err != nil {
		return err
	}
	conn, err := app.OpenDatabase(ctx, o, migrations.Schema, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	broker := mq.Dial(cfg.Broker.URL, "notification-worker", log, mq.WorkQueue(command.Queue), live.ExchangeTopology)
	defer broker.Close()
	o.Broker(broker)
	publisher := mq.NewPublisher(broker)
	defer publisher.Close()
	senders[delivery.Live] = live.NewSender(publisher)

	users := svcclient.New("user", cfg.UserURL, cfg.InternalToken, userTimeout)
	defer users.CloseIdleConnections()
	loop := delivery.NewLoop(delivery.NewStore(conn), senders, delivery.LoopConfig{
		Retry:       delivery.RetryPolicy{Base: cfg.RetryBase, Max: cfg.RetryMax, MaxAttempts: cfg.MaxAttempts},
		Poll:        cfg.Poll,
		SendTimeout: cfg.SendTimeout,
		Outcomes:    delivery.NewOutcomeCounter(o.Registry),
	}, log)
	log.Info("consuming", zap.String("queue", command.Queue))
	w := worker.New(worker.Deps{
		DB: conn, Conn: broker, Recipients: recipient.NewDirectory(users), Loop: loop, Log: log,
		Consumer: mq.ConsumerConfig{Prefetch: cfg.Prefetch},
	})
	var tasks app.Tasks
	tasks.Work("consumer "+command.Queue, w.Run)
	return o.ServeWhile(ctx, cfg.HTTPAddr, log, tasks.Run)
}

// channels builds the senders of the configured external channels; one that is not configured is
// skipped, said once here.
func channels(cfg Config, log *zap.Logger) (map[delivery.Channel]delivery.Sender, error) {
	senders := map[delivery.Channel]delivery.Sender{}
	if cfg.SMTP.Configured() {
		s, err := email.New(cfg.SMTP)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		senders[delivery.Email] = s
	} else {
		log.Info("e-mail delivery is not configured (SMTP_HOST empty): skipped")
	}
	if cfg.Messenger.Configured() {
		senders[delivery.Messenger] = messenger.New(cfg.Messenger)
	} else {
		log.Info("messenger delivery is not configured (MESSENGER_API_URL or MESSENGER_BOT_TOKEN empty): skipped")
	}
	return senders, nil
}
