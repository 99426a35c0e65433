package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notClean are escapes that decode to what PostgreSQL text cannot hold (NUL, a byte that is no
// UTF-8, a lead byte followed by ASCII, a lone surrogate, an overlong form) or to a control
// character.
var notClean = []string{"%00", "%ff", "%c3%28", "%ed%a0%80", "%c0%80", "%f4%90%80%80", "%e2%82", "%01", "%09", "%0a", "%7f", "a%00b"}

// refusedNaming asserts the 400 envelope naming field with RuleText, in data.errors and the message.
func refusedNaming(t *testing.T, w *http.Response, env envelope, field string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, w.StatusCode, "%s", env.Data)
	assert.False(t, env.Success)
	var data ValidationData
	require.NoError(t, json.Unmarshal(env.Data, &data))
	assert.Equal(t, RuleText, data.Errors[field], "%s", env.Data)
	assert.Contains(t, env.Message, field+": "+RuleText)
}

func TestPathParamsMustBeCleanText(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	reached := 0
	e.POST("/v2/webhook/:webhookId/redeliver/:eventId", Handle(func(c *gin.Context) (any, error) {
		reached++
		return map[string]string{"webhookId": c.Param("webhookId"), "eventId": c.Param("eventId")}, nil
	}))
	for _, bad := range notClean {
		t.Run(bad, func(t *testing.T) {
			w, env := do(t, e, postJSON("/v2/webhook/14/redeliver/"+bad, `{}`))
			refusedNaming(t, w.Result(), env, "eventId")
			w, env = do(t, e, postJSON("/v2/webhook/"+bad+"/redeliver/e1", `{}`))
			refusedNaming(t, w.Result(), env, "webhookId")
		})
	}
	assert.Zero(t, reached, "a refused request reached its handler")

	// What is clean text reaches the handler, decoded; whether it is a valid id is its rule.
	for raw, want := range map[string]string{
		"e1": "e1", "%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82": "привет", "..": "..", "-1": "-1",
		"99999999999999999999": "99999999999999999999", "a%20b": "a b", "%F0%9F%98%80": "😀",
	} {
		w, env := do(t, e, postJSON("/v2/webhook/14/redeliver/"+raw, `{}`))
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", raw, env.Message)
		assert.JSONEq(t, `{"webhookId":"14","eventId":"`+want+`"}`, string(env.Data))
	}
}

// An escaped slash is a character of its segment to an engine routing on the path as sent (the
// gateway's): the parameter holding it is refused, at the end of the path too, where it is no
// trailing slash to trim.
func TestAnEscapedSlashIsRefusedAsItsParameter(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.UseEscapedPath = true
	e.GET("/v2/lead/import/:importId", Handle(func(c *gin.Context) (any, error) { return c.Param("importId"), nil }))
	e.POST("/v2/lead/import", Handle(func(c *gin.Context) (any, error) { return "import", nil }))
	h := TrimTrailingSlash(e)
	for _, path := range []string{"/v2/lead/import/%2F", "/v2/lead/import/%2F/", "/v2/lead/import/%2f//", "/v2/lead/import/a%2Fb/"} {
		w, env := do(t, h, get(path))
		require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", path, env.Message)
		assert.Equal(t, "importId: "+RuleSegment, env.Message, path)
	}
	for path, want := range map[string]string{"/v2/lead/import/a%20b/": "a b", "/v2/lead/import/%61/": "a", "/v2/lead/import/x//": "x"} {
		w, env := do(t, h, get(path))
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", path, env.Message)
		assert.Equal(t, `"`+want+`"`, string(env.Data), path)
	}
}

