package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The growth check compares two samples of every process, one after warm-up and one at the end.
//
// A long run (longer than Config.Baseline) takes each after the load stood still for
// Config.Settle, past the services' 120 s idle timeout: every idle keep-alive connection holds a
// goroutine in the server it reaches and two in the client, and idle pools are as large as the
// last burst made them, so only a settled sample counts the process alone. There RSS and
// goroutines may grow maxGrowth at most.
//
// A short run (CI's) cannot wait for that: its samples are the windows' own (the load stopped
// for about a second and the mix's idle connections closed, but not the gateway's to the
// services), shortBaseline into the load and at the end. So the check is limited to what it can
// tell honestly:
//   - goroutines may grow by at most one per worker (two in the gateway, the client end of its
//     upstream connections): the most that idle connections left by the busiest moment can hold.
//     A goroutine leaked per request shows above that on any route with more than about
//     workers / (rate × (duration − shortBaseline)) of the traffic (0.4 % for 64 workers over 60 s
//     at 300 req/s);
//   - RSS may grow shortMaxRSS at most: warm-up is not over after half a minute (heaps and pools
//     still grow), so only a gross leak fails a short run; a slow one is the long run's to find.

// maxGrowth is how much a process's RSS or goroutines may grow from the baseline to the end of a
// long run.
const maxGrowth = 0.10

// The short run's windows, the point of its first sample and its bound on RSS.
const (
	shortWindow   = 15 * time.Second
	shortBaseline = 30 * time.Second
	shortMaxRSS   = 0.50
)

// growthSamples are the two samples of the check, nil until taken.
type growthSamples struct {
	base, end *sample
}

// growthPlan says how the run checks growth.
func growthPlan(cfg Config) string {
	if cfg.short() {
		return fmt.Sprintf("short run: growth from %s to the end, unsettled (goroutines +%d at most, RSS +%.0f%%)", shortBaseline, cfg.Workers, 100*shortMaxRSS)
	}
	return fmt.Sprintf("growth from %s to the end (each sample after %s without load)", cfg.Baseline, cfg.Settle)
}

// observe takes the samples of the check after a window whose own sample is s, taken after
// loaded of load.
func (g *growthSamples) observe(ctx context.Context, cfg Config, out io.Writer, procs *sampler, s sample, loaded time.Duration, last bool) {
	if cfg.short() {
		switch {
		case last && g.base != nil:
			g.end = &s
		case !last && g.base == nil && loaded >= shortBaseline:
			g.base = &s
		}
		return
	}
	switch {
	case last && g.base != nil:
		g.end = procs.settle(ctx, out, loaded, cfg.Settle)
	case !last && g.base == nil && loaded >= cfg.Baseline:
		g.base = procs.settle(ctx, out, loaded, cfg.Settle)
	}
}

// check prints the growth of every process and returns what failed.
func (g growthSamples) check(out io.Writer, cfg Config) []string {
	if g.base == nil || g.end == nil {
		fmt.Fprintf(out, "growth not checked: the run is too short for a sample after warm-up\n")
		return nil
	}
	kind := "settled samples"
	if cfg.short() {
		kind = "unsettled samples of a short run"
	}
	fmt.Fprintf(out, "growth from %s to %s (%s):\n", g.base.at, g.end.at, kind)
	var fails []string
	for _, name := range g.end.order {
		b, l := g.base.procs[name], g.end.procs[name]
		if !b.ok || !l.ok {
			fails = append(fails, fmt.Sprintf("%s: metrics not read at %s or at the end", name, g.base.at))
			continue
		}
		rss, gor := growth(b.rss, l.rss), growth(b.goroutines, l.goroutines)
		fmt.Fprintf(out, "  %-20s RSS %6.1f → %6.1f MiB (%+5.1f%%)  goroutines %4.0f → %4.0f (%+5.1f%%)\n",
			name, b.rss/mib, l.rss/mib, 100*rss, b.goroutines, l.goroutines, 100*gor)
		maxRSS := maxGrowth
		if cfg.short() {
			maxRSS = shortMaxRSS
			slack := float64(cfg.Workers)
			if name == "gateway" {
				slack *= 2
			}
			if l.goroutines-b.goroutines > slack {
				fails = append(fails, fmt.Sprintf("%s: goroutines grew by %.0f (%.0f → %.0f), more than the %.0f idle connections can hold", name, l.goroutines-b.goroutines, b.goroutines, l.goroutines, slack))
			}
		} else if gor > maxGrowth {
			fails = append(fails, fmt.Sprintf("%s: goroutines grew %.1f%% (%.0f → %.0f), more than %.0f%%", name, 100*gor, b.goroutines, l.goroutines, 100*maxGrowth))
		}
		if rss > maxRSS {
			fails = append(fails, fmt.Sprintf("%s: RSS grew %.1f%% (%.1f → %.1f MiB), more than %.0f%%", name, 100*rss, b.rss/mib, l.rss/mib, 100*maxRSS))
		}
	}
	return fails
}

func growth(from, to float64) float64 {
	if from <= 0 {
		return 0
	}
	return (to - from) / from
}
