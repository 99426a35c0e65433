package delivery

import "ccplatform/pkg/apitime"

// View is a delivery as the log returns it.
type View struct {
	ID               int64         `json:"id"`
	EventID          string        `json:"eventId"`
	EventType        string        `json:"eventType"`
	State            string        `json:"state"`
	Attempts         int           `json:"attempts"`
	NextAttemptAt    *string       `json:"nextAttemptAt"`
	LastStatusCode   *int          `json:"lastStatusCode"`
	LastLatencyMs    *int          `json:"lastLatencyMs"`
	LastError        *string       `json:"lastError"`
	LastResponseBody *string       `json:"lastResponseBody"`
	CreatedAt        string        `json:"createdAt"`
	DeliveredAt      *string       `json:"deliveredAt"`
	AttemptLog       []AttemptView `json:"attemptLog"`
}

// AttemptView is one attempt as the log returns it.
type AttemptView struct {
	Attempt      int     `json:"attempt"`
	At           string  `json:"at"`
	StatusCode   *int    `json:"statusCode"`
	LatencyMs    int     `json:"latencyMs"`
	Error        *string `json:"error"`
	ResponseBody *string `json:"responseBody"`
}

// ViewOf is d as the log returns it; a delivery that is not pending has no next attempt.
func ViewOf(d Delivery) View {
	v := View{ID: d.ID, EventID: d.EventID, EventType: d.EventType, State: d.State, Attempts: d.Attempts,
		LastStatusCode: d.LastStatus, LastLatencyMs: d.LastLatencyMS, LastError: d.LastError,
		LastResponseBody: d.LastResponse, CreatedAt: apitime.String(d.CreatedAt),
		DeliveredAt: apitime.StringOrNull(d.DeliveredAt), AttemptLog: make([]AttemptView, len(d.Log))}
	if d.State == "pending" {
		v.NextAttemptAt = apitime.StringOrNull(d.NextAttemptAt)
	}
	for i, a := range d.Log {
		v.AttemptLog[i] = AttemptView{Attempt: a.N, At: apitime.String(a.At), StatusCode: a.StatusCode,
			LatencyMs: a.LatencyMS, Error: a.Error, ResponseBody: a.Response}
	}
	return v
}
