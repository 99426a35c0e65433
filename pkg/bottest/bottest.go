// Package bottest is a messenger's bot HTTP API (POST /bot{token}/sendMessage with chat_id and
// text) on a local port that keeps the messages it receives, for tests of code that sends them.
package bottest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Message is what the bot API received.
type Message struct {
	ChatID string `json:"chat_id"`
	Text   string `json:"text"`
}

// API answers like the messenger's bot API for one token.
type API struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []Message
}

// New serves the bot API of token.
func New(token string) *API {
	a := &API{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/bot"+token+"/sendMessage" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		var m Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ChatID == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
			return
		}
		a.mu.Lock()
		a.got = append(a.got, m)
		a.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":1}}`)
	}))
	return a
}

// URL is the API's base URL.
func (a *API) URL() string { return a.srv.URL }

// Close stops the API.
func (a *API) Close() { a.srv.Close() }

// To is every message received for chat.
func (a *API) To(chat string) []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Message
	for _, m := range a.got {
		if m.ChatID == chat {
			out = append(out, m)
		}
	}
	return out
}
