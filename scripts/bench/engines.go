package main

import (
	"context"
	"fmt"
	"time"

	"ccplatform/gateway/e2e/loadtest"
)

// engines measures the gateway's two forwarding engines side by side on figure (1): sync creates
// through the gateway with its own forwarding loop and through the same binary with every route on
// httputil.ReverseProxy (gateway-rp), each against the bare one-INSERT server, at 16 and 64
// clients, in alternating rounds so that the machine's drift falls on all three alike.
func (b *bench) engines(ctx context.Context) error {
	fmt.Fprintln(b.out, "(E) forwarding engines: forwarding loop vs ReverseProxy vs bare one-INSERT server")
	const rounds = 2
	round := b.cfg.Duration
	for _, c := range []int{16, 64} {
		fwd := loadtest.NewClient(b.stack.BaseURL, c, map[string]string{"X-Api-Key": b.stack.APIKey})
		rp := loadtest.NewClient(b.stack.URL("gateway-rp"), c, map[string]string{"X-Api-Key": b.stack.APIKey})
		bare, stop, err := b.bareServerC(c)
		if err != nil {
			return err
		}
		ops := []struct {
			name string
			op   func(int) error
		}{
			{"bare", func(int) error { return bare.Do(ctx, "POST", "/", b.leadBody(), nil) }},
			{"forwarder", func(int) error { return fwd.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }},
			{"reverseproxy", func(int) error { return rp.Do(ctx, "POST", "/v2/lead/create/", b.leadBody(), nil) }},
		}
		for _, o := range ops {
			Load(c, 2*time.Second, 0, o.op)
		}
		for r := range rounds {
			res := make([]Result, len(ops))
			// Alternate the order too, so that neither engine always follows the baseline.
			order := []int{0, 1, 2}
			if r%2 == 1 {
				order = []int{0, 2, 1}
			}
			for _, i := range order {
				res[i] = Load(c, round, 0, ops[i].op)
			}
			for i, o := range ops {
				fmt.Fprintf(b.out, "    c=%d round %d %-12s %s errors %d\n", c, r+1, o.name, res[i].Summary(), res[i].Errors)
			}
			base := res[0]
			for i := 1; i < len(ops); i++ {
				fmt.Fprintf(b.out, "    c=%d round %d %-12s ratio %.2f  p99 %.2f× the baseline's\n", c, r+1, ops[i].name,
					res[i].Rate()/base.Rate(), float64(res[i].Percentile(0.99))/float64(base.Percentile(0.99)))
			}
		}
		stop()
	}
	return nil
}
