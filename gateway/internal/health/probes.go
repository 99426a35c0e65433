package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"ccplatform/pkg/mq"
)

// Component keys of the answer besides the services' (ServiceKey).
const (
	KeyGateway   = "serviceGateway"
	KeyBroker    = "serviceMicroRabbit"
	KeyQueueHub  = "serviceMicroMqHub"
	KeyTelephony = "telephonyPlatform"
	KeyVoice     = "voicePlatform"
)

// ServiceKey is the key of a service's component: order → serviceOrder.
func ServiceKey(service string) string {
	if service == "" {
		return "service"
	}
	return "service" + strings.ToUpper(service[:1]) + service[1:]
}

// ConsumerKey is the key of a queue consumer's component: call-ingest → consumerCallIngest.
func ConsumerKey(name string) string {
	var b strings.Builder
	b.WriteString("consumer")
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// Consumer probes the /readyz of a queue consumer's probe listener at base. The queue hub counts
// a queue's consumers at the broker, which cannot tell a consumer that works from one stuck on a
// batch (a delivery retried without end holds the messages behind it): the consumer itself can,
// and its /readyz is a 503 "degraded: deliveries: stalled: ..." then.
func Consumer(name, base string, client *http.Client) Probe {
	return Service(ConsumerKey(name), base, client)
}

// Gateway is the gateway itself: it is answering.
func Gateway() Probe {
	return Probe{Key: KeyGateway, Check: func(context.Context) Status { return Up(http.StatusText(http.StatusOK)) }}
}

// NewHTTPClient is the client the HTTP probes share: no redirects followed, a short dial.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: time.Second}).DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Service probes a service's /readyz at base.
func Service(key, base string, client *http.Client) Probe {
	url := strings.TrimRight(base, "/") + "/readyz"
	return Probe{Key: key, Check: func(ctx context.Context) Status { return get(ctx, client, url) }}
}

// Platform probes an external platform with a GET at url; any 2xx is up. An empty url means the
// platform is not configured, which is reported as up.
func Platform(key, url string, client *http.Client) Probe {
	return Probe{Key: key, Check: func(ctx context.Context) Status {
		if url == "" {
			return Status{Success: true, Message: "not configured"}
		}
		return get(ctx, client, url)
	}}
}

// get is up on a 2xx answer. A service's error envelope lends its message to the status.
func get(ctx context.Context, client *http.Client, url string) Status {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Down("invalid URL")
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return Down("timed out")
		}
		return Down("unreachable")
	}
	defer resp.Body.Close()
	reason := http.StatusText(resp.StatusCode)
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return Up(reason)
	}
	s := Down("status " + strconv.Itoa(resp.StatusCode))
	var env struct {
		Message string `json:"message"`
	}
	if raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); err == nil && json.Unmarshal(raw, &env) == nil && env.Message != "" {
		s.Message += ": " + env.Message
	}
	s.Data.ReasonPhrase = reason
	return s
}

// Broker checks the gateway's own supervised connection: connected, and a channel opens on it.
func Broker(conn *mq.Conn) Probe {
	return Probe{Key: KeyBroker, Check: func(ctx context.Context) Status {
		if !conn.Connected() {
			return Down("not connected")
		}
		ch, err := conn.Channel(ctx)
		if err != nil {
			return Down("channel cannot be opened")
		}
		_ = ch.Close()
		return Up("OK")
	}}
}

// Need is how many consumers a queue must have.
type Need struct {
	Queue     string
	Consumers int
}

// ParseNeeds reads "queue:n,queue:n" (QUEUE_CONSUMERS); n >= 1.
func ParseNeeds(raw string) ([]Need, error) {
	var out []Need
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndex(part, ":")
		if i <= 0 {
			return nil, fmt.Errorf("QUEUE_CONSUMERS: %q must be queue:count", part)
		}
		q := strings.TrimSpace(part[:i])
		n, err := strconv.Atoi(strings.TrimSpace(part[i+1:]))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("QUEUE_CONSUMERS: %q: count must be an integer >= 1", part)
		}
		if seen[q] {
			return nil, fmt.Errorf("QUEUE_CONSUMERS: queue %s is listed twice", q)
		}
		seen[q] = true
		out = append(out, Need{Queue: q, Consumers: n})
	}
	return out, nil
}

// QueueHub reads each queue's consumer count from the broker; a queue is up when it has at least
// the consumers it needs, the hub when every queue is.
func QueueHub(conn *mq.Conn, needs []Need) Probe {
	return Probe{Key: KeyQueueHub, Check: func(ctx context.Context) Status {
		queues := make([]QueueStatus, len(needs))
		problems := make([]string, len(needs))
		connected := conn.Connected()
		var wg sync.WaitGroup
		for i, n := range needs {
			queues[i] = QueueStatus{QueueName: n.Queue, Data: QueueCounts{Needle: n.Consumers}}
			if !connected {
				problems[i] = n.Queue + ": broker not connected"
				continue
			}
			wg.Go(func() {
				current, _, err := conn.QueueConsumers(ctx, n.Queue)
				switch {
				case err != nil && ctx.Err() != nil:
					problems[i] = n.Queue + ": timed out"
				case err != nil:
					// A queue the broker does not know has no consumers: nothing declared it yet.
					problems[i] = n.Queue + ": not declared"
				default:
					queues[i].Data.Current = current
					queues[i].Success = current >= n.Consumers
					if !queues[i].Success {
						problems[i] = fmt.Sprintf("%s: %d of %d consumers", n.Queue, current, n.Consumers)
					}
				}
			})
		}
		wg.Wait()
		var failed []string
		for _, p := range problems {
			if p != "" {
				failed = append(failed, p)
			}
		}
		s := Status{Success: len(failed) == 0, Message: "OK", Data: Diagnostics{Consumers: queues}}
		if !s.Success {
			s.Message = strings.Join(failed, "; ")
		} else {
			s.Data.ReasonPhrase = "OK"
		}
		if s.Data.Consumers == nil {
			s.Data.Consumers = []QueueStatus{}
		}
		return s
	}}
}
