// Package server assembles lead-api's HTTP handler: the engine, its middleware and every area's
// routes. main serves it; the HTTP tests drive exactly the same handler.
package server

import (
	"net/http"

	"ccplatform/pkg/idempotency"
	"ccplatform/pkg/ops"
	"ccplatform/pkg/web"
	"ccplatform/services/lead/internal/asynccreate"
	"ccplatform/services/lead/internal/catalog"
	"ccplatform/services/lead/internal/dialer"
	"ccplatform/services/lead/internal/dnc"
	"ccplatform/services/lead/internal/imports"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/leadv1"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
)

// Deps is what the handler needs from the outside.
type Deps struct {
	ops.API
	DB          *sqlx.DB
	Leads       *lead.Service
	Catalog     *catalog.Store
	Accepter    *asynccreate.Accepter
	JobIDs      *asynccreate.IDs
	Idempotency *idempotency.Store
	Dialer      *dialer.Handler
	DNC         *dnc.Handler
	Imports     *imports.Handler
}

// New is lead-api's HTTP handler (ops.API.Handler).
func New(d Deps) http.Handler {
	idempotent := d.Idempotency.Middleware()
	// The engine admits an import's file; every other route keeps the default body limit.
	return d.Handler(imports.MaxBody, func(r gin.IRouter) {
		d.Imports.Routes(r)
		r = r.Group("", web.BodyLimit(web.DefaultBodyLimit))
		lead.NewHandler(d.Leads).Routes(r, idempotent)
		leadv1.NewHandler(d.Leads).Routes(r, idempotent)
		asynccreate.NewHandler(d.DB, d.JobIDs, d.Leads, d.Accepter).Routes(r, idempotent)
		catalog.NewHandler(d.Catalog).Routes(r)
		d.Dialer.Routes(r, idempotent)
		d.DNC.Routes(r, idempotent)
	})
}
