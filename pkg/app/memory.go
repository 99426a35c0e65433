package app

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Release settings: every quietCheck, a process that allocated less than quietAllocs since the
// last check is quiet.
const (
	quietCheck  = 5 * time.Second
	quietAllocs = 4 << 20
)

// releaseAfterBursts calls release once each time the process goes quiet after allocating at
// least quiet bytes between two checks every apart, until ctx ends.
//
// Why: the collector runs only as the process allocates. A worker that has just drained a queue or
// settled an import keeps that work's garbage, and the pages it lived on, until the runtime's
// forced collection two minutes later; its resident memory reads the burst's peak while it idles,
// and so does the working set an orchestrator watches. One collection once it is quiet
// (debug.FreeOSMemory) hands those pages back; a process that stays busy is never interrupted.
func releaseAfterBursts(ctx context.Context, every time.Duration, quiet uint64, release func()) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocs := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last, busy := allocs(), false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := allocs()
		if now-last >= quiet {
			busy = true
		} else if busy {
			release()
			busy = false
			now = allocs() // the release's own allocations are not a burst
		}
		last = now
	}
}

// freeOSMemory is the release of a real process.
func freeOSMemory() { debug.FreeOSMemory() }