func TestQueryValuesMustBeCleanText(t *testing.T) {
	e, _ := newTestEngine(t, DefaultBodyLimit)
	e.POST("/v2/lead/import", Handle(func(c *gin.Context) (any, error) {
		return map[string]string{"orderCode": c.Query("orderCode")}, nil
	}))
	for _, bad := range notClean {
		t.Run(bad, func(t *testing.T) {
			w, env := do(t, e, postJSON("/v2/lead/import?orderId=169&orderCode="+bad, `{}`))
			refusedNaming(t, w.Result(), env, "orderCode")
			// The name as the caller wrote it, decoded.
			w, env = do(t, e, postJSON("/v2/lead/import?orderIds%5B%5D="+bad, `{}`))
			refusedNaming(t, w.Result(), env, "orderIds[]")
			// A name that is not clean text cannot name itself: "query" stands for it.
			w, env = do(t, e, postJSON("/v2/lead/import?x"+bad+"=1", `{}`))
			require.Equal(t, http.StatusBadRequest, w.Code)
			assert.Contains(t, env.Message, "query: parameter names "+RuleText)
		})
	}
	// A bad escape is still the syntax error, even next to text that is not clean.
	w, env := do(t, e, postJSON("/v2/lead/import?orderCode=%00&x=%zz", `{}`))
	require.Equal(t, http.StatusBadRequest, w.Code)
	assert.Contains(t, env.Message, "query: must be name=value pairs")

	for raw, want := range map[string]string{
		"%D0%9A%D0%BE%D0%B4+1": "Код 1", "2026-01-01T10%3A00%3A00%2B03%3A00": "2026-01-01T10:00:00+03:00",
		"": "", "a%2Fb": "a/b", "%E2%82%AC": "€",
	} {
		w, env := do(t, e, postJSON("/v2/lead/import?orderCode="+raw, `{}`))
		require.Equal(t, http.StatusOK, w.Code, "%s: %s", raw, env.Message)
		var got map[string]string
		require.NoError(t, json.Unmarshal(env.Data, &got))
		assert.Equal(t, want, got["orderCode"])
	}
}

// The gateway checks the query and the path parameters of every request: a good one costs no
// allocation.
func TestCheckingAGoodRequestAllocatesNothing(t *testing.T) {
	for _, raw := range []string{
		"orderIds[]=1&orderIds[]=2&offset=0&limit=50",
		"createdAt%5B0%5D=2026-01-01T10%3A00%3A00%2B03%3A00&orderCode=%D0%9A%D0%BE%D0%B4+1",
		"a&&b=&=c",
	} {
		var err error
		allocs := testing.AllocsPerRun(100, func() { err = CheckQuery(raw) })
		require.NoError(t, err, raw)
		assert.Zero(t, allocs, raw)
	}
	ok := false
	assert.Zero(t, testing.AllocsPerRun(100, func() { ok = CleanText("4f1c2d3e-привет") }))
	assert.True(t, ok)
}

// cleanByRule is RuleText written plainly, the reference the scanners are held to.
func cleanByRule(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// FuzzCleanText: the byte scanner agrees with utf8.ValidString and the control-character rule.
func FuzzCleanText(f *testing.F) {
	for _, seed := range []string{"", "abc", "привет", "\x00", "\xff", "\xc3(", "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "😀", "\x7f", "\u0080"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := CleanText(s), cleanByRule(s); got != want {
			t.Fatalf("CleanText(%q) = %v, want %v", s, got, want)
		}
	})
}

// checkQueryByRule is CheckQuery written with url.ParseQuery and cleanByRule.
func checkQueryByRule(raw string) bool {
	if raw == "" {
		return true
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return false
	}
	for k, vs := range q {
		if !cleanByRule(k) {
			return false
		}
		for _, v := range vs {
			if !cleanByRule(v) {
				return false
			}
		}
	}
	return true
}

func FuzzCheckQuery(f *testing.F) {
	for _, seed := range []string{"limit=1&orderIds[]=2", "limit=1;x=1", "a=%zz", "", "&&&", "x=1&x=2", "a=%00", "a=%ff", "%c3%28=1", "a=%c3", "a=%", "a=%e2%82%ac+b", "=", "a==b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.Count(raw, "&") >= MaxQueryParams {
			return // the parameter bound is TestWholeQuery's
		}
		err := CheckQuery(raw)
		if got, want := err == nil, checkQueryByRule(raw); got != want {
			t.Fatalf("CheckQuery(%q) = %v, want it to accept: %v", raw, err, want)
		}
	})
}
