package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"ccplatform/gateway/internal/browsertest"
	"ccplatform/pkg/telephony"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wallboard in headless Chromium against the whole stack: a person opens /wallboard/, gives
// the staff key, and the page shows the order an agent is on a call of, with the agent "on-call"
// and its time ticking, and the order's dialing; when the agent pauses itself through the API,
// the page shows it paused. Nothing the page does may write an error to the browser's console.
// A screenshot is kept: wallboard.png in browsertest.ArtifactsDir ($CI_ARTIFACTS in CI).
func TestWallboardShowsTheLiveStreamInChromium(t *testing.T) {
	agent := newMember(t, "wallboard.agent@live.e2e", "call-center")
	orderID := createOrder(t, with(minimalOrder("Wallboard"), "agentUserIds", []int64{agent.id}))

	// Bounds for a hung browser, not for speed (a loaded 2-core machine is slow to start one).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bctx, console := browsertest.Open(t, ctx, 1280, 800)

	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(stack.BaseURL+"/wallboard/"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), stack.APIKey),
		chromedp.Click(chromedp.CSS(`#connect button[type=submit]`)),
	))
	defer browsertest.Screenshot(t, bctx, "wallboard", false)

	// Four calls of the order ended minutes ago, one answered with no agent free: 25 % abandoned,
	// over the order's 3 % limit.
	platform := newTelephonyPlatform(t)
	code := orderDetail(t, orderID)["code"].(string)
	started := time.Now().UTC().Add(-5 * time.Minute)
	for i := range 4 {
		lead := createLead(t, "/v2/lead/create/", v2Lead(orderID, code, newPhone()))
		ev := platformCall(lead, orderID, agent.id, telephony.StatusAnswered, telephony.DirectionOutgoing, started, time.Minute)
		if i == 0 {
			ev.AgentConnectedAt = nil
		}
		platform.send(t, ev)
	}
	platform.agent(t, telephony.AgentEvent{EventID: uuid.NewString(), UserID: agent.id, At: time.Now().UTC().Add(-65 * time.Second),
		State: telephony.AgentOnCall, OrderID: &orderID})
	row := fmt.Sprintf(`section.order[data-order="%d"] tr[data-user="%d"]`, orderID, agent.id)
	shows(t, bctx, console, 30*time.Second, row+` td.state`, "on-call")
	// The time in the state is the page's own count from since: past the minute the event named.
	elapsed := text(t, bctx, row+` td.since`)
	assert.Regexp(t, `^1:0\d$`, elapsed, "about 65 s on the call")
	figure := fmt.Sprintf(`section.order[data-order="%d"] [data-figure=%%q] .value`, orderID)
	assert.Equal(t, "0", text(t, bctx, fmt.Sprintf(figure, "callsInFlight")))
	assert.Equal(t, "3.0 %", text(t, bctx, fmt.Sprintf(figure, "maxAbandonRate")), "the default abandon limit")
	abandoned := fmt.Sprintf(`section.order[data-order="%d"] [data-figure="abandonRate15m"]`, orderID)
	shows(t, bctx, console, 30*time.Second, abandoned+` .value`, "25.0 %")
	assert.Equal(t, "figure over", attr(t, bctx, abandoned, "className"), "25 % abandoned is over the 3 % limit")
	assert.Equal(t, "100.0 %", text(t, bctx, fmt.Sprintf(figure, "answerRate15m")), "a person answered each call, the abandoned one too")
	assert.Contains(t, text(t, bctx, "#status"), "Live")

	r := stack.Call(t, http.MethodPost, "/v2/agent/state/", map[string]any{"state": "paused", "pauseReason": "lunch"}, WithKey(agent.key))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	shows(t, bctx, console, 30*time.Second, row+` td.state`, "paused (lunch)")
	assert.Empty(t, console.String(), "the page wrote errors to the browser console")
}

// shows waits until the element sel of the page reads want, failing at the first console error.
func shows(t *testing.T, ctx context.Context, console *browsertest.Console, wait time.Duration, sel, want string) {
	t.Helper()
	js := fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, sel)
	got := ""
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var err error
		if got, err = chromedp.Run(ctx, chromedp.Evaluate[string](js)); err == nil && got == want {
			return
		}
		if p := console.String(); p != "" {
			t.Fatalf("the page wrote errors to the browser console:\n%s", p)
		}
	}
	status := text(t, ctx, "#status")
	t.Fatalf("%s does not read %q within %s (it reads %q; the page's status: %q)", sel, want, wait, got, status)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ""`, sel)))
	require.NoError(t, err)
	return strings.TrimSpace(s)
}

// attr is the property name of the element sel of the page.
func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.%s ?? ""`, sel, name)))
	require.NoError(t, err)
	return s
}
