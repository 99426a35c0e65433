package svcclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/identity"
	"ccplatform/pkg/requestid"
	"ccplatform/pkg/web"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const token = "s3cret"

type seen struct {
	token, requestID, contentType string
	userID, accessGroup           string
	body                          map[string]any
}

// userService is a real service built with the kit: internal token, envelope, errors.
func userService(t *testing.T) (*httptest.Server, chan seen) {
	t.Helper()
	got := make(chan seen, 16)
	e := web.NewEngine(zap.NewNop(), web.DefaultBodyLimit)
	e.Use(web.RequireInternalToken(token))
	record := func(c *gin.Context, body map[string]any) {
		got <- seen{
			token:       c.GetHeader(web.HeaderInternalToken),
			requestID:   requestid.From(c.Request.Context()),
			contentType: c.GetHeader("Content-Type"),
			userID:      c.GetHeader(identity.HeaderUserID),
			accessGroup: c.GetHeader(identity.HeaderAccessGroup),
			body:        body,
		}
	}
	e.POST("/internal/users/check", web.Handle(func(c *gin.Context) (any, error) {
		var in struct {
			IDs []int64 `json:"ids"`
		}
		if err := web.DecodeJSON(c, &in); err != nil {
			return nil, err
		}
		record(c, map[string]any{"ids": len(in.IDs)})
		if len(in.IDs) == 0 {
			return nil, apperr.FieldErrors{"ids": "must not be empty"}.Err()
		}
		return map[string]any{"missing": []int64{in.IDs[len(in.IDs)-1]}}, nil
	}))
	e.GET("/internal/users/:id", web.Handle(func(c *gin.Context) (any, error) {
		record(c, nil)
		id, err := web.PathID(c, "id")
		if err != nil {
			return nil, err
		}
		if id == 404 {
			return nil, apperr.NotFoundf("user %d not found", id)
		}
		if id == 409 {
			return nil, apperr.Conflictf("user %d is busy", id)
		}
		if id == 500 {
			return nil, errors.New("pq: connection refused")
		}
		return map[string]any{"id": id, "name": "Ann"}, nil
	}))
	e.GET("/internal/slow", func(c *gin.Context) {
		select {
		case <-c.Request.Context().Done():
		case <-time.After(5 * time.Second):
		}
		web.OK(c, nil)
	})
	e.GET("/internal/html", func(c *gin.Context) {
		c.Data(http.StatusBadGateway, "text/html", []byte("<html>bad gateway</html>"))
	})
	e.POST("/internal/nothing", web.Handle(func(c *gin.Context) (any, error) {
		record(c, nil)
		return nil, nil
	}))
	srv := httptest.NewServer(web.TrimTrailingSlash(e))
	t.Cleanup(srv.Close)
	return srv, got
}

func client(t *testing.T, base, tok string, timeout time.Duration) *Client {
	c := New("user", base, tok, timeout)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestSendsTokenAndRequestIDAndDecodesData(t *testing.T) {
	srv, got := userService(t)
	c := client(t, srv.URL+"/", token, 5*time.Second)
	ctx := requestid.With(context.Background(), "req-42")

	var out struct {
		Missing []int64 `json:"missing"`
	}
	require.NoError(t, c.Do(ctx, http.MethodPost, "/internal/users/check", map[string]any{"ids": []int64{1, 2}}, &out))
	assert.Equal(t, []int64{2}, out.Missing)
	s := <-got
	assert.Equal(t, token, s.token)
	assert.Equal(t, "req-42", s.requestID, "the caller's request id travels along")
	assert.Equal(t, "application/json", s.contentType)
	assert.Equal(t, map[string]any{"ids": 2}, s.body)

	var user struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	require.NoError(t, c.Do(ctx, http.MethodGet, "/internal/users/5", nil, &user))
	assert.Equal(t, int64(5), user.ID)
	assert.Equal(t, "Ann", user.Name)
	<-got

	// No request id in the context: the service makes one; out may be nil.
	require.NoError(t, c.Do(context.Background(), http.MethodPost, "/internal/nothing", nil, nil))
	s = <-got
	assert.Len(t, s.requestID, 36)
	assert.Empty(t, s.userID, "no caller: the platform's own request")
	assert.Empty(t, s.accessGroup)
}

func TestWithCallerActsForTheUser(t *testing.T) {
	srv, got := userService(t)
	c := client(t, srv.URL, token, 5*time.Second)
	ctx := WithCaller(context.Background(), 7, "admin")
	require.NoError(t, c.Do(ctx, http.MethodPost, "/internal/nothing", nil, nil))
	s := <-got
	assert.Equal(t, "7", s.userID)
	assert.Equal(t, "admin", s.accessGroup)
}

func TestValidationErrorKeepsFields(t *testing.T) {
	srv, _ := userService(t)
	c := client(t, srv.URL, token, 5*time.Second)
	err := c.Do(context.Background(), http.MethodPost, "/internal/users/check", map[string]any{"ids": []int64{}}, nil)
	e, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, apperr.Invalid, e.Kind)
	assert.Equal(t, "ids: must not be empty", e.Message)
	assert.Equal(t, apperr.FieldErrors{"ids": "must not be empty"}, e.Fields)

	// A wrong path id is a validation error of the other service too.
	err = c.Do(context.Background(), http.MethodGet, "/internal/users/abc", nil, nil)
	e, ok = apperr.As(err)
	require.True(t, ok)
	assert.Equal(t, apperr.Invalid, e.Kind)
	assert.Equal(t, apperr.FieldErrors{"id": "must be an integer > 0"}, e.Fields)
}

