// Package usertest runs the real user service for the tools' tests. The tools read users and
// agent groups through the user service's API only, and cannot start its handler in-process (its
// packages are internal to its module), so the tests build its binaries from the workspace and
// start it as gateway/e2e/stacktest does for the whole platform, on a database of the test
// package's own, with its demo data loaded by user-admin seed. It is imported by tests only.
package usertest

import (
	"fmt"
	"os"
	"testing"

	"ccplatform/gateway/e2e/stacktest"
	"ccplatform/pkg/dbtest"
)

// Token is the internal token the user service is started with: clients must send it.
const Token = "tools-test-token"

// Main runs m's tests, through run, against a user service of their own whose base URL run gets.
// label names the test package's database (pkg/dbtest).
func Main(m *testing.M, label string, run func(userURL string) int) {
	dbtest.Main(m, label, func(dbURL string) int {
		code, err := withUserService(dbURL, run)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", label, err)
			return 1
		}
		return code
	})
}

func withUserService(dbURL string, run func(userURL string) int) (int, error) {
	st, err := stacktest.Start(stacktest.Config{
		DatabaseURL: dbURL, InternalToken: Token,
		Processes: []stacktest.Process{{Name: "user", Pkg: "./services/user/cmd/user", Health: "/readyz"}},
		Tools:     map[string]string{"user-admin": stacktest.OperatorTools()["user-admin"]},
	})
	if st != nil {
		defer st.Close()
	}
	if err != nil {
		if st != nil {
			st.DumpLogs(os.Stderr)
		}
		return 0, fmt.Errorf("start the user service: %w", err)
	}
	if _, err := st.UserAdmin("seed"); err != nil {
		return 0, fmt.Errorf("the user service's demo data: %w", err)
	}
	return run(st.URL("user")), nil
}
