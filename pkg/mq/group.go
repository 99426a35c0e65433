package mq

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A group message carries several items (each one JSON value) as one JSON array. A consumer that
// settles a group item by item dead-letters only what did not succeed (Result.Keep, JoinGroup).

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
