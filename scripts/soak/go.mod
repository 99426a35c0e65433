module ccplatform/soak

go 1.26.0

require (
	ccplatform/clients/go v0.0.0
	ccplatform/gateway v0.0.0
	ccplatform/pkg v0.0.0
	github.com/getkin/kin-openapi v0.153.0
	github.com/oapi-codegen/runtime v1.8.0
)

require (
	github.com/go-sql-driver/mysql v1.10.1 // indirect
	github.com/jmoiron/sqlx v1.4.0 // indirect
	github.com/lib/pq v1.12.3 // indirect
)

replace (
	ccplatform/clients/go => ../../clients/go
	ccplatform/gateway => ../../gateway
	ccplatform/pkg => ../../pkg
)
