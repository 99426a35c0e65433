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
	pipe := &mq.Pipeline[*item]{
		Name:   "notification",
		Log:    w.d.Log,
		Decode: decode,
		Key:    func(it *item) string { return it.cmd.CommandID },
		Check:  w.resolve,
		Write:  w.store,
	}
	err := w.d.Conn.Consume(ctx, w.d.Consumer, pipe.Handle)
	wg.Wait()
	return err
}

// item is one command on its way: its recipients once resolved.
type item struct {
	d     mq.Delivery
	cmd   command.Command
	users []recipient.User
}

func decode(d mq.Delivery) ([]*item, error) {
	cmd, err := command.Decode(d.Body)
	if err != nil {
		return nil, err
	}
	return []*item{{d: d, cmd: cmd}}, nil
}

// resolve asks the user service for each command's recipients, in the trace of the request that
// sent it. A recipient deleted since the command was accepted has nothing to deliver, ever.
func (w *Worker) resolve(ctx context.Context, items []*item) []error {
	errs := make([]error, len(items))
	for i, it := range items {
		tctx, span := mq.Traced(ctx, it.d)
		it.users, errs[i] = w.recipients(tctx, it.cmd)
		span.End()
		if errors.Is(errs[i], errUnknownUser) {
			w.d.Log.Warn("notification: recipient no longer exists, dropped", zap.Int64("user_id", it.cmd.Target.UserID),
				zap.String("message_id", it.d.MessageId))
			errs[i] = mq.Skip("recipient %d does not exist", it.cmd.Target.UserID)
		}
	}
	return errs
}

// store stores every command's records and deliveries in one transaction and wakes the delivery
// loop once anything was stored.
func (w *Worker) store(ctx context.Context, items []*item) error {
	created := 0
	err := db.InTx(ctx, w.d.DB, func(tx *sqlx.Tx) error {
		created = 0
		for _, it := range items {
			n, err := w.insert(ctx, tx, it.cmd, it.users)
			if err != nil {
				return err
			}
			created += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	if created > 0 {
		w.d.Loop.Kick()
	}
	return nil
}

var errUnknownUser = errors.New("recipient does not exist")

// recipients resolves the command's target.
func (w *Worker) recipients(ctx context.Context, cmd command.Command) ([]recipient.User, error) {
	users, err := w.d.Recipients.Resolve(ctx, cmd.Target)
	if err != nil {
		if cmd.Target.UserID > 0 && apperr.KindOf(err) == apperr.NotFound {
			return nil, errUnknownUser
		}
		return nil, fmt.Errorf("recipients of command %s: %w", cmd.CommandID, err)
	}
	return users, nil
}

// insert stores, inside tx, a record per recipient that has none yet and its planned deliveries,
// and returns how many records it created.
func (w *Worker) insert(ctx context.Context, tx *sqlx.Tx, cmd command.Command, users []recipient.User) (int, error) {
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
	created, err := notification.InsertForRecipients(ctx, tx, cmd.CommandID, cmd.Content, ids)
	if err != nil {
		return 0, fmt.Errorf("store command %s: %w", cmd.CommandID, err)
	}
	var planned []delivery.Planned
	for _, n := range created {
		planned = append(planned, delivery.Plan(byID[n.UserID], n, w.d.Loop.Configured)...)
	}
	if err := delivery.Insert(ctx, tx, planned); err != nil {
		return 0, fmt.Errorf("store deliveries of command %s: %w", cmd.CommandID, err)
	}
	return len(created), nil
}
