// Package sim is a discrete-event simulator of an outbound call center in virtual time, seeded, that
// drives the real pacer (pacer.Decide) the way a paced dialer does: it asks every second, dials what
// it is told, and the simulated telephony connects each answered call to a free agent or abandons it
// after the grace. Hours of a call center run in milliseconds, so that a change to the pacer is
// judged against the abandon limit before it ships (sim_test.go, and `make bench`).
package sim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"time"

	"ccplatform/services/lead/internal/pacer"
)

// Model is the call center: its agents and how people answer and talk.
type Model struct {
	Agents int
	// AnswerRate is the share of dialed calls a person answers.
	AnswerRate float64
	// An answered call is picked up AnswerDelay seconds after the dial (uniform in the range), an
	// unanswered one ends after NoAnswer seconds.
	AnswerDelay, NoAnswer [2]float64
	// Talk time is lognormal with mean HandleMean seconds and σ HandleSigma (of its logarithm);
	// WrapUp seconds follow each call.
	HandleMean, HandleSigma, WrapUp float64
	Hours                           float64
}

// Standard is the model the pacer's figures are measured in (docs/performance.md, "Pacing").
func Standard(agents int) Model {
	return Model{Agents: agents, AnswerRate: 0.25, AnswerDelay: [2]float64{5, 15}, NoAnswer: [2]float64{20, 30},
		HandleMean: 180, HandleSigma: 0.6, WrapUp: 10, Hours: 8}
}

// Order is how the simulated order is paced.
type Order struct {
	Mode             string
	MaxAbandonRate   float64
	MaxLinesPerAgent float64
}

// Result is what a run measured.
type Result struct {
	// Occupancy is handle time (talk and wrap-up) over logged-in time.
	Occupancy float64
	// AbandonRate is abandoned calls over answered calls.
	AbandonRate                 float64
	Dialed, Answered, Abandoned int
}

const (
	evTick = iota
	evAnswer
	evNoAnswer
	evTalkEnd
	evWrapEnd
	evGraceEnd
	evCallEnd
)

type event struct {
	at   float64
	kind int
	id   int // call or agent
	seq  int
}

type queue []event

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

type call struct {
	dialed, answered float64
	waiting, ended   bool
}

type agent struct {
	state string
	since float64
}

// recent keeps the last n values.
type recent[T any] struct {
	n    int
	vals []T
	next int
}

func (r *recent[T]) add(v T) {
	if len(r.vals) < r.n {
		r.vals = append(r.vals, v)
		return
	}
	r.vals[r.next] = v
	r.next = (r.next + 1) % r.n
}

type run struct {
	m       Model
	o       Order
	rng     *rand.Rand
	q       queue
	seq     int
	end     float64
	calls   []call
	agents  []agent
	waiting []int
	flying  map[int]bool

	outcomes        recent[bool]
	handles, delays recent[time.Duration]
	live, abandoned int
	dialed          int
	busy            float64
}

// Run simulates m's hours of the order paced by pacer.Decide, seeded.
func Run(m Model, o Order, seed uint64) Result {
	r := &run{m: m, o: o, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), end: m.Hours * 3600,
		agents: make([]agent, m.Agents), flying: map[int]bool{},
		outcomes: recent[bool]{n: 1000}, handles: recent[time.Duration]{n: 500}, delays: recent[time.Duration]{n: 500}}
	for i := range r.agents {
		r.agents[i] = agent{state: pacer.StateAvailable}
	}
	r.push(0, evTick, 0)
	for r.q.Len() > 0 {
		e := heap.Pop(&r.q).(event)
		if e.at > r.end {
			break
		}
		r.handle(e)
	}
	res := Result{Dialed: r.dialed, Answered: r.live, Abandoned: r.abandoned}
	res.Occupancy = r.busy / (float64(m.Agents) * r.end)
	if r.live > 0 {
		res.AbandonRate = float64(r.abandoned) / float64(r.live)
	}
	return res
}

func (r *run) push(at float64, kind, id int) {
	r.seq++
	heap.Push(&r.q, event{at: at, kind: kind, id: id, seq: r.seq})
}

func (r *run) uniform(b [2]float64) float64 { return b[0] + r.rng.Float64()*(b[1]-b[0]) }

