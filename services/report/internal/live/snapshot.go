// Package live is the live stream of the orders being worked (GET /v2/report/live/): once a tick
// one Snapshot is taken for every subscriber, each of which only filters it by the orders (or, an
// agent, the self) it may see and writes the JSON the snapshot holds ready.
package live

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"slices"
	"time"
)

// Agent is one of an order's agents in its current state.
type Agent struct {
	UserID int64  `json:"userId"`
	State  string `json:"state"`
	// Since is when the agent entered State: the time in it is the event's at minus Since.
	Since       time.Time `json:"since"`
	PauseReason *string   `json:"pauseReason"`
	// OrderID is the order the state names, if any (a call of another order is possible).
	OrderID *int64 `json:"orderId"`
}

// Dialing is an order's dialing now (the lead service's dialer): rates are fractions.
type Dialing struct {
	CallsInFlight     int     `json:"callsInFlight"`
	DialLevel         float64 `json:"dialLevel"`
	AnswerRate15m     float64 `json:"answerRate15m"`
	AbandonRate15m    float64 `json:"abandonRate15m"`
	AbandonWindow     string  `json:"abandonWindow"`
	AbandonRateWindow float64 `json:"abandonRateWindow"`
	MaxAbandonRate    float64 `json:"maxAbandonRate"`
}

// Order is one order of the stream.
type Order struct {
	OrderID       int64            `json:"orderId"`
	Agents        []Agent          `json:"agents"`
	AgentsByState map[string]int64 `json:"agentsByState"`
	// Dialing is nil for an agent, who sees only itself.
	Dialing *Dialing `json:"dialing"`
}

// Snapshot is the stream's state at At, held as the JSON of each order ready to be written.
type Snapshot struct {
	At time.Time
	// orders are the orders' ids in order; entries their JSON.
	orders  []int64
	entries map[int64][]byte
	// self holds, for each agent, the JSON of the orders it is in with itself alone and no
	// dialing figures (what an agent sees).
	self map[int64][]byte
	// all is the JSON array of every order (what staff see), written as it is by each of their
	// streams, and allSum its checksum.
	all    []byte
	allSum uint64
}

// NewSnapshot holds list at at, as every subscriber will write it.
func NewSnapshot(at time.Time, list []Order) *Snapshot {
	s := &Snapshot{At: at.UTC(), entries: make(map[int64][]byte, len(list)), self: map[int64][]byte{}}
	slices.SortFunc(list, func(a, b Order) int { return cmp.Compare(a.OrderID, b.OrderID) })
	for _, o := range list {
		if o.Agents == nil {
			o.Agents = []Agent{}
		}
		o.AgentsByState = byState(o.Agents)
		s.orders = append(s.orders, o.OrderID)
		s.entries[o.OrderID] = mustJSON(o)
		for _, a := range o.Agents {
			mine := Order{OrderID: o.OrderID, Agents: []Agent{a}, AgentsByState: byState([]Agent{a})}
			if prior := s.self[a.UserID]; len(prior) > 0 {
				s.self[a.UserID] = append(append(prior, ','), mustJSON(mine)...)
			} else {
				s.self[a.UserID] = mustJSON(mine)
			}
		}
	}
	s.all = s.AppendOrders(nil, View{All: true})
	s.allSum = Checksum(s.all)
	return s
}

// Checksum tells one view from another: a stream keeps the checksum of what it last sent rather
// than a copy of it.
func Checksum(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Orders is the JSON array of the orders v sees in s and its checksum: staff's is the snapshot's
// own; any other view is appended to buf.
func (s *Snapshot) Orders(buf []byte, v View) ([]byte, uint64) {
	if v.All && !v.Self {
		return s.all, s.allSum
	}
	b := s.AppendOrders(buf[:0], v)
	return b, Checksum(b)
}

func byState(list []Agent) map[string]int64 {
	out := map[string]int64{}
	for _, a := range list {
		out[a.State]++
	}
	return out
}

// mustJSON marshals values that cannot fail to (plain structs of numbers and strings).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// View is what one subscriber may see of a snapshot: every order, some orders, or an agent itself.
type View struct {
	All    bool
	Orders map[int64]bool
	// Self: an agent (call-center), Agent, who sees only itself.
	Self  bool
	Agent int64
}

// AppendOrders appends to dst the JSON array of the orders v sees in s.
func (s *Snapshot) AppendOrders(dst []byte, v View) []byte {
	dst = append(dst, '[')
	if v.Self {
		dst = append(dst, s.self[v.Agent]...)
		return append(dst, ']')
	}
	first := true
	for _, id := range s.orders {
		if !v.All && !v.Orders[id] {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, s.entries[id]...)
	}
	return append(dst, ']')
}
