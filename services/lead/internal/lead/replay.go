package lead

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"ccplatform/pkg/db"
	"ccplatform/pkg/event"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// replayChunk is how many leads one replay transaction announces.
const replayChunk = 500

// replayIDs is the namespace of the replayed events' ids (docs/operations.md, "A dropped or
// invalidated slot").
var replayIDs = uuid.MustParse("6f1c1a52-8a43-4bf5-9d55-1d2b1e0c7a61")

// ReplayEvents announces again, into the WAL, every lead whose updated_at falls in [since, until),
// in updated_at order: lead.created for one created in the window, lead.updated for the others,
// each with the lead as it is now. It is how events lost with a dropped or invalidated slot are
// replayed from the tables. An event's id is derived from its lead, type and updatedAt, so a
// second replay of the same window publishes the same ids (consumers drop them); they are not
// the lost events' ids. It returns how many events it wrote.
func ReplayEvents(ctx context.Context, conn *sqlx.DB, since, until time.Time) (int, error) {
	const q = `SELECT ` + columns + `, ` + doNotCall + ` FROM leads
WHERE updated_at >= $1 AND updated_at < $2 AND (updated_at, id) > ($3, $4)
ORDER BY updated_at, id LIMIT $5`
	total := 0
	after, afterID := since.Add(-time.Microsecond), int64(0)
	for {
		var leads []Lead
		if err := conn.SelectContext(ctx, &leads, q, since, until, after, afterID, replayChunk); err != nil {
			return total, fmt.Errorf("read leads to replay: %w", err)
		}
		if len(leads) == 0 {
			return total, nil
		}
		evs, ids := make([]event.Event, len(leads)), make([]int64, len(leads))
		for i, l := range leads {
			typ, actor := EventUpdated, (*int64)(nil)
			if !l.CreatedAt.Before(since) {
				typ, actor = EventCreated, l.CreatedBy
			}
			ev, err := eventOf(typ, l, actor)
			if err != nil {
				return total, err
			}
			ev.ID = uuid.NewSHA1(replayIDs, []byte(strconv.FormatInt(l.ID, 10)+"/"+typ+"/"+
				l.UpdatedAt.UTC().Format(time.RFC3339Nano))).String()
			evs[i], ids[i] = ev, l.ID
		}
		if err := db.InTx(ctx, conn, func(tx *sqlx.Tx) error { return Emit(ctx, tx, evs, ids) }); err != nil {
			return total, err
		}
		total += len(evs)
		last := leads[len(leads)-1]
		after, afterID = last.UpdatedAt, last.ID
	}
}
