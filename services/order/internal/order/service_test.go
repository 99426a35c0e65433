package order

import (
	"testing"

	"ccplatform/pkg/access"
	"ccplatform/pkg/apperr"
	"ccplatform/pkg/optional"

	"github.com/stretchr/testify/assert"
)

func TestOwnerFor(t *testing.T) {
	sent := optional.Of[int64](9)
	client := Actor{UserID: 3, Group: access.Client}
	// A client's new order is its own whatever it sends; on update it cannot move it.
	assert.Equal(t, optional.Of[int64](3), OwnerFor(client, ForCreate, sent))
	assert.Equal(t, optional.Value[int64]{}, OwnerFor(client, ForUpdate, sent))
	// Staff who manage orders set any owner; others do not set one.
	assert.Equal(t, sent, OwnerFor(Actor{UserID: 1, Group: access.Admin}, ForCreate, sent))
	assert.Equal(t, optional.Value[int64]{}, OwnerFor(Actor{UserID: 1, Group: access.CallCenter}, ForCreate, sent))
}

func TestLanguages(t *testing.T) {
	none := Changes{}
	assert.False(t, NeedsLanguages(none), "nothing named: no lookup")
	ch := Changes{
		AIDefaultLanguage: optional.Of("xx"),
		TransferNumbers:   optional.Of([]TransferNumber{{Number: "+79001234567", Names: map[string]string{"ru": "a", "zz": "b"}}}),
	}
	assert.True(t, NeedsLanguages(ch))
	fe := apperr.FieldErrors{}
	CheckLanguages(ch, []string{"ru", "en"}, fe)
	assert.Equal(t, apperr.FieldErrors{
		"aiDefaultLanguage":        "must be one of the available languages: ru, en (or null)",
		"transferNumbers[0].names": "keys must be one of the available languages: ru, en",
	}, fe)
}
