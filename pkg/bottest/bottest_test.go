package bottest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeepsMessagesForItsTokenOnly(t *testing.T) {
	a := New("1:tok")
	defer a.Close()
	resp, err := http.Post(a.URL()+"/bot1:tok/sendMessage", "application/json", strings.NewReader(`{"chat_id":"42","text":"hi"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Post(a.URL()+"/botother/sendMessage", "application/json", strings.NewReader(`{"chat_id":"42","text":"x"}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, []Message{{ChatID: "42", Text: "hi"}}, a.To("42"))
}
