package asynccreate

import "github.com/prometheus/client_golang/prometheus"

// NewStateCounter registers lead_async_jobs_total: jobs accepted by lead-api, and created or failed
// by lead-worker (a job dead-lettered unprocessed shows in mq_dead_letters_total instead).
func NewStateCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lead_async_jobs_total",
		Help: "Async lead-create jobs by state reached: accepted (lead-api), created or failed (lead-worker).",
	}, []string{"state"})
	reg.MustRegister(c)
	return c
}
