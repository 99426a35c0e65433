package ops

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of requests no route template matched (unknown paths, wrong
// methods): raw paths never become labels, so a scan of random URLs adds no series.
const Unmatched = "unmatched"

// DurationBuckets suit an API whose answers take milliseconds and whose alert is a p99 over 1 s.
var DurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// httpMetrics are the RED metrics of one process's HTTP server.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series caches each label set's children: WithLabelValues hashes the labels on every call.
	series sync.Map // seriesKey → *seriesPair
}

type seriesKey struct {
	route, method string
	class         int
}

type seriesPair struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// HTTPMetrics is the middleware counting and timing every request by route template, method and
// status class (http_requests_total, http_request_duration_seconds). Put it before the panic
// recovery so that a recovered panic counts as the 500 it answers.
func (o *Ops) HTTPMetrics() gin.HandlerFunc {
	o.httpOnce.Do(func() {
		o.http = &httpMetrics{
			requests: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "http_requests_total",
				Help: "HTTP requests answered, by route template, method and status class.",
			}, []string{"route", "method", "status_class"}),
			duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
				Name:    "http_request_duration_seconds",
				Help:    "Time from the request's arrival to its answer, by route template, method and status class.",
				Buckets: DurationBuckets,
			}, []string{"route", "method", "status_class"}),
		}
		o.Registry.MustRegister(o.http.requests, o.http.duration)
	})
	m := o.http
	if !RequestMetrics {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = Unmatched
		}
		m.observe(route, c.Request.Method, c.Writer.Status(), time.Since(start))
	}
}

func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	k := seriesKey{route: route, method: Method(method), class: status / 100}
	p, ok := m.series.Load(k)
	if !ok {
		labels := []string{k.route, k.method, StatusClass(status)}
		p, _ = m.series.LoadOrStore(k, &seriesPair{
			count:    m.requests.WithLabelValues(labels...),
			duration: m.duration.WithLabelValues(labels...),
		})
	}
	sp := p.(*seriesPair)
	sp.count.Inc()
	sp.duration.Observe(d.Seconds())
}

// Method is the method label: the standard methods as they are, anything else "other", since a
// client may send any token as a method.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodHead, http.MethodOptions:
		return m
	}
	return "other"
}

// StatusClass is "2xx" for 200..299 and so on; anything outside 100..599 is "other".
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}
