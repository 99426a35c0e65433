package mq

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"ccplatform/pkg/mqtest"

	"github.com/stretchr/testify/require"
)

// closeConnections closes, through the management API, every broker connection whose client name
// is name.
func closeConnections(t *testing.T, name string) {
	t.Helper()
	base, err := url.Parse(mqtest.BaseURL())
	require.NoError(t, err)
	pass, _ := base.User.Password()
	client := &http.Client{Timeout: 10 * time.Second}
	var conns []struct {
		Name             string `json:"name"`
		ClientProperties struct {
			ConnectionName string `json:"connection_name"`
		} `json:"client_properties"`
	}
	// The management API lists connections with a delay of its statistics interval.
	require.Eventually(t, func() bool {
		req, _ := http.NewRequest(http.MethodGet, mqtest.ManagementURL()+"/api/connections", nil)
		req.SetBasicAuth(base.User.Username(), pass)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		conns = nil
		if json.NewDecoder(resp.Body).Decode(&conns) != nil {
			return false
		}
		for _, c := range conns {
			if c.ClientProperties.ConnectionName == name {
				return true
			}
		}
		return false
	}, 15*time.Second, 250*time.Millisecond, "connection %s never listed", name)
	for _, c := range conns {
		if c.ClientProperties.ConnectionName != name {
			continue
		}
		req, _ := http.NewRequest(http.MethodDelete, mqtest.ManagementURL()+"/api/connections/"+url.PathEscape(c.Name), nil)
		req.SetBasicAuth(base.User.Username(), pass)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
}
