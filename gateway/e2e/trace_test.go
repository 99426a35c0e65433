package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logLines are the JSON lines of a process's log that carry field=value.
func logLines(t *testing.T, process, field, value string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(stack.LogDir(), process+".log"))
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line[field] == value {
			out = append(out, line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// One async lead create is one trace: the client's traceparent is continued by the gateway, by
// lead-api and, through the job on the queue, by lead-worker, whose line for the job names the
// lead it created. Every line about the request names the trace.
func TestAsyncCreateIsOneTraceAcrossGatewayLeadAPIAndWorker(t *testing.T) {
	orderID, code := leadOrder(t, "Traced leads")
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	const requestID = "trace-e2e-1"
	jobID := acceptJob(t, "/v2/lead/create-async/", v2Lead(orderID, code, newPhone()),
		WithHeader("traceparent", "00-"+traceID+"-b7ad6b7169203331-01"), WithHeader("X-Request-Id", requestID))
	job := waitJob(t, jobID)
	require.Equal(t, "done", job["status"], job)

	for _, p := range []string{"gateway", "lead-api"} {
		lines := logLines(t, p, "request_id", requestID)
		require.NotEmpty(t, lines, p)
		for _, l := range lines {
			assert.Equal(t, traceID, l["trace_id"], "%s: %v", p, l)
		}
	}
	var worker []map[string]any
	require.Eventually(t, func() bool {
		worker = logLines(t, "lead-worker", "job_id", jobID)
		return len(worker) > 0
	}, 5*time.Second, 50*time.Millisecond, "lead-worker wrote no line for the job")
	for _, l := range worker {
		assert.Equal(t, traceID, l["trace_id"], "%v", l)
		assert.Equal(t, requestID, l["request_id"], "%v", l)
	}
	assert.Equal(t, job["leadId"], worker[0]["lead_id"])

	// Without a traceparent the gateway starts the trace, and lead-api continues it.
	const requestID2 = "trace-e2e-2"
	waitJob(t, acceptJob(t, "/v2/lead/create-async/", v2Lead(orderID, code, newPhone()), WithHeader("X-Request-Id", requestID2)))
	gw := logLines(t, "gateway", "request_id", requestID2)
	require.Len(t, gw, 1)
	started, _ := gw[0]["trace_id"].(string)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{32}$`), started)
	api := logLines(t, "lead-api", "request_id", requestID2)
	require.NotEmpty(t, api)
	assert.Equal(t, started, api[0]["trace_id"])
}
