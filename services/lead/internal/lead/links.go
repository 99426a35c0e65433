package lead

import (
	"hash/fnv"
	"strconv"
)

// PhoneKey names the leads that repeat one another: the same normalised phone in the same order.
type PhoneKey struct {
	OrderID int64
	Phone   string
}

// KeyOf is l's repeat key.
func KeyOf(l Lead) PhoneKey { return PhoneKey{OrderID: l.OrderID, Phone: l.Phone} }

// LockID is the advisory-lock id of a key, which claim_lead_id and claim_lead_ids (migration 00011)
// take before they link a lead of the key. Two keys may share one (a 64-bit hash): that only
// serialises two creates that did not need it.
func (k PhoneKey) LockID() int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("lead.phone:" + strconv.FormatInt(k.OrderID, 10) + ":" + k.Phone))
	return int64(h.Sum64())
}
