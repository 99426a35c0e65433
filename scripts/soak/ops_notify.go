package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"ccplatform/clients/go/ccapi"
)

// The operations on notifications, API keys, and the health check.

func (m *mix) noteText() (string, string) { return "Soak", fmt.Sprintf("Soak notification %d", m.n()) }

func (m *mix) notifyPrivate(ctx context.Context) {
	title, text := m.noteText()
	body := ccapi.NotificationToUser{Title: title, Text: text, UserId: m.adminID,
		Priority: ccapi.NotificationToUserPriorityDefault, Level: ccapi.NotificationToUserLevelDefault}
	measure(m, "notifyUser", "", success, func() (*ccapi.NotifyUserResponse, error) {
		return m.api.NotifyUserWithResponse(ctx, nil, body)
	})
}

func (m *mix) notifyPublic(ctx context.Context) {
	title, text := m.noteText()
	body := ccapi.Notification{Title: title, Text: text, Priority: ccapi.NotificationPriorityDefault, Level: ccapi.NotificationLevelDefault}
	measure(m, "notifyAll", "", success, func() (*ccapi.NotifyAllResponse, error) {
		return m.api.NotifyAllWithResponse(ctx, nil, body)
	})
}

func (m *mix) notifyGroup(ctx context.Context) {
	title, text := m.noteText()
	body := ccapi.NotificationToGroup{Title: title, Text: text, Group: ccapi.AccessGroupNameAdmin,
		Priority: ccapi.NotificationToGroupPriorityDefault, Level: ccapi.NotificationToGroupLevelDefault}
	measure(m, "notifyGroup", "", success, func() (*ccapi.NotifyGroupResponse, error) {
		return m.api.NotifyGroupWithResponse(ctx, nil, body)
	})
}

func (m *mix) notificationList(ctx context.Context) {
	if r, ok := measure(m, "listMyNotifications", "", success, func() (*ccapi.ListMyNotificationsResponse, error) {
		return m.api.ListMyNotificationsWithResponse(ctx, &ccapi.ListMyNotificationsParams{Limit: ptr(20)})
	}); ok && r.JSON200 != nil {
		for _, n := range r.JSON200.Data.List {
			m.notes.add(n.Id)
		}
	}
}

func (m *mix) notificationRead(ctx context.Context) {
	id := m.notes.pick()
	if id == 0 {
		return
	}
	measure(m, "markNotificationRead", "", success, func() (*ccapi.MarkNotificationReadResponse, error) {
		return m.api.MarkNotificationReadWithResponse(ctx, id)
	})
}

// notificationStream opens the live stream, waits for its ready event and closes it: the time
// measured is the time to ready. A stream held open would only add one steady goroutine per
// process; opening and closing them is what could leak.
func (m *mix) notificationStream(ctx context.Context) {
	m.firstEvent(ctx, "streamMyNotifications", "ready", m.api.ClientInterface.StreamMyNotifications)
}

// reportLive opens the live stream and reads its first event (the report takes a snapshot as the
// first stream of a pause arrives).
func (m *mix) reportLive(ctx context.Context) {
	m.firstEvent(ctx, "streamReportLive", "live", m.api.ClientInterface.StreamReportLive)
}

// firstEvent measures operation op as opening an event stream with open and reading it until its
// first event named event, then closing it. The typed client's plain call is used: the one that
// reads the answer whole would wait for the stream's end.
func (m *mix) firstEvent(ctx context.Context, op, event string, open func(context.Context, ...ccapi.RequestEditorFn) (*http.Response, error)) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	measure(m, op, "", success, func() (rawAnswer, error) {
		resp, err := open(ctx)
		if err != nil {
			return rawAnswer{}, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return rawAnswer{resp.StatusCode, b}, nil
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20) // a live snapshot is one long data line
		for sc.Scan() {
			if strings.TrimSpace(strings.TrimPrefix(sc.Text(), "event:")) == event {
				return rawAnswer{status: resp.StatusCode}, nil
			}
		}
		err = sc.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return rawAnswer{}, fmt.Errorf("%w: no %s event: %w", errNoAnswer, event, err)
	})
}

func (m *mix) healthCheck(ctx context.Context) {
	measure(m, "healthCheck", "", success, func() (*ccapi.HealthCheckResponse, error) {
		return m.api.HealthCheckWithResponse(ctx)
	})
}

func (m *mix) apiKeyList(ctx context.Context) {
	measure(m, "listApiKeys", "", success, func() (*ccapi.ListApiKeysResponse, error) {
		return m.api.ListApiKeysWithResponse(ctx, &ccapi.ListApiKeysParams{Limit: ptr(20)})
	})
}

func (m *mix) apiKeyCreate(ctx context.Context) {
	body := ccapi.ApiKeyCreate{Name: ptr(fmt.Sprintf("soak %d", m.n())), Scopes: &[]ccapi.Scope{ccapi.LeadsRead}}
	if r, ok := measure(m, "createApiKey", "", success, func() (*ccapi.CreateApiKeyResponse, error) {
		return m.api.CreateApiKeyWithResponse(ctx, nil, body)
	}); ok && r.JSON200 != nil {
		m.keys.push(r.JSON200.Data.Id)
	}
}

// apiKeyRevoke revokes the oldest key the mix made, so the keys do not pile up.
func (m *mix) apiKeyRevoke(ctx context.Context) {
	id, ok := m.keys.pop(0)
	if !ok {
		return
	}
	measure(m, "revokeApiKey", "", success, func() (*ccapi.RevokeApiKeyResponse, error) {
		return m.api.RevokeApiKeyWithResponse(ctx, id)
	})
}
