package servicetest

import (
	"encoding/json"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// BotMessage is what the bot API received.
type BotMessage struct {
	ChatID string `json:"chat_id"`
	Text   string `json:"text"`
}

// Bot is a messenger's bot HTTP API: POST /bot{token}/sendMessage.
type Bot struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []BotMessage
}

// NewBot serves the bot API.
func NewBot() *Bot {
	b := &Bot{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/bot"+BotToken+"/sendMessage" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		var m BotMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ChatID == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
			return
		}
		b.mu.Lock()
		b.got = append(b.got, m)
		b.mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":1}}`)
	}))
	return b
}

// URL is the bot API's base URL.
func (b *Bot) URL() string { return b.srv.URL }

// Close stops the bot API.
func (b *Bot) Close() { b.srv.Close() }

// To is every message received for chat.
func (b *Bot) To(chat string) []BotMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []BotMessage
	for _, m := range b.got {
		if m.ChatID == chat {
			out = append(out, m)
		}
	}
	return out
}

// Mail is a received e-mail, its Subject header decoded.
type Mail struct {
	From    string
	To      []string
	Subject string
	Body    string
	Header  mail.Header
}

// SMTPServer is a real SMTP server on a local port that keeps what it receives.
type SMTPServer struct {
	Addr string
	srv  *smtp.Server
	mu   sync.Mutex
	got  []Mail
}

// StartSMTP serves SMTP on addr ("127.0.0.1:0" for any port) until the test ends.
func StartSMTP(t testing.TB, addr string) *SMTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("smtp listen: %v", err)
	}
	s := &SMTPServer{Addr: ln.Addr().String()}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// To is every message received for address.
func (s *SMTPServer) To(address string) []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Mail
	for _, m := range s.got {
		for _, r := range m.To {
			if strings.EqualFold(r, address) {
				out = append(out, m)
			}
		}
	}
	return out
}

type smtpSession struct {
	s    *SMTPServer
	from string
	to   []string
}

func (x *smtpSession) Reset()        { x.from, x.to = "", nil }
func (x *smtpSession) Logout() error { return nil }
func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}
func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *smtpSession) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return err
	}
	var body io.Reader = msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(msg.Body)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.got = append(x.s.got, Mail{From: x.from, To: x.to, Subject: subject, Body: string(raw), Header: msg.Header})
	return nil
}
