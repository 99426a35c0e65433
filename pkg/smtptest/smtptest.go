// Package smtptest is a real SMTP server on a local port that keeps the mail it receives, for tests
// of code that sends e-mail. It can be stopped and started again on the same address, as a mail
// provider's outage.
package smtptest

import (
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is a received message, its Subject header decoded and its body unquoted.
type Mail struct {
	From    string
	To      []string
	Subject string
	Body    string
	Header  mail.Header
}

// Server records every message it accepts.
type Server struct {
	mu   sync.Mutex
	addr string
	srv  *smtp.Server
	got  []Mail
}

// Start serves SMTP on addr ("127.0.0.1:0" for a free port).
func Start(addr string) (*Server, error) {
	s := &Server{addr: addr}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Restart serves again on the server's address after Stop.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("smtp listen %s: %w", s.addr, err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.addr, s.srv = ln.Addr().String(), srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Stop closes the listener and every connection: the next delivery attempt is refused.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Running reports whether the server accepts connections.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// To is every message received for address.
func (s *Server) To(address string) []Mail {
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

type session struct {
	s    *Server
	from string
	to   []string
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}
func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
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
