module ccplatform/services/order

go 1.26.0

require ccplatform/pkg v0.0.0

replace ccplatform/pkg => ../../pkg
