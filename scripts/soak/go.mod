module ccplatform/soak

go 1.26.0

require (
	ccplatform/gateway v0.0.0
	ccplatform/pkg v0.0.0
)

require github.com/lib/pq v1.12.3 // indirect

replace (
	ccplatform/gateway => ../../gateway
	ccplatform/pkg => ../../pkg
)
