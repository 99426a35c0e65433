package config

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type binaryConfig struct {
	Common
	Database
	Broker
	HTTPAddr string        `env:"HTTP_ADDR" envDefault:"127.0.0.1:8082"`
	Timeout  time.Duration `env:"UPSTREAM_TIMEOUT" envDefault:"3s"`
}

// unset removes variables for the test and restores them after.
func unset(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		t.Setenv(n, "")
		require.NoError(t, os.Unsetenv(n))
	}
}

var allVars = []string{"LOG_LEVEL", "INTERNAL_TOKEN", "DATABASE_URL", "DB_MAX_CONNS", "AMQP_URL", "HTTP_ADDR", "UPSTREAM_TIMEOUT"}

func TestLoadDefaults(t *testing.T) {
	unset(t, allVars...)
	cfg, err := Load[binaryConfig]()
	require.NoError(t, err)
	assert.Equal(t, "info", cfg.LogLevel)
	assert.Equal(t, "dev-internal-token", cfg.InternalToken)
	assert.Equal(t, "postgres://cc:cc@127.0.0.1:5432/cc?sslmode=disable", cfg.Database.URL)
	assert.Equal(t, 32, cfg.MaxConns)
	assert.Equal(t, "amqp://guest:guest@127.0.0.1:5672/", cfg.Broker.URL)
	assert.Equal(t, "127.0.0.1:8082", cfg.HTTPAddr)
	assert.Equal(t, 3*time.Second, cfg.Timeout)
}

func TestLoadFromEnvironment(t *testing.T) {
	unset(t, allVars...)
	t.Setenv("LOG_LEVEL", "debug")
	t.Setenv("INTERNAL_TOKEN", "s3cret")
	t.Setenv("DATABASE_URL", "postgres://u:p@db:5432/x")
	t.Setenv("DB_MAX_CONNS", "4")
	t.Setenv("AMQP_URL", "amqp://mq/")
	t.Setenv("HTTP_ADDR", ":9000")
	t.Setenv("UPSTREAM_TIMEOUT", "250ms")
	cfg, err := Load[binaryConfig]()
	require.NoError(t, err)
	assert.Equal(t, "debug", cfg.LogLevel)
	assert.Equal(t, "s3cret", cfg.InternalToken)
	assert.Equal(t, "postgres://u:p@db:5432/x", cfg.Database.URL)
	assert.Equal(t, 4, cfg.MaxConns)
	assert.Equal(t, "amqp://mq/", cfg.Broker.URL)
	assert.Equal(t, ":9000", cfg.HTTPAddr)
	assert.Equal(t, 250*time.Millisecond, cfg.Timeout)
}

func TestLoadRejectsBadValues(t *testing.T) {
	unset(t, allVars...)
	t.Setenv("DB_MAX_CONNS", "many")
	_, err := Load[binaryConfig]()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config:")
	assert.Contains(t, err.Error(), "MaxConns")
}

func TestLoadRequired(t *testing.T) {
	type withRequired struct {
		Key string `env:"CC_TEST_REQUIRED_KEY,required"`
	}
	unset(t, "CC_TEST_REQUIRED_KEY")
	_, err := Load[withRequired]()
	require.Error(t, err)
	t.Setenv("CC_TEST_REQUIRED_KEY", "k")
	cfg, err := Load[withRequired]()
	require.NoError(t, err)
	assert.Equal(t, "k", cfg.Key)
}

// A variable set to "" is empty, not its default: text becomes "", anything else is refused.
func TestLoadEmptyIsNotDefault(t *testing.T) {
	unset(t, allVars...)
	t.Setenv("DATABASE_URL", "")
	t.Setenv("LOG_LEVEL", "")
	cfg, err := Load[binaryConfig]()
	require.NoError(t, err)
	assert.Equal(t, "", cfg.Database.URL, "an embedded struct's text setting")
	assert.Equal(t, "", cfg.LogLevel)
	assert.Equal(t, "127.0.0.1:8082", cfg.HTTPAddr, "unset variables keep their defaults")

	t.Setenv("UPSTREAM_TIMEOUT", "")
	_, err = Load[binaryConfig]()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `UPSTREAM_TIMEOUT is set but empty`)
	assert.Contains(t, err.Error(), `"3s"`)
}
