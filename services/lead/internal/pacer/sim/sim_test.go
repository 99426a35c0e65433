package sim_test

import (
	"fmt"
	"os"
	"testing"

	"ccplatform/services/lead/internal/pacer"
	"ccplatform/services/lead/internal/pacer/sim"
)

func order(mode string) sim.Order {
	return sim.Order{Mode: mode, MaxAbandonRate: 0.03, MaxLinesPerAgent: 3}
}

// TestPacerFigures runs the standard model (sim.Standard: 8 hours, seeds 1 to 5) with 5, 20 and 50
// agents, progressive and predictive, and holds the pacer to its guarantees: the abandon rate at
// or under 3.0 % in every seed; at 20 agents occupancy ≥ 0.80 and ≥ 1.15× progressive's in the
// same seed; at 50 agents ≥ 0.85. PACER_FIGURES=1 prints the table (make bench).
func TestPacerFigures(t *testing.T) {
	show := os.Getenv("PACER_FIGURES") != ""
	if show {
		fmt.Println("agents seed | progressive occupancy abandon | predictive occupancy abandon | ratio")
	}
	for _, agents := range []int{5, 20, 50} {
		for seed := uint64(1); seed <= 5; seed++ {
			prog := sim.Run(sim.Standard(agents), order(pacer.Progressive), seed)
			pred := sim.Run(sim.Standard(agents), order(pacer.Predictive), seed)
			ratio := pred.Occupancy / prog.Occupancy
			if show {
				fmt.Printf("%6d %4d | %.3f %.2f%% | %.3f %.2f%% | %.2f\n", agents, seed,
					prog.Occupancy, 100*prog.AbandonRate, pred.Occupancy, 100*pred.AbandonRate, ratio)
			}
			if pred.AbandonRate > 0.03 {
				t.Errorf("%d agents, seed %d: abandon rate %.2f%% over 3.0%%", agents, seed, 100*pred.AbandonRate)
			}
			switch agents {
			case 20:
				if pred.Occupancy < 0.80 || ratio < 1.15 {
					t.Errorf("20 agents, seed %d: occupancy %.3f (progressive %.3f, ×%.2f): want ≥ 0.80 and ≥ 1.15×", seed, pred.Occupancy, prog.Occupancy, ratio)
				}
			case 50:
				if pred.Occupancy < 0.85 {
					t.Errorf("50 agents, seed %d: occupancy %.3f, want ≥ 0.85", seed, pred.Occupancy)
				}
			}
		}
	}
}