func (r *run) talk() float64 {
	s := r.m.HandleSigma
	mu := math.Log(r.m.HandleMean) - s*s/2
	return math.Exp(mu + s*r.rng.NormFloat64())
}

func (r *run) handle(e event) {
	switch e.kind {
	case evTick:
		r.tick(e.at)
		r.push(e.at+1, evTick, 0)
	case evAnswer:
		c := &r.calls[e.id]
		c.answered = e.at
		r.live++
		r.outcomes.add(true)
		r.delays.add(secs(e.at - c.dialed))
		if a := r.freeAgent(); a >= 0 {
			r.connect(e.at, e.id, a)
			return
		}
		c.waiting = true
		r.waiting = append(r.waiting, e.id)
		r.push(e.at+pacer.Grace.Seconds(), evGraceEnd, e.id)
	case evNoAnswer:
		r.outcomes.add(false)
		r.endCall(e.id)
	case evGraceEnd:
		c := &r.calls[e.id]
		if c.waiting {
			c.waiting = false
			r.abandoned++
			r.endCall(e.id)
		}
	case evCallEnd:
		r.endCall(e.id)
	case evTalkEnd:
		a := &r.agents[e.id]
		a.state, a.since = pacer.StateWrapUp, e.at
		r.push(e.at+r.m.WrapUp, evWrapEnd, e.id)
	case evWrapEnd:
		a := &r.agents[e.id]
		a.state, a.since = pacer.StateAvailable, e.at
		for len(r.waiting) > 0 {
			id := r.waiting[0]
			r.waiting = r.waiting[1:]
			if r.calls[id].waiting {
				r.calls[id].waiting = false
				r.connect(e.at, id, e.id)
				return
			}
		}
	}
}

func (r *run) freeAgent() int {
	for i, a := range r.agents {
		if a.state == pacer.StateAvailable {
			return i
		}
	}
	return -1
}

// connect hands call id to agent a: the call ends with the talk, the agent is free after wrap-up.
func (r *run) connect(now float64, id, a int) {
	t := r.talk()
	r.agents[a] = agent{state: pacer.StateOnCall, since: now}
	r.handles.add(secs(t + r.m.WrapUp))
	r.busy += math.Min(now+t+r.m.WrapUp, r.end) - now
	r.push(now+t, evTalkEnd, a)
	// The call event comes when the talk ends.
	r.push(now+t, evCallEnd, id)
}

func (r *run) endCall(id int) {
	r.calls[id].ended = true
	delete(r.flying, id)
}

func (r *run) tick(now float64) {
	base := time.Unix(0, 0).UTC()
	at := func(s float64) time.Time { return base.Add(secs(s)) }
	in := pacer.Input{Now: at(now), Mode: r.o.Mode, PredictiveEnabled: true, MaxAbandonRate: r.o.MaxAbandonRate,
		MaxLinesPerAgent: r.o.MaxLinesPerAgent}
	in.Agents = make([]pacer.Agent, len(r.agents))
	for i, a := range r.agents {
		in.Agents[i] = pacer.Agent{State: a.state, Since: at(a.since)}
	}
	in.InFlight = make([]pacer.Call, 0, len(r.flying))
	for id := range r.flying {
		in.InFlight = append(in.InFlight, pacer.Call{DialedAt: at(r.calls[id].dialed)})
	}
	for _, ok := range r.outcomes.vals {
		in.Stats.Dialed++
		if ok {
			in.Stats.Answered++
		}
	}
	in.Stats.HandleTimes = r.handles.vals
	in.Stats.AnswerDelays = r.delays.vals
	in.Stats.WrapUp = secs(r.m.WrapUp)
	in.Stats.Live, in.Stats.Abandoned = int64(r.live), int64(r.abandoned)
	d := pacer.Decide(in)
	for range d.Dial {
		id := len(r.calls)
		r.calls = append(r.calls, call{dialed: now})
		r.flying[id] = true
		r.dialed++
		if r.rng.Float64() < r.m.AnswerRate {
			r.push(now+r.uniform(r.m.AnswerDelay), evAnswer, id)
		} else {
			r.push(now+r.uniform(r.m.NoAnswer), evNoAnswer, id)
		}
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
