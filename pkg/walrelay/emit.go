// Package walrelay publishes a message if and only if the change it announces committed, without a
// table: the message is written into the WAL with pg_logical_emit_message(true, prefix, payload) in
// the change's own transaction (one WAL record, nothing to delete or vacuum), and a Relay holding a
// logical replication slot reads the committed messages in commit order, publishes them with the
// broker's confirms, and only then advances the slot. Delivery is at least once: a relay that dies
// between the confirm and the slot's advance publishes those messages again under the same ids,
// and consumers deduplicate by message id (each event's own id inside a group) as they do for
// every message.
package walrelay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"ccplatform/pkg/mq"
	"ccplatform/pkg/requestid"

	"github.com/jmoiron/sqlx"
)

// Message is one message to publish: where, what, and the ordering key of the thing it is about.
type Message struct {
	Exchange string
	Key      string
	Msg      mq.Message
	// Order names what the message is about (a lead's id): the relay publishes the messages of one
	// Order in commit order, and may publish those of different ones side by side.
	Order string
}

// header is the first line of a payload; the body follows the newline as is, so the published
// body is byte for byte what was emitted.
type header struct {
	Exchange  string  `json:"exchange"`
	Key       string  `json:"key"`
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	RequestID *string `json:"requestId"`
	Order     string  `json:"order"`
}

// ErrHeaders refuses a message with headers: the payload keeps the request id (taken from the
// context) but no other header, and dropping them silently would surprise the caller.
var ErrHeaders = errors.New("walrelay: message headers are not kept; only the request id of the context is")

// Payload is the emitted form of m under the request id reqID (nil for none): a JSON header line,
// a newline, and the body. HeaderSQL builds the same header inside a statement.
func Payload(m Message, reqID *string) ([]byte, error) {
	return appendPayload(nil, m, reqID, false)
}

// appendPayload appends m's payload to dst; quoted, as an element of a text array literal (inside
// double quotes, a double quote or backslash escaped by a backslash), so that a batch's payloads
// are one parameter built in one buffer rather than copied into a payload each and again into the
// array.
func appendPayload(dst []byte, m Message, reqID *string, quoted bool) ([]byte, error) {
	if len(m.Msg.Headers) > 0 {
		return nil, ErrHeaders
	}
	if m.Msg.ID == "" {
		return nil, errors.New("walrelay: message id is empty (consumers deduplicate by it)")
	}
	if !utf8.Valid(m.Msg.Body) || bytes.IndexByte(m.Msg.Body, 0) >= 0 {
		// The payload travels as text.
		return nil, fmt.Errorf("walrelay: message %s: the body is not UTF-8 text without NUL", m.Msg.ID)
	}
	h, err := json.Marshal(header{Exchange: m.Exchange, Key: m.Key, ID: m.Msg.ID, Type: m.Msg.Type,
		RequestID: reqID, Order: m.Order})
	if err != nil {
		return nil, fmt.Errorf("walrelay: encode header: %w", err)
	}
	if !quoted {
		out := slices.Grow(dst, len(h)+1+len(m.Msg.Body))
		return append(append(append(out, h...), '\n'), m.Msg.Body...), nil
	}
	dst = append(dst, '"')
	dst = appendEscaped(dst, h)
	dst = append(dst, '\n')
	dst = appendEscaped(dst, m.Msg.Body)
	return append(dst, '"'), nil
}

// appendEscaped appends b with each double quote and backslash escaped by a backslash, as an array
// literal's quoted element needs.
func appendEscaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexAny(b, `"\`)
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(append(append(dst, b[:i]...), '\\'), b[i])
		b = b[i+1:]
	}
}

// HeaderSQL is the SQL expression of a payload's header line (newline included) from SQL
// expressions of its fields (each text, requestID possibly NULL), for a statement that emits its
// message itself: `convert_to(<HeaderSQL> || body, 'UTF8')`.
func HeaderSQL(exchange, key, id, typ, requestID, order string) string {
	return `jsonb_build_object('exchange', ` + exchange + `, 'key', ` + key + `, 'id', ` + id + `, 'type', ` + typ +
		`, 'requestId', ` + requestID + `, 'order', ` + order + `)::text || E'\n'`
}

// parse reads a payload back.
func parse(p []byte) (header, []byte, error) {
	line, body, ok := bytes.Cut(p, []byte{'\n'})
	if !ok {
		return header{}, nil, errors.New("walrelay: payload without its header line")
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return header{}, nil, fmt.Errorf("walrelay: payload header: %w", err)
	}
	if h.ID == "" {
		return header{}, nil, errors.New("walrelay: payload without a message id")
	}
	return h, body, nil
}

// Emit writes msgs under prefix inside tx with one statement: they are published only once tx
// commits, in their order, and never if it rolls back. The request id of ctx goes with them. A
// body must be text (UTF-8 without NUL, as JSON is): one that is not is refused.
func Emit(ctx context.Context, tx *sqlx.Tx, prefix string, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	var reqID *string
	if id := requestid.From(ctx); id != "" {
		reqID = &id
	}
	// One text array literal of every payload, built in one buffer: a payload is UTF-8 JSON, and
	// a bytea array travels hex-encoded, twice its size on the wire and in memory on both sides
	// (an import chunk's events are megabytes).
	payloads := []byte{'{'}
	for i, m := range msgs {
		if i > 0 {
			payloads = append(payloads, ',')
		}
		var err error
		if payloads, err = appendPayload(payloads, m, reqID, true); err != nil {
			return err
		}
	}
	payloads = append(payloads, '}')
	// The scan of the array emits in its order, so the messages are decoded in the order of msgs.
	const q = `SELECT pg_logical_emit_message(true, $1, p) FROM unnest($2::text[]) AS p`
	if _, err := tx.ExecContext(ctx, q, prefix, string(payloads)); err != nil {
		return fmt.Errorf("walrelay: emit %d messages: %w", len(msgs), err)
	}
	return nil
}
