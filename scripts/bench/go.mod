module ccplatform/bench

go 1.26.0

require (
	ccplatform/gateway v0.0.0
	ccplatform/pkg v0.0.0
	github.com/google/uuid v1.6.0
	github.com/jmoiron/sqlx v1.4.0
	go.uber.org/zap v1.28.0
)

require (
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/lib/pq v1.12.3 // indirect
	github.com/mfridman/interpolate v0.0.2 // indirect
	github.com/pressly/goose/v3 v3.29.0 // indirect
	github.com/rabbitmq/amqp091-go v1.16.0 // indirect
	github.com/sethvargo/go-retry v0.5.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace (
	ccplatform/gateway => ../../gateway
	ccplatform/pkg => ../../pkg
)
