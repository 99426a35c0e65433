// Package agents asks the user service which of an order's agents may take a call and in what
// state each is (POST /internal/agents/eligible), for the paced lease (internal/dialer). Answers
// are cached a second: a paced lease is asked several times a second per dialer, and a state a
// second old is what the pacer's retry interval assumes anyway.
package agents

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
)

// Agent states (the user service's agent state).
const (
	StateOffline   = "offline"
	StateAvailable = "available"
)

// PhoneModePredictive is the phoneMode of an agent who takes predictive calls.
const PhoneModePredictive = "predictive"

// Agent is an eligible agent as the user service answers.
type Agent struct {
	UserID int64  `json:"userId"`
	State  string `json:"state"`
	// Since is when the agent entered State (nil: never seen, offline).
	Since *time.Time `json:"since"`
	// PauseReason is why a paused agent paused (nil: no reason, or not paused).
	PauseReason *string `json:"pauseReason"`
	PhoneMode   string  `json:"phoneMode"`
	OrderID     *int64  `json:"orderId"`
}

// DefaultTTL is how long an answer is used.
const DefaultTTL = time.Second

// Directory asks the user service, with a cache in front.
type Directory struct {
	client *svcclient.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	list    []Agent
	expires time.Time
}

// NewDirectory asks through client (nil: no user service; every question is Unavailable unless
// remembered) and caches answers for ttl.
func NewDirectory(client *svcclient.Client, ttl time.Duration) *Directory {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Directory{client: client, ttl: ttl, now: time.Now, entries: map[string]entry{}}
}

// key names a question: the same users and groups in any order are one question.
func key(users, groups []int64) string {
	u, g := slices.Sorted(slices.Values(users)), slices.Sorted(slices.Values(groups))
	var b strings.Builder
	for _, id := range slices.Compact(u) {
		b.WriteString(strconv.FormatInt(id, 10) + ",")
	}
	b.WriteString("|")
	for _, id := range slices.Compact(g) {
		b.WriteString(strconv.FormatInt(id, 10) + ",")
	}
	return b.String()
}

// Eligible lists the active users among users and the members of groups, each with its current
// state. The user service down is Unavailable.
func (d *Directory) Eligible(ctx context.Context, users, groups []int64) ([]Agent, error) {
	if len(users) == 0 && len(groups) == 0 {
		return []Agent{}, nil
	}
	k := key(users, groups)
	d.mu.Lock()
	e, ok := d.entries[k]
	d.mu.Unlock()
	if ok && d.now().Before(e.expires) {
		return e.list, nil
	}
	if d.client == nil {
		return nil, apperr.New(apperr.Unavailable, "agents cannot be read now: no user service")
	}
	body := map[string][]int64{"userIds": nonNil(users), "agentGroupIds": nonNil(groups)}
	var out struct {
		List []Agent `json:"list"`
	}
	if err := d.client.Do(ctx, http.MethodPost, "/internal/agents/eligible", body, &out); err != nil {
		if apperr.KindOf(err) == apperr.Unavailable {
			return nil, apperr.Wrap(apperr.Unavailable, err, "agents cannot be read now, the user service is unavailable")
		}
		return nil, apperr.Wrap(apperr.Internal, err, "read the eligible agents")
	}
	if out.List == nil {
		out.List = []Agent{}
	}
	d.Remember(users, groups, out.List)
	return out.List, nil
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// Remember stores list as the user service's answer for users and groups (to warm the cache, and
// in tests that need agents without the user service).
func (d *Directory) Remember(users, groups []int64, list []Agent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entries[key(users, groups)] = entry{list: list, expires: d.now().Add(d.ttl)}
}
