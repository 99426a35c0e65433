package servicetest

import (
	"testing"

	"ccplatform/pkg/bottest"
	"ccplatform/pkg/smtptest"
)

// MailServer is a real SMTP server on a local port that keeps what it receives.
type MailServer = smtptest.Server

// Bot is the messenger's bot HTTP API, keeping what it receives.
type Bot = bottest.API

// NewBot serves the bot API for BotToken.
func NewBot() *Bot { return bottest.New(BotToken) }

// StartSMTP serves SMTP on addr ("127.0.0.1:0" for any port) until the test ends.
func StartSMTP(t testing.TB, addr string) *MailServer {
	t.Helper()
	s, err := smtptest.Start(addr)
	if err != nil {
		t.Fatalf("smtp: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}
