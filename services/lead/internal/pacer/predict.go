package pacer

import (
	"math"
	"slices"
	"time"
)

// exactAgents is the largest team whose overflow is computed exactly (a Poisson-binomial
// convolution); above it a normal approximation is as good and costs no more with the team.
const exactAgents = 15

// predictive is how many calls to dial now (before the cap on lines) so that the answers expected
// within the horizon overflow the agents free by then by no more than the allowed share.
func predictive(in Input, ringing int) int {
	s := in.Stats
	rate := min(1, float64(s.Answered)/float64(max(s.Dialed, 1)))
	if rate <= 0 {
		return 0
	}
	delays := seconds(s.AnswerDelays)
	handles := seconds(s.HandleTimes)
	wrap := s.WrapUp
	if wrap <= 0 {
		wrap = DefaultWrapUp
	}
	w := wrap.Seconds()
	// The horizon: about when a call dialed now is answered, and the grace an answered call waits.
	h := mean(delays, 10) + Grace.Seconds()

	// Supply: agents free now, and those expected free by the horizon.
	var free []float64
	for _, a := range in.Agents {
		e := in.Now.Sub(a.Since).Seconds()
		switch a.State {
		case StateAvailable:
			free = append(free, 1)
		case StateWrapUp:
			if w-e <= h {
				free = append(free, 1)
			} else {
				free = append(free, 0)
			}
		case StateRinging, StateOnCall:
			// Still talking after e seconds: the whole handle is over e + wrap-up.
			free = append(free, conditional(handles, e+w, e+h))
		}
	}
	// Demand: the calls still ringing at a person's phone (the youngest of those in flight: the
	// older ones are the likelier to be with an agent), each answered within the horizon with the
	// chance its age leaves, and each new call.
	ages := make([]float64, len(in.InFlight))
	for i, c := range in.InFlight {
		ages[i] = in.Now.Sub(c.DialedAt).Seconds()
	}
	slices.Sort(ages)
	var answers []float64
	for _, x := range ages[:min(ringing, len(ages))] {
		answers = append(answers, answeredWithin(rate, delays, x, h))
	}
	fresh := rate * cdf(delays, h)

	// The allowance halves at half the limit and ends before it, at steeringEnd of it: what is
	// dialed now is answered later, so the rate must turn before it reaches the limit.
	share := overflowShare * 2 * (1 - abandonRate(s)/(steeringEnd*math.Max(in.MaxAbandonRate, 1e-9)))
	if in.MaxAbandonRate <= 0 {
		share = overflowShare
	}
	if share <= 0 {
		return 0
	}
	limit := len(in.Agents)*int(math.Ceil(in.MaxLinesPerAgent)) + 1
	o := newOverflow(answers, free, len(in.Agents) <= exactAgents)
	d := 0
	for d < limit {
		o.add(fresh)
		if o.expected() > share*o.meanAnswers() {
			break
		}
		d++
	}
	return d
}

// overflow is the distribution of answers A and free agents F within the horizon, and E[(A−F)+]:
// the answers expected to find no agent.
type overflow struct {
	exact  bool
	pa, pf []float64 // exact: the distributions of A and F
	ma, va float64   // the mean and variance of A
	mf, vf float64   // of F
}

func newOverflow(answers, free []float64, exact bool) *overflow {
	o := &overflow{exact: exact}
	if exact {
		o.pa, o.pf = []float64{1}, []float64{1}
		for _, f := range free {
			o.pf = addBernoulli(o.pf, f)
		}
	}
	for _, f := range free {
		o.mf += f
		o.vf += f * (1 - f)
	}
	for _, q := range answers {
		o.add(q)
	}
	return o
}

// add counts one more call answered within the horizon with probability q.
func (o *overflow) add(q float64) {
	o.ma += q
	o.va += q * (1 - q)
	if o.exact {
		o.pa = addBernoulli(o.pa, q)
	}
}

func (o *overflow) meanAnswers() float64 { return o.ma }

func (o *overflow) expected() float64 {
	if !o.exact {
		mu, sd := o.ma-o.mf, math.Sqrt(o.va+o.vf)
		if sd == 0 {
			return math.Max(0, mu)
		}
		z := mu / sd
		return mu*normCDF(z) + sd*normPDF(z)
	}
	e := 0.0
	for a, pa := range o.pa {
		if pa == 0 {
			continue
		}
		for f := 0; f < a && f < len(o.pf); f++ {
			e += pa * o.pf[f] * float64(a-f)
		}
	}
	return e
}

// addBernoulli is the distribution p of a count with one more event of probability q.
func addBernoulli(p []float64, q float64) []float64 {
	out := make([]float64, len(p)+1)
	for k, v := range p {
		out[k] += v * (1 - q)
		out[k+1] += v * q
	}
	return out
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// seconds is sample in seconds, sorted.
func seconds(sample []time.Duration) []float64 {
	out := make([]float64, len(sample))
	for i, d := range sample {
		out[i] = d.Seconds()
	}
	slices.Sort(out)
	return out
}

func mean(sorted []float64, otherwise float64) float64 {
	if len(sorted) == 0 {
		return otherwise
	}
	t := 0.0
	for _, v := range sorted {
		t += v
	}
	return t / float64(len(sorted))
}

// cdf is the share of the sorted sample at or below x.
func cdf(sorted []float64, x float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	n, _ := slices.BinarySearch(sorted, math.Nextafter(x, math.Inf(1)))
	return float64(n) / float64(len(sorted))
}

// conditional is P(X ≤ b | X > a) from the sorted sample: the chance an agent busy past a is free by
// b. Past the whole sample nothing is known, and the agent is assumed to free up at the sample's
// usual pace (b−a over its mean).
func conditional(sorted []float64, a, b float64) float64 {
	above := 1 - cdf(sorted, a)
	n := above * float64(len(sorted))
	if n < 5 {
		return math.Min(1, math.Max(0, b-a)/mean(sorted, 180))
	}
	return (cdf(sorted, b) - cdf(sorted, a)) / above
}

// answeredWithin is the chance that a call ringing for x seconds is answered within h more: of the
// calls still ringing at x, the answered ones whose delay falls in (x, x+h]. An unanswered call is
// taken to ring past every answer delay.
func answeredWithin(rate float64, delays []float64, x, h float64) float64 {
	if len(delays) == 0 {
		return 0
	}
	still := rate * (1 - cdf(delays, x))
	if still <= 0 {
		return 0
	}
	return rate * (cdf(delays, x+h) - cdf(delays, x)) / (still + (1 - rate))
}
