// Package messenger sends notifications to a user's messenger chat through the messenger's bot
// HTTP API (POST {api}/bot{token}/sendMessage with {"chat_id","text"}).
package messenger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"ccplatform/services/notification/internal/delivery"
	"ccplatform/services/notification/internal/notification"
)

// Config is the bot API; both set or messenger delivery is not configured.
type Config struct {
	APIURL   string `env:"MESSENGER_API_URL"`
	BotToken string `env:"MESSENGER_BOT_TOKEN"`
}

// Configured reports whether the bot API is set.
func (c Config) Configured() bool { return c.APIURL != "" && c.BotToken != "" }

// Sender posts messages as the bot.
type Sender struct {
	endpoint string
	hc       *http.Client
}

// New is a sender for cfg.
func New(cfg Config) *Sender {
	return &Sender{
		endpoint: strings.TrimRight(cfg.APIURL, "/") + "/bot" + cfg.BotToken + "/sendMessage",
		hc:       &http.Client{Timeout: 15 * time.Second},
	}
}

// Text is the message for a notification: the title, a blank line, the text; urgent ones marked.
func Text(d delivery.Delivery) string {
	title := d.Title
	if d.Priority == notification.PriorityUrgent {
		title = "❗ " + title
	}
	return title + "\n\n" + d.Text
}

// Send posts the notification to the delivery's chat. The bot API refusing the request (an
// unknown chat, a blocked bot) is permanent; a rate limit, a server error or no answer is retried.
func (s *Sender) Send(ctx context.Context, d delivery.Delivery) error {
	body, err := json.Marshal(map[string]string{"chat_id": d.Destination, "text": Text(d)})
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		// The configured URL is broken; no retry will fix it. The token is part of the URL and
		// must not reach the logs.
		return delivery.Permanent(fmt.Errorf("messenger request: invalid MESSENGER_API_URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("messenger unreachable: %s", redact(err.Error(), s.endpoint))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var answer struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(raw, &answer)
	if resp.StatusCode/100 == 2 && answer.OK {
		return nil
	}
	err = fmt.Errorf("messenger answered %d: %s", resp.StatusCode, answer.Description)
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
		return delivery.Permanent(err)
	}
	return err
}

// redact keeps the bot token (part of the endpoint URL) out of error texts.
func redact(s, endpoint string) string {
	i := strings.Index(endpoint, "/bot")
	if i < 0 {
		return s
	}
	return strings.ReplaceAll(s, endpoint[i:], "/bot***/sendMessage")
}
