module ccplatform/deployments/monitoring/check

go 1.26.0

require github.com/VictoriaMetrics/metricsql v0.87.3

require (
	github.com/VictoriaMetrics/metrics v1.35.3 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	golang.org/x/sys v0.32.0 // indirect
)
