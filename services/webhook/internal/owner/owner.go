// Package owner tells the fan-out whether a subscription's owner is still an active user, as the
// user service decides (POST /internal/users/recipients): a deactivated or deleted user's
// subscriptions get no more events. Answers are kept for at most a second, so a deactivation
// stops deliveries within it without a call per event.
package owner

import (
	"context"
	"net/http"
	"sync"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/svcclient"
)

// TTL bounds how long an answer is reused: a deactivated owner's events stop within it.
const TTL = time.Second

// Resolver asks the user service whether users are active, with a cache in front.
type Resolver struct {
	client *svcclient.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[int64]entry
}

type entry struct {
	active  bool
	expires time.Time
}

// New asks through client (the user service) and keeps each answer for ttl.
func New(client *svcclient.Client, ttl time.Duration) *Resolver {
	return &Resolver{client: client, ttl: ttl, now: time.Now, entries: map[int64]entry{}}
}

type recipients struct {
	List []struct {
		IsActive bool `json:"isActive"`
	} `json:"list"`
}

// Active reports whether user id exists and is active. A user the service does not know (deleted)
// is not active; a service that cannot answer is an error (the fan-out retries the event later).
func (r *Resolver) Active(ctx context.Context, id int64) (bool, error) {
	r.mu.Lock()
	e, ok := r.entries[id]
	r.mu.Unlock()
	if ok && r.now().Before(e.expires) {
		return e.active, nil
	}
	var out recipients
	err := r.client.Do(ctx, http.MethodPost, "/internal/users/recipients", map[string]int64{"userId": id}, &out)
	active := false
	switch {
	case apperr.KindOf(err) == apperr.NotFound:
	case err != nil:
		return false, apperr.Wrap(apperr.KindOf(err), err, "whether user %d is active", id)
	default:
		active = len(out.List) == 1 && out.List[0].IsActive
	}
	r.mu.Lock()
	if len(r.entries) > 10_000 {
		clear(r.entries)
	}
	r.entries[id] = entry{active: active, expires: r.now().Add(r.ttl)}
	r.mu.Unlock()
	return active, nil
}
