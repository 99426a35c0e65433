// Package config loads a binary's configuration from the environment, with defaults that work on a
// developer machine (PostgreSQL and RabbitMQ on 127.0.0.1, as scripts/deps.sh sets them up).
package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/caarlos0/env/v11"
)

// Load fills a config struct of type T from the environment (`env` and `envDefault` tags).
//
// A default applies only to a variable that is not set. One set to the empty string is empty: a
// text setting gets "" (for a service URL that means "not deployed"), and any other setting
// (numbers, durations, lists) refuses to load, naming the variable. The env package would give
// both the default, so `ORDER_URL=""` would quietly point at 127.0.0.1.
func Load[T any]() (T, error) {
	cfg, err := env.ParseAs[T]()
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if err := emptyIsEmpty(reflect.ValueOf(&cfg).Elem()); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// emptyIsEmpty undoes the defaults env applied to variables set to "" in the struct v (and the
// structs it embeds).
func emptyIsEmpty(v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous && fv.Kind() == reflect.Struct {
			if err := emptyIsEmpty(fv); err != nil {
				return err
			}
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		def, hasDefault := f.Tag.Lookup("envDefault")
		if val, set := os.LookupEnv(key); key == "" || !hasDefault || !set || val != "" {
			continue
		}
		if fv.Kind() != reflect.String {
			return fmt.Errorf("%s is set but empty: give it a value, or unset it for the default %q", key, def)
		}
		fv.SetString("")
	}
	return nil
}

// Common is what every binary reads.
type Common struct {
	LogLevel string `env:"LOG_LEVEL" envDefault:"info"`
	// InternalToken is the shared secret on every request between the gateway and services.
	InternalToken string `env:"INTERNAL_TOKEN" envDefault:"dev-internal-token"`
}

// DevInternalToken is INTERNAL_TOKEN's development default; pkg/app refuses it outside development.
const DevInternalToken = "dev-internal-token"

// Level is the configured log level.
func (c Common) Level() string { return c.LogLevel }

// Database is the PostgreSQL connection of a service. Each service takes its own URL so that
// schemas can move to separate databases without code changes.
type Database struct {
	URL      string `env:"DATABASE_URL" envDefault:"postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable"`
	MaxConns int    `env:"DB_MAX_CONNS" envDefault:"32"`
}

// Broker is the RabbitMQ connection. AMQP_URL may list the nodes of a cluster separated by
// commas (amqp://u:p@h1:5672/,amqp://u:p@h2:5672/): the connection goes to the first node that
// answers and, after a loss, to the next one in turn, re-declaring its topology there.
type Broker struct {
	URL string `env:"AMQP_URL" envDefault:"amqp://guest:guest@127.0.0.1:5672/"`
}
