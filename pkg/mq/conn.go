// Package mq is the messaging kit every service uses with RabbitMQ: a connection that heals by
// itself (re-dial with backoff forever, re-declare topology), a publisher that reports success only
// after the broker's confirm and re-sends what a dropped connection or a nack left unconfirmed, and a
// consumer with prefetch, batches, manual acks, retries and dead-lettering.
package mq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.uber.org/zap"
)

// Topology declares exchanges and queues; it runs on every (re)connect, so it must be idempotent.
type Topology func(ch *amqp.Channel) error

// ErrClosed is returned once the connection was closed by its owner.
var ErrClosed = errors.New("mq: connection closed")

// Conn is a supervised connection. Its zero value is not usable; use Dial.
type Conn struct {
	urls     []string // every broker node; connect starts after the one last used
	next     int      // index into urls of the node connect tries first; owned by supervise
	name     string
	log      *zap.Logger
	topology []Topology

	mu    sync.Mutex
	conn  *amqp.Connection
	ready chan struct{} // closed while conn is usable
	done  chan struct{} // closed by Close

	closeOnce sync.Once
	stopped   chan struct{}
	connects  atomic.Int64
	subs      subscriptions
	metrics   *metrics
}

// Dial starts supervising a connection to url and returns at once; use Wait or Channel to block
// until the broker is reachable. name shows in the broker's connection list. url may list the
// nodes of a cluster separated by commas: the connection goes to the first that answers, and
// after a loss to the next one in turn, so a dead node is not retried first.
func Dial(url, name string, log *zap.Logger, topology ...Topology) *Conn {
	c := &Conn{urls: SplitURLs(url), name: name, log: log, topology: topology, metrics: newMetrics(),
		ready: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{})}
	go c.supervise()
	return c
}

func (c *Conn) supervise() {
	defer close(c.stopped)
	bo := newBackoff(100*time.Millisecond, 5*time.Second)
	for {
		conn, err := c.connect()
		if err != nil {
			wait := bo.NextBackOff()
			c.log.Warn("mq: connect failed, retrying", zap.String("conn", c.name), zap.Duration("in", wait), zap.Error(err))
			select {
			case <-c.done:
				return
			case <-time.After(wait):
			}
			continue
		}
		bo.Reset()
		closed := conn.NotifyClose(make(chan *amqp.Error, 1))
		c.mu.Lock()
		c.conn = conn
		close(c.ready)
		c.mu.Unlock()
		c.connects.Add(1)
		c.log.Info("mq: connected", zap.String("conn", c.name))

		select {
		case <-c.done:
			c.mu.Lock()
			c.ready = make(chan struct{})
			c.conn = nil
			c.mu.Unlock()
			_ = conn.Close()
			return
		case err := <-closed:
			c.mu.Lock()
			c.ready = make(chan struct{})
			c.conn = nil
			c.mu.Unlock()
			c.log.Warn("mq: connection lost, reconnecting", zap.String("conn", c.name), zap.Any("reason", err))
		}
	}
}

// SplitURLs splits a comma-separated list of broker URLs, dropping blanks.
func SplitURLs(list string) []string {
	var urls []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// connect tries every node once, starting with c.next, and leaves c.next on the node after the
// one it connected to: the next loss (that node dying) moves the clients on instead of back.
func (c *Conn) connect() (*amqp.Connection, error) {
	if len(c.urls) == 0 {
		return nil, errors.New("dial: no broker URL")
	}
	var errs []error
	for range c.urls {
		i := c.next % len(c.urls)
		c.next = i + 1
		conn, err := c.connectTo(c.urls[i])
		if err == nil {
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("node %d: %w", i+1, err))
	}
	return nil, errors.Join(errs...)
}

func (c *Conn) connectTo(url string) (*amqp.Connection, error) {
	cfg := amqp.Config{Heartbeat: 5 * time.Second, Properties: amqp.NewConnectionProperties(),
		Dial: amqp.DefaultDial(5 * time.Second)}
	cfg.Properties.SetClientConnectionName(c.name)
	conn, err := amqp.DialConfig(url, cfg)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	if len(c.topology) > 0 {
		ch, err := conn.Channel()
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("topology channel: %w", err)
		}
		for _, t := range c.topology {
			if err := t(ch); err != nil {
				_ = conn.Close()
				return nil, fmt.Errorf("declare topology: %w", err)
			}
		}
		_ = ch.Close()
	}
	return conn, nil
}

// current returns the live connection, waiting for one until ctx is done.
func (c *Conn) current(ctx context.Context) (*amqp.Connection, error) {
	for {
		c.mu.Lock()
		conn, ready := c.conn, c.ready
		c.mu.Unlock()
		if conn != nil && !conn.IsClosed() {
			return conn, nil
		}
		select {
		case <-ready:
		case <-c.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("mq: broker unreachable: %w", ctx.Err())
		}
	}
}

// Wait blocks until the broker is reachable (or ctx is done).
func (c *Conn) Wait(ctx context.Context) error {
	_, err := c.current(ctx)
	return err
}

// Connects counts the connections made so far: more than one means it healed after a loss.
func (c *Conn) Connects() int64 { return c.connects.Load() }

// Connected reports whether the connection is up now.
func (c *Conn) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn != nil && !c.conn.IsClosed()
}

// Channel opens a channel on the live connection, waiting for one until ctx is done.
func (c *Conn) Channel(ctx context.Context) (*amqp.Channel, error) {
	for {
		conn, err := c.current(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := conn.Channel()
		if err == nil {
			return ch, nil
		}
		if !errors.Is(err, amqp.ErrClosed) {
			return nil, fmt.Errorf("mq: open channel: %w", err)
		}
		// The connection died between the check and the call: wait for the next one.
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("mq: broker unreachable: %w", ctx.Err())
		}
	}
}

// QueueConsumers reads a queue's current consumer and message counts from the broker.
func (c *Conn) QueueConsumers(ctx context.Context, queue string) (consumers, messages int, err error) {
	ch, err := c.Channel(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("mq: inspect queue %s: %w", queue, err)
	}
	return q.Consumers, q.Messages, nil
}

// Close stops supervising and closes the connection.
func (c *Conn) Close() {
	c.closeOnce.Do(func() { close(c.done) })
	<-c.stopped
}

func newBackoff(initial, max time.Duration) *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = initial
	b.MaxInterval = max
	b.Multiplier = 2
	b.RandomizationFactor = 0.2
	b.Reset()
	return b
}
