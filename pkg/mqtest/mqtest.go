// Package mqtest gives a test run a RabbitMQ vhost of its own on the broker that AMQP_URL (or the
// local default) points at, made through the management API and deleted after.
package mqtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultURL is the broker the dev scripts start.
const DefaultURL = "amqp://guest:guest@127.0.0.1:5672/"

// BaseURL is AMQP_URL or DefaultURL.
func BaseURL() string {
	if u := os.Getenv("AMQP_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// ManagementURL is RABBITMQ_MANAGEMENT_URL or the management API beside the broker (port 15672).
func ManagementURL() string {
	if u := os.Getenv("RABBITMQ_MANAGEMENT_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	u, err := url.Parse(BaseURL())
	if err != nil {
		return "http://127.0.0.1:15672"
	}
	return "http://" + u.Hostname() + ":15672"
}

// CreateVhost makes a vhost named after label, grants the broker URL's user every permission on
// it, and returns the AMQP URL of the vhost and a function that deletes it.
func CreateVhost(label string) (string, func() error, error) {
	base, err := url.Parse(BaseURL())
	if err != nil {
		return "", nil, fmt.Errorf("AMQP_URL: %w", err)
	}
	user := base.User.Username()
	pass, _ := base.User.Password()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	vhost := "cctest-" + label + "-" + hex.EncodeToString(suffix)
	mgmt := ManagementURL()
	call := func(method, path, body string) error {
		req, err := http.NewRequest(method, mgmt+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.SetBasicAuth(user, pass)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
		if err != nil {
			return fmt.Errorf("%s %s (is the management plugin on? run scripts/deps.sh): %w", method, path, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
		}
		return nil
	}
	esc := url.PathEscape(vhost)
	if err := call(http.MethodPut, "/api/vhosts/"+esc, `{}`); err != nil {
		return "", nil, fmt.Errorf("create vhost: %w", err)
	}
	if err := call(http.MethodPut, "/api/permissions/"+esc+"/"+url.PathEscape(user),
		`{"configure":".*","write":".*","read":".*"}`); err != nil {
		return "", nil, fmt.Errorf("grant vhost: %w", err)
	}
	u := *base
	u.Path = "/" + vhost
	u.RawPath = "/" + esc
	drop := func() error { return call(http.MethodDelete, "/api/vhosts/"+esc, "") }
	return u.String(), drop, nil
}

// WithVhost calls run with the AMQP URL of a vhost of its own (CreateVhost), deletes the vhost,
// and returns run's exit code; a vhost that cannot be made is code 1. It nests in dbtest.Main.
func WithVhost(label string, run func(amqpURL string) int) int {
	u, drop, err := CreateVhost(label)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mqtest:", err)
		return 1
	}
	defer func() {
		if err := drop(); err != nil {
			fmt.Fprintln(os.Stderr, "mqtest: delete vhost:", err)
		}
	}()
	return run(u)
}
