package lead

import (
	"testing"

	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"
	"ccplatform/pkg/web"

	"github.com/stretchr/testify/assert"
)

func TestArbitrationChangesOnlyTheStatus(t *testing.T) {
	arbitration := web.Caller{UserID: 3, AccessGroup: "arbitration"}
	assert.NoError(t, CheckUpdateFields(arbitration, Changes{StatusID: optional.Of[int64](4)}))
	err := CheckUpdateFields(arbitration, Changes{StatusID: optional.Of[int64](4), Name: optional.Of("x")})
	assert.Equal(t, apperr.Forbidden, apperr.KindOf(err))
	assert.ErrorContains(t, err, "arbitration may change only statusId, not name")
	assert.NoError(t, CheckUpdateFields(web.Caller{UserID: 1, AccessGroup: "client"}, Changes{Name: optional.Of("x")}))
}
