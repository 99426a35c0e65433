// Package worker turns notification commands into stored records and deliveries: it consumes the
// notification.commands queue, resolves the recipients with the user service, stores one record per
// recipient together with its planned deliveries, acks, and runs the delivery loop that sends them.
package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/tracing"
	"ccplatform/services/notification/internal/command"
	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"
	"ccplatform/services/notification/internal/recipient"

	"github.com/jmoiron/sqlx"
	"go.uber.org/zap"
)

// Recipients resolves a command's target (the user service).
type Recipients interface {
	Resolve(ctx context.Context, t recipient.Target) ([]recipient.User, error)
}

// Deps is what the worker is built from.
type Deps struct {
	DB         *sqlx.DB
	Conn       *mq.Conn
	Recipients Recipients
	Loop       *delivery.Loop
	Log        *zap.Logger
	// Consumer tunes the command consumer; Queue is always command.Queue.
	Consumer mq.ConsumerConfig
}

// DefaultPrefetch is the consumer's prefetch when Deps does not set one (notification-worker's
// COMMAND_PREFETCH): each command may fan out to every user, so a few at a time is plenty.
const DefaultPrefetch = 32

// Worker consumes commands and delivers notifications.
type Worker struct {
	d Deps
}

// New is a worker over d.
func New(d Deps) *Worker {
	d.Consumer.Queue = command.Queue
	if d.Consumer.Tag == "" {
		d.Consumer.Tag = "notification-worker"
	}
	if d.Consumer.Prefetch <= 0 {
		d.Consumer.Prefetch = DefaultPrefetch
	}
	return &Worker{d: d}
}

// Run consumes and delivers until ctx is done; on return every message is acked or back with the
// broker and every send in flight is recorded.
func (w *Worker) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { w.d.Loop.Run(ctx) })
	err := w.d.Conn.Consume(ctx, w.d.Consumer, w.Handle)
	wg.Wait()
	return err
}

// Handle processes a batch of commands, each in its own transaction, and wakes the delivery loop
// once anything was stored.
func (w *Worker) Handle(ctx context.Context, batch []mq.Delivery) []mq.Result {
	results := make([]mq.Result, len(batch))
	stored := false
	for i, m := range batch {
		n, res := w.handleOne(ctx, m)
		results[i] = res
		stored = stored || n > 0
	}
	if stored {
		w.d.Loop.Kick()
	}
	return results
}

func (w *Worker) handleOne(ctx context.Context, m mq.Delivery) (int, mq.Result) {
	ctx, span := mq.Traced(ctx, m)
	defer span.End()
	log := w.d.Log.With(zap.String("message_id", m.MessageId))
	if rid, ok := m.Headers["request_id"].(string); ok {
		log = log.With(zap.String("request_id", rid))
	}
	log = log.With(tracing.LogFields(ctx)...)
	cmd, err := command.Decode(m.Body)
	if err != nil {
		log.Error("notification: undecodable command", zap.Error(err))
		return 0, mq.Result{Outcome: mq.DeadLetter, Reason: err.Error()}
	}
	n, err := w.Store(ctx, cmd)
	switch {
	case err == nil:
		log.Debug("notification: stored", zap.String("command_id", cmd.CommandID), zap.Int("records", n))
		return n, mq.Result{Outcome: mq.Ack}
	case errors.Is(err, errUnknownUser):
		// The user was deleted after the command was accepted: nothing to deliver, ever.
		log.Warn("notification: recipient no longer exists, dropped", zap.Int64("user_id", cmd.Target.UserID))
		return 0, mq.Result{Outcome: mq.Ack}
	case db.Transient(err):
		log.Warn("notification: transient failure, retrying", zap.Error(err))
		return 0, mq.Result{Outcome: mq.Retry}
	default:
		log.Error("notification: command failed", zap.Error(err))
		return 0, mq.Result{Outcome: mq.Fail, Reason: err.Error()}
	}
}

var errUnknownUser = errors.New("recipient does not exist")

// Store resolves the command's recipients and stores, in one transaction, a record per recipient
// that has none yet and its planned deliveries. It returns how many records it created: 0 for a
// redelivered command.
func (w *Worker) Store(ctx context.Context, cmd command.Command) (int, error) {
	users, err := w.d.Recipients.Resolve(ctx, cmd.Target)
	if err != nil {
		if cmd.Target.UserID > 0 && apperr.KindOf(err) == apperr.NotFound {
			return 0, errUnknownUser
		}
		return 0, err
	}
	if len(users) == 0 {
		return 0, nil
	}
	byID := make(map[int64]recipient.User, len(users))
	ids := make([]int64, 0, len(users))
	for _, u := range users {
		if _, dup := byID[u.ID]; !dup {
			ids = append(ids, u.ID)
		}
		byID[u.ID] = u
	}
	var created []notification.Notification
	err = db.InTx(ctx, w.d.DB, func(tx *sqlx.Tx) error {
		created, err = notification.InsertForRecipients(ctx, tx, cmd.CommandID, cmd.Content, ids)
		if err != nil {
			return err
		}
		var planned []delivery.Planned
		for _, n := range created {
			planned = append(planned, delivery.Plan(byID[n.UserID], n, w.d.Loop.Configured)...)
		}
		return delivery.Insert(ctx, tx, planned)
	})
	if err != nil {
		return 0, fmt.Errorf("store command %s: %w", cmd.CommandID, err)
	}
	return len(created), nil
}
