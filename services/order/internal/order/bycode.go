package order

import (
	"context"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/db"

	"github.com/gin-gonic/gin"
)

// internalByCode is GET /internal/orders?code=…: the order with that code, the same view as
// getOrder, so that tools loading fixed data (the demo seed) find their orders again instead of
// making them twice. An unknown code is a 404; no code is a 400.
func (h *Handler) internalByCode(c *gin.Context) (any, error) {
	code := c.Query("code")
	if code == "" {
		return nil, apperr.Field("code", "is required")
	}
	return h.svc.ByCode(c.Request.Context(), code)
}

// ByCode is the order with code, as getOrder shows it.
func (s *Service) ByCode(ctx context.Context, code string) (View, error) {
	o, err := s.orders.GetByCode(ctx, code)
	if err != nil {
		return View{}, err
	}
	return ViewOf(o), nil
}

// GetByCode reads the order with a code; an unknown code is NotFound.
func (s *Store) GetByCode(ctx context.Context, code string) (Order, error) {
	var o Order
	err := s.conn.QueryRowContext(ctx, `SELECT `+s.sql.columns+` FROM orders WHERE code = $1`, code).Scan(o.targets()...)
	if err = db.OneRow(err, apperr.NotFoundf("no order has code %q", code), "get order by code %q", code); err != nil {
		return Order{}, err
	}
	return o, nil
}