func TestErrorKinds(t *testing.T) {
	srv, _ := userService(t)
	c := client(t, srv.URL, token, 5*time.Second)
	ctx := context.Background()
	for _, tc := range []struct {
		path    string
		kind    apperr.Kind
		message string
	}{
		{"/internal/users/404", apperr.NotFound, "user 404 not found"},
		{"/internal/users/409", apperr.Conflict, "user 409 is busy"},
		{"/internal/users/500", apperr.Unavailable, "user service failed"},
		{"/internal/no-such-route", apperr.NotFound, ""},
		{"/internal/html", apperr.Unavailable, "user service gave an unreadable answer"},
	} {
		err := c.Do(ctx, http.MethodGet, tc.path, nil, nil)
		require.Error(t, err, tc.path)
		e, ok := apperr.As(err)
		require.True(t, ok, tc.path)
		assert.Equal(t, tc.kind, e.Kind, tc.path)
		if tc.message != "" {
			assert.Equal(t, tc.message, e.Message, tc.path)
		}
		assert.Empty(t, e.Fields)
	}
	// The other service's internal cause is never passed on as a message.
	err := c.Do(ctx, http.MethodGet, "/internal/users/500", nil, nil)
	e, _ := apperr.As(err)
	assert.NotContains(t, e.Message, "pq:")
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	srv, _ := userService(t)
	c := client(t, srv.URL, "wrong", 5*time.Second)
	err := c.Do(context.Background(), http.MethodGet, "/internal/users/1", nil, nil)
	assert.Equal(t, apperr.Unauthorized, apperr.KindOf(err))
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c := client(t, "http://"+addr, token, 5*time.Second)
	err = c.Do(context.Background(), http.MethodGet, "/internal/users/1", nil, nil)
	e, ok := apperr.As(err)
	require.True(t, ok)
	assert.Equal(t, apperr.Unavailable, e.Kind)
	assert.Equal(t, "user service is unavailable", e.Message)
	var op *net.OpError
	assert.ErrorAs(t, err, &op, "the cause is kept for logs")
}

func TestTimeoutIsUnavailable(t *testing.T) {
	srv, _ := userService(t)
	c := client(t, srv.URL, token, 200*time.Millisecond)
	start := time.Now()
	err := c.Do(context.Background(), http.MethodGet, "/internal/slow", nil, nil)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))

	// The caller's own deadline is honoured too.
	c = client(t, srv.URL, token, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = c.Do(ctx, http.MethodGet, "/internal/slow", nil, nil)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, apperr.Unavailable, apperr.KindOf(err))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestUndecodableDataIsAnError(t *testing.T) {
	srv, _ := userService(t)
	c := client(t, srv.URL, token, 5*time.Second)
	var wrong struct {
		ID string `json:"id"`
	}
	err := c.Do(context.Background(), http.MethodGet, "/internal/users/5", nil, &wrong)
	require.Error(t, err)
	assert.Equal(t, apperr.Internal, apperr.KindOf(err))
}

func TestUnencodableInput(t *testing.T) {
	c := client(t, "http://127.0.0.1:1", token, time.Second)
	err := c.Do(context.Background(), http.MethodPost, "/x", map[string]any{"f": func() {}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "encode")
}
