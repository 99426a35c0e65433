// Package diag serves Go's runtime profiles (net/http/pprof) on an address of their own, for
// measuring a binary under load. It is off unless PPROF_ADDR is set, and it never shares the API's
// listener: profiles expose internals and must stay on a loopback or operator-only address.
package diag

import (
	"context"
	"errors"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"
)

// Pprof serves the profiles on addr until ctx is done; an empty addr serves nothing. A failure to
// listen is logged, not returned: a diagnostic must never stop the service it diagnoses.
func Pprof(ctx context.Context, addr string, log *zap.Logger) {
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		log.Info("pprof listening", zap.String("addr", addr))
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof stopped", zap.Error(err))
		}
	}()
}
