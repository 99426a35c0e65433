// Package email sends notifications as e-mail through the configured SMTP server.
package email

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"

	"github.com/wneessen/go-mail"
)

// Config is the SMTP server; an empty Host means e-mail is not configured.
type Config struct {
	Host     string `env:"SMTP_HOST"`
	Port     int    `env:"SMTP_PORT" envDefault:"587"`
	From     string `env:"SMTP_FROM"`
	Username string `env:"SMTP_USERNAME"`
	Password string `env:"SMTP_PASSWORD"`
	// TLS is "opportunistic" (STARTTLS when offered), "mandatory" (STARTTLS required), "ssl"
	// (implicit TLS) or "none".
	TLS string `env:"SMTP_TLS" envDefault:"opportunistic"`
}

// Configured reports whether an SMTP server is set.
func (c Config) Configured() bool { return c.Host != "" }

// Sender sends e-mail.
type Sender struct {
	cfg  Config
	opts []mail.Option
}

// New checks cfg and returns a sender for it.
func New(cfg Config) (*Sender, error) {
	if cfg.From == "" {
		return nil, fmt.Errorf("email: SMTP_FROM is required when SMTP_HOST is set")
	}
	var opts []mail.Option
	switch strings.ToLower(cfg.TLS) {
	case "opportunistic", "":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSOpportunistic))
	case "mandatory":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case "ssl":
		opts = append(opts, mail.WithSSL())
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		return nil, fmt.Errorf("email: SMTP_TLS %q: must be opportunistic, mandatory, ssl or none", cfg.TLS)
	}
	if cfg.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(cfg.Username), mail.WithPassword(cfg.Password))
	}
	// Last, so that no option (ssl) moves the configured port.
	opts = append(opts, mail.WithPort(cfg.Port))
	return &Sender{cfg: cfg, opts: opts}, nil
}

// MessageID is the Message-ID (without its angle brackets) of a notification's e-mail: one per
// notification, as a notification has one e-mail delivery, under the sender's domain.
func MessageID(notificationID int64, from string) string {
	domain := "localhost"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-1 {
		domain = strings.Trim(from[at+1:], "<> ")
	}
	return "notification-" + strconv.FormatInt(notificationID, 10) + "@" + domain
}

// Send mails the notification to the delivery's address: the title as the subject (UTF-8, encoded
// for any script), the text as a plain-text body.
func (s *Sender) Send(ctx context.Context, d delivery.Delivery) error {
	msg := mail.NewMsg()
	if err := msg.From(s.cfg.From); err != nil {
		return delivery.Permanent(fmt.Errorf("from %q: %w", s.cfg.From, err))
	}
	if err := msg.To(d.Destination); err != nil {
		return delivery.Permanent(fmt.Errorf("to %q: %w", d.Destination, err))
	}
	msg.Subject(d.Title)
	msg.SetDate()
	// The delivery key: every try of this delivery carries the same Message-ID, so a mail sent
	// again after a worker died between the send and its "sent" stamp is recognised as the same
	// message by mail clients (and by whoever counts them).
	msg.SetMessageIDWithValue(MessageID(d.ID, s.cfg.From))
	if d.Priority == notification.PriorityUrgent {
		msg.SetImportance(mail.ImportanceUrgent)
	}
	msg.SetBodyString(mail.TypeTextPlain, d.Text)
	client, err := mail.NewClient(s.cfg.Host, s.opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send mail to %s: %w", d.Destination, err)
	}
	return nil
}
