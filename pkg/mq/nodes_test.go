package mq

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

func TestSplitURLsDropsBlanks(t *testing.T) {
	assert.Equal(t, []string{"amqp://a/", "amqp://b/"}, SplitURLs(" amqp://a/ ,, amqp://b/,"))
	assert.Empty(t, SplitURLs(""))
}

// A dead node listed first does not keep the connection from the live one after it, and the
// topology is declared there.
func TestDialSkipsADeadNode(t *testing.T) {
	c := Dial("amqp://guest:guest@127.0.0.1:1/,"+vhostURL, t.Name(), zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)), WorkQueue("t.nodes"))
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Wait(ctx))
	_, _, err := c.QueueConsumers(ctx, "t.nodes")
	require.NoError(t, err)
}
