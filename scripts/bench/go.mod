module ccplatform/bench

go 1.26.0

require (
	ccplatform/gateway v0.0.0
	ccplatform/pkg v0.0.0
	github.com/google/uuid v1.6.0
	github.com/jmoiron/sqlx v1.4.0
	github.com/lib/pq v1.12.3
	go.uber.org/zap v1.28.0
)

replace (
	ccplatform/gateway => ../../gateway
	ccplatform/pkg => ../../pkg
)
