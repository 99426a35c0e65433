// Package idcheck answers other services' "which of these ids do not exist?" questions (the order
// service checks an order's agents and agent groups before it stores them), the same way for every
// table the user service owns.
package idcheck

import (
	"context"
	"fmt"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// MaxIDs bounds one check request; an order names far fewer agents or groups than this.
const MaxIDs = 10000

// Unique drops repeated ids, keeping the first occurrence's order.
func Unique(ids []int64) []int64 {
	seen := make(map[int64]struct{}, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			continue
		}
		seen[id] = struct{}{}
		out = append(out, id)
	}
	return out
}

// Missing returns, in the order given and once each, the ids that are not the id of a row of
// table (a name fixed in code, never input); ids <= 0 never are.
func Missing(ctx context.Context, q sqlx.QueryerContext, table string, ids []int64) ([]int64, error) {
	missing := []int64{}
	if len(ids) == 0 {
		return missing, nil
	}
	query := `SELECT x.id FROM unnest($1::bigint[]) WITH ORDINALITY AS x(id, n)
		WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` t WHERE t.id = x.id)
		ORDER BY x.n`
	if err := sqlx.SelectContext(ctx, q, &missing, query, pq.Array(Unique(ids))); err != nil {
		return nil, err
	}
	return missing, nil
}

type request struct {
	IDs []int64 `json:"ids"`
}

type response struct {
	Missing []int64 `json:"missing"`
}

// Handle is the check route over missing: body {"ids":[...]}, data {"missing":[...]}.
func Handle(missing func(context.Context, []int64) ([]int64, error)) gin.HandlerFunc {
	return web.Handle(func(c *gin.Context) (any, error) {
		var req request
		if err := web.DecodeJSON(c, &req); err != nil {
			return nil, err
		}
		if len(req.IDs) > MaxIDs {
			return nil, apperr.Field("ids", fmt.Sprintf("must have at most %d elements", MaxIDs))
		}
		ids, err := missing(c.Request.Context(), req.IDs)
		if err != nil {
			return nil, err
		}
		return response{Missing: ids}, nil
	})
}
