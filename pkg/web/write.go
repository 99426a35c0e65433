package web

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// WriteError answers err with its envelope (ErrorEnvelope) where there is no gin context, only the
// ResponseWriter (the gateway's forwarder).
func WriteError(w http.ResponseWriter, err error) {
	status, env := ErrorEnvelope(err)
	body, _ := json.Marshal(env)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
