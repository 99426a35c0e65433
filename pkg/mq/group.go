package mq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// GroupConfig says where a Group publishes and how big its messages may grow.
type GroupConfig struct {
	Exchange string
	Key      string
	// Type is the AMQP type of a group message; consumers tell groups from single items by it.
	Type string
	// Lanes is how many group messages may await their confirm at once. One is the most frugal:
	// every item that arrives during a confirm joins the next message; more lanes lower the wait
	// of an item that arrives just after a message left, at the price of smaller groups.
	Lanes int
	// MaxItems and MaxBytes bound one message.
	MaxItems int
	MaxBytes int
	// Timeout bounds one message's publish, retries included.
	Timeout time.Duration
}

func (c *GroupConfig) defaults() {
	if c.Lanes <= 0 {
		c.Lanes = 1
	}
	if c.MaxItems <= 0 {
		c.MaxItems = 32
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 1 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
}

// Group publishes many small items as few messages. An item joins the message the next free lane
// sends, so the items that arrive while the lanes wait for their confirms travel together: under
// load the broker stores and confirms one message for many items, and an item that arrives alone
// leaves at once, without waiting for company. Send returns only once the message carrying the
// item was confirmed, exactly like Publisher.Publish.
//
// A group message's body is a JSON array of the items (JoinGroup); consumers read it with
// SplitGroup.
type Group struct {
	pub   *Publisher
	cfg   GroupConfig
	queue chan *groupItem
	stop  chan struct{}
	once  sync.Once
	lanes sync.WaitGroup
}

type groupItem struct {
	ctx  context.Context
	id   string
	body []byte
	done chan error
}

// ErrGroupClosed is returned by Send after Close.
var ErrGroupClosed = errors.New("mq: group publisher closed")

// NewGroup starts cfg.Lanes lanes publishing through pub; Close stops them.
func NewGroup(pub *Publisher, cfg GroupConfig) *Group {
	g := newGroup(pub, cfg)
	g.start()
	return g
}

func newGroup(pub *Publisher, cfg GroupConfig) *Group {
	cfg.defaults()
	return &Group{pub: pub, cfg: cfg, queue: make(chan *groupItem, 4*cfg.Lanes*cfg.MaxItems), stop: make(chan struct{})}
}

func (g *Group) start() {
	for range g.cfg.Lanes {
		g.lanes.Add(1)
		go g.lane()
	}
}

// Send queues item and returns nil once the broker confirmed the message carrying it; id becomes
// the message id of a group the item opens. item must be one JSON value, as json.Marshal makes
// it: Send does not check it again (a consumer dead-letters a group it cannot read, whole). An
// error means the item may or may not be stored, so the caller must not report success.
func (g *Group) Send(ctx context.Context, id string, item []byte) error {
	it := &groupItem{ctx: ctx, id: id, body: item, done: make(chan error, 1)}
	select {
	case <-g.stop:
		return ErrGroupClosed
	default:
	}
	select {
	case g.queue <- it:
	case <-g.stop:
		return ErrGroupClosed
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotConfirmed, ctx.Err())
	}
	select {
	case err := <-it.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNotConfirmed, ctx.Err())
	}
}

// Close stops the lanes once the items already queued were published.
func (g *Group) Close() {
	g.once.Do(func() { close(g.stop) })
	g.lanes.Wait()
}

// lane sends one group at a time: it waits for a first item, takes whatever else is already
// queued (within the bounds), publishes, and tells every item's sender the outcome.
func (g *Group) lane() {
	defer g.lanes.Done()
	var carry *groupItem
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-g.queue:
			case <-g.stop:
				// Stopping: what is still queued leaves before the lane does.
				select {
				case first = <-g.queue:
				default:
					return
				}
			}
		}
		items := []*groupItem{first}
		size := len(first.body)
	gather:
		for len(items) < g.cfg.MaxItems {
			select {
			case it := <-g.queue:
				if size+len(it.body)+1 > g.cfg.MaxBytes {
					carry = it
					break gather
				}
				items = append(items, it)
				size += len(it.body) + 1
			default:
				break gather
			}
		}
		g.send(items)
	}
}

// send publishes items as one message, leaving out those whose senders already gave up.
func (g *Group) send(items []*groupItem) {
	live := items[:0]
	for _, it := range items {
		if it.ctx.Err() == nil {
			live = append(live, it)
		}
	}
	if len(live) == 0 {
		return
	}
	bodies := make([][]byte, len(live))
	for i, it := range live {
		bodies[i] = it.body
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Timeout)
	defer cancel()
	err := g.pub.Publish(ctx, g.cfg.Exchange, g.cfg.Key, Message{ID: live[0].id, Type: g.cfg.Type, Body: JoinGroup(bodies)})
	for _, it := range live {
		it.done <- err
	}
}

// JoinGroup is the body of a group message carrying items (each a JSON value).
func JoinGroup(items [][]byte) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// SplitGroup returns the items of a group message's body.
func SplitGroup(body []byte) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, fmt.Errorf("mq: group message is not a JSON array: %w", err)
	}
	return items, nil
}
