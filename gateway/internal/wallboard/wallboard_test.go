package wallboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ccplatform/gateway/internal/wallboard"

	"github.com/stretchr/testify/assert"
)

// The page and its two files are served with their types and the page's policy; /wallboard is
// sent to /wallboard/ so that the page's references resolve; anything else is a 404.
func TestTheWallboardServesThePageAndItsFiles(t *testing.T) {
	h := wallboard.Handler()
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	for path, typ := range map[string]string{wallboard.PagePath: "text/html", wallboard.ScriptPath: "text/javascript", wallboard.StylePath: "text/css"} {
		w := get(path)
		assert.Equal(t, http.StatusOK, w.Code, path)
		assert.True(t, strings.HasPrefix(w.Header().Get("Content-Type"), typ), path)
		assert.Equal(t, wallboard.ContentSecurityPolicy, w.Header().Get("Content-Security-Policy"), path)
		assert.NotEmpty(t, w.Header().Get("ETag"), path)
	}
	page := get(wallboard.PagePath).Body.String()
	assert.Contains(t, page, `src="/wallboard/wallboard.js"`)
	assert.Contains(t, page, `href="/wallboard/wallboard.css"`)
	assert.Contains(t, get(wallboard.ScriptPath).Body.String(), `"/v2/report/live/"`, "the script reads the live stream")

	w := get("/wallboard")
	assert.Equal(t, http.StatusMovedPermanently, w.Code)
	assert.Equal(t, wallboard.PagePath, w.Header().Get("Location"))
	assert.Equal(t, http.StatusNotFound, get("/wallboard/other.js").Code)
}
