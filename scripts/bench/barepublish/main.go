// Command barepublish is figure (2)'s zero-cost reference: a bare net/http server that answers
// every request with one confirmed publish of the body, wrapped as a job, to the quorum queue
// bench.bare (the pkg/mq publisher lead-api uses), and nothing else: no body check, no
// middleware. The bench runs it as a process of its own, as lead-api is one, alone and behind
// a second gateway (docs/performance.md, figure (2)). It lives with the bench, never in a
// deployment.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"ccplatform/pkg/mq"

	"github.com/google/uuid"
	"go.uber.org/zap"
)

// Queue is where the reference publishes; the bench removes it with its vhost.
const Queue = "bench.bare"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "barepublish:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// As lead-api does, so that both make ids alike.
	uuid.EnableRandPool()
	conn := mq.Dial(os.Getenv("AMQP_URL"), "barepublish", zap.NewNop(), mq.WorkQueue(Queue))
	defer conn.Close()
	if err := conn.Wait(ctx); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	pub := mq.NewPublisher(conn)
	defer pub.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		lead, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := uuid.NewString()
		body := fmt.Appendf(nil, `{"jobId":%q,"version":"v2","createMethod":"api_v2_async","body":%s,"callerUserId":1}`, id, lead)
		if err := pub.Publish(r.Context(), "", Queue, mq.Message{ID: id, Type: "lead.create", Body: body}); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"success":true,"message":"","data":{"jobId":%q}}`, id)
	})
	srv := &http.Server{Addr: os.Getenv("HTTP_ADDR"), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
