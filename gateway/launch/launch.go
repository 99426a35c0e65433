// Package launch is the gateway's configuration and wiring: what cmd/gateway runs, and what the
// bench's gateway without the route policy (scripts/bench/gateway-nopolicy) runs with one option
// changed.
package launch

import (
	"context"
	"fmt"
	"time"

	"ccplatform/gateway/api"
	"ccplatform/gateway/internal/auth"
	"ccplatform/gateway/internal/gwmetrics"
	"ccplatform/gateway/internal/health"
	"ccplatform/gateway/internal/proxy"
	"ccplatform/gateway/internal/ratelimit"
	"ccplatform/gateway/internal/route"
	"ccplatform/gateway/internal/server"

	"ccplatform/pkg/app"
	"ccplatform/pkg/config"
	"ccplatform/pkg/httpserver"
	"ccplatform/pkg/mq"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/svcclient"

	"go.uber.org/zap"
)

// Config is everything the gateway reads from the environment.
type Config struct {
	config.Common
	HTTPAddr string `env:"HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	// MetricsAddr serves /metrics (and the probes) apart from the public port; empty: not served.
	MetricsAddr     string `env:"METRICS_ADDR" envDefault:"127.0.0.1:9080"`
	UserURL         string `env:"USER_URL" envDefault:"http://127.0.0.1:8081"`
	OrderURL        string `env:"ORDER_URL" envDefault:"http://127.0.0.1:8082"`
	LeadURL         string `env:"LEAD_URL"`
	CallURL         string `env:"CALL_URL"`
	NotificationURL string `env:"NOTIFICATION_URL"`
	WebhookURL      string `env:"WEBHOOK_URL"`
	ReportURL       string `env:"REPORT_URL"`
	// AuthCacheTTL is how long a verified key is trusted (never past its expiry); a revoked key,
	// or a deactivated user's, works at most this long (docs/architecture.md, "Order scopes and
	// keys": at most 1 s).
	AuthCacheTTL    time.Duration `env:"AUTH_CACHE_TTL" envDefault:"1s"`
	BodyLimitBytes  int64         `env:"BODY_LIMIT_BYTES" envDefault:"1048576"`
	UpstreamTimeout time.Duration `env:"UPSTREAM_TIMEOUT" envDefault:"10s"`
	RateLimitRPS    float64       `env:"RATE_LIMIT_RPS" envDefault:"200"`
	RateLimitBurst  int           `env:"RATE_LIMIT_BURST" envDefault:"400"`
	// AuthFailureRPS and AuthFailureBurst bound the 401 answers per client address.
	AuthFailureRPS   float64 `env:"AUTH_FAILURE_RPS" envDefault:"0.5"`
	AuthFailureBurst int     `env:"AUTH_FAILURE_BURST" envDefault:"20"`
	// StreamsPerKey bounds the live streams (notifications, the report's live stream) one API key
	// holds open.
	StreamsPerKey int `env:"STREAMS_PER_KEY" envDefault:"5"`
	// The health check: the broker (config.Broker), the consumers every queue needs, the external
	// platforms (empty = not configured), and the timeout of each probe.
	config.Broker
	QueueConsumers       string        `env:"QUEUE_CONSUMERS" envDefault:"lead.jobs:1,telephony.calls:1,telephony.agents:1,notification.commands:1,webhook.events:1,report.events:1"`
	TelephonyPlatformURL string        `env:"TELEPHONY_PLATFORM_URL"`
	VoicePlatformURL     string        `env:"VOICE_PLATFORM_URL"`
	HealthTimeout        time.Duration `env:"HEALTH_TIMEOUT" envDefault:"300ms"`
	// The queue consumers' probe listeners, each a component of the health check whose /readyz
	// tells whether it is stuck on a delivery (docs/operations.md); empty = not probed.
	LeadWorkerURL         string `env:"LEAD_WORKER_URL"`
	CallIngestURL         string `env:"CALL_INGEST_URL"`
	NotificationWorkerURL string `env:"NOTIFICATION_WORKER_URL"`
	WebhookDispatcherURL  string `env:"WEBHOOK_DISPATCHER_URL"`
	AgentEventsURL        string `env:"AGENT_EVENTS_URL"`
	ReportWorkerURL       string `env:"REPORT_WORKER_URL"`
	// MonitoredQueues are the queues whose depth and consumers /metrics reports (each with its
	// dead-letter queue).
	MonitoredQueues []string `env:"MONITORED_QUEUES" envDefault:"lead.jobs,lead.call-finished,telephony.calls,telephony.agents,notification.commands,webhook.events,report.events"`
}

// negativeAuthTTL is how long a refused key stays refused without asking the user service again.
const negativeAuthTTL = time.Second

// authTimeout bounds one verify call: a hung user service costs a request seconds, not minutes.
const authTimeout = 3 * time.Second

// Options are what differs between the deployed gateway (the zero value) and the bench's variant.
type Options struct {
	// OpenRoutes leaves every route open to every verified key (no route policy): only the
	// bench's gateway-nopolicy sets it, to measure what the policy costs. Never deploy it.
	OpenRoutes bool
}

// Run is the gateway's run function (app.Main): config checks, wiring, serving until ctx ends.
func Run(ctx context.Context, cfg Config, log *zap.Logger, o *ops.Ops, opts Options) error {
	ups, err := route.ParseUpstreams(map[route.Service]string{
		route.User:         cfg.UserURL,
		route.Order:        cfg.OrderURL,
		route.Lead:         cfg.LeadURL,
		route.Call:         cfg.CallURL,
		route.Notification: cfg.NotificationURL,
		route.Webhook:      cfg.WebhookURL,
		route.Report:       cfg.ReportURL,
	})
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if _, ok := ups[route.User]; !ok {
		return fmt.Errorf("config: USER_URL is required: API keys are verified by the user service")
	}
	if cfg.BodyLimitBytes <= 0 {
		return fmt.Errorf("config: BODY_LIMIT_BYTES must be > 0")
	}
	if cfg.UpstreamTimeout <= 0 {
		return fmt.Errorf("config: UPSTREAM_TIMEOUT must be > 0")
	}
	needs, err := health.ParseNeeds(cfg.QueueConsumers)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// The gateway's own broker connection serves the health check only; it heals by itself.
	broker := mq.Dial(cfg.Broker.URL, "gateway", log)
	defer broker.Close()

	m := gwmetrics.New(o.Registry)
	o.Registry.MustRegister(health.NewQueueCollector(broker, cfg.MonitoredQueues, needs, time.Second))
	users := svcclient.New("user", cfg.UserURL, cfg.InternalToken, authTimeout)
	fwd := proxy.New(proxy.Config{InternalToken: cfg.InternalToken, UpstreamTimeout: cfg.UpstreamTimeout,
		Metrics: upstreamMetrics(m)}, log)
	defer fwd.CloseIdleConnections()
	spec, err := api.JSON()
	if err != nil {
		return fmt.Errorf("api description: %w", err)
	}
	streams := ratelimit.NewStreams(cfg.StreamsPerKey)
	streams.Rejections = m.RateLimited.WithLabelValues("streams")
	handler, err := server.New(server.Deps{
		Ops:       o,
		Log:       log,
		Routes:    route.Table(),
		Upstreams: ups,
		Auth: auth.NewCache(auth.UserService(users), auth.Options{
			TTL:         cfg.AuthCacheTTL,
			NegativeTTL: min(negativeAuthTTL, cfg.AuthCacheTTL),
			Hits:        m.AuthHits, Misses: m.AuthMisses, Refusals: m.AuthRefusals,
		}),
		Limiter: ratelimit.New(ratelimit.Options{RPS: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst,
			Rejections: m.RateLimited.WithLabelValues("key")}),
		AuthFailures: ratelimit.New(ratelimit.Options{RPS: cfg.AuthFailureRPS, Burst: cfg.AuthFailureBurst,
			Rejections: m.RateLimited.WithLabelValues("auth_failure")}),
		Streams:    streams,
		Forbidden:  m.AuthRefusals.WithLabelValues("forbidden"),
		Proxy:      fwd,
		OpenRoutes: opts.OpenRoutes,
		SpecYAML:   api.YAML,
		SpecJSON:   spec,
		BodyLimit:  cfg.BodyLimitBytes,
		Health:     healthChecker(cfg, ups, broker, needs).Handler(),
	})
	if err != nil {
		return fmt.Errorf("build handler: %w", err)
	}
	for svc, u := range ups {
		log.Info("upstream", zap.String("service", string(svc)), zap.String("url", u.String()))
	}
	var tasks app.Tasks
	tasks.Work("http", func(ctx context.Context) error {
		return httpserver.ListenAndServe(ctx, cfg.HTTPAddr, handler, serverTimeouts(cfg.UpstreamTimeout), log)
	})
	return o.ServeWhile(ctx, cfg.MetricsAddr, log, tasks.Run)
}

// healthChecker probes the gateway, every deployed service, the queue consumers it knows the
// probe listeners of, the broker, the queues' consumer counts and the external platforms.
func healthChecker(cfg Config, ups route.Upstreams, broker *mq.Conn, needs []health.Need) *health.Checker {
	client := health.NewHTTPClient()
	probes := []health.Probe{health.Gateway()}
	for _, svc := range route.Services() {
		if u, ok := ups[svc]; ok {
			probes = append(probes, health.Service(health.ServiceKey(string(svc)), u.String(), client))
		}
	}
	for _, c := range []struct{ name, url string }{
		{"lead-worker", cfg.LeadWorkerURL}, {"call-ingest", cfg.CallIngestURL},
		{"notification-worker", cfg.NotificationWorkerURL}, {"webhook-dispatcher", cfg.WebhookDispatcherURL},
		{"agent-events", cfg.AgentEventsURL},
		{"report-worker", cfg.ReportWorkerURL},
	} {
		if c.url != "" {
			probes = append(probes, health.Consumer(c.name, c.url, client))
		}
	}
	probes = append(probes,
		health.Broker(broker),
		health.QueueHub(broker, needs),
		health.Platform(health.KeyTelephony, cfg.TelephonyPlatformURL, client),
		health.Platform(health.KeyVoice, cfg.VoicePlatformURL, client),
	)
	return health.NewChecker(cfg.HealthTimeout, probes...)
}

// serverTimeouts keeps the kit's defaults, except that writing an answer may take as long as the
// upstream may take to start it. The event-stream route lifts both deadlines per request.
func serverTimeouts(upstream time.Duration) httpserver.Timeouts {
	t := httpserver.DefaultTimeouts
	if w := upstream + 5*time.Second; w > t.Write {
		t.Write = w
	}
	return t
}

// upstreamMetrics are the proxy's metrics, none in the benchmark's build without request metrics.
func upstreamMetrics(m *gwmetrics.Set) proxy.Metrics {
	if !ops.RequestMetrics {
		return proxy.Metrics{}
	}
	return proxy.Metrics{Requests: m.UpstreamRequests, Duration: m.UpstreamDuration, Errors: m.UpstreamErrors}
}
