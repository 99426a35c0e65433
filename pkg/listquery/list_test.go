package listquery_test

import (
	"encoding/json"
	"testing"

	"ccplatform/pkg/listquery"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListIsNeverNull(t *testing.T) {
	out, err := json.Marshal(struct {
		None []int64  `json:"none"`
		Some []string `json:"some"`
	}{listquery.List[int64](nil), listquery.List([]string{"a"})})
	require.NoError(t, err)
	assert.JSONEq(t, `{"none":[],"some":["a"]}`, string(out))
}
