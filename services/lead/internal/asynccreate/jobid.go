// Package asynccreate is the asynchronous lead create (createLeadAsync, createLeadAsyncV1), both
// sides of the lead.jobs queue: the accept path that publishes a job and answers with its id, the
// job ids that verify themselves, the Worker that turns queued jobs into leads and records each
// job's outcome, and the job status route that reads those outcomes.
package asynccreate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/google/uuid"
)

// IDs makes and verifies job ids. An id is a UUID (version 8, RFC 9562 layout) whose first 8 bytes
// are random and whose last 8 carry an HMAC-SHA256, under a secret, of the first 8 and of the user
// who created the job. So the status route tells an id this service issued to the caller (still
// queued when no outcome is recorded) from one it never issued, or issued to someone else (404
// alike), without writing anything when the job is accepted.
type IDs struct {
	secret []byte
}

// NewIDs signs with secret.
func NewIDs(secret string) *IDs { return &IDs{secret: []byte(secret)} }

// New makes a fresh signed id of a job without a user (0) or of user owner.
func (s *IDs) New(owner int64) uuid.UUID {
	var id uuid.UUID
	_, _ = rand.Read(id[:8])
	id[6] = id[6]&0x0f | 0x80 // version 8
	s.sign(&id, owner)
	return id
}

func (s *IDs) sign(id *uuid.UUID, owner int64) {
	m := hmac.New(sha256.New, s.secret)
	m.Write(id[:8])
	if owner != 0 {
		// Ids of jobs without a user sign the random bytes alone, as every id did before jobs
		// had owners.
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(owner))
		m.Write(b[:])
	}
	copy(id[8:], m.Sum(nil)[:8])
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant; 62 bits of the MAC remain
}

// Verify reports whether id was made by New with this secret for owner.
func (s *IDs) Verify(id uuid.UUID, owner int64) bool {
	if id.Version() != 8 || id.Variant() != uuid.RFC4122 {
		return false
	}
	want := id
	s.sign(&want, owner)
	return hmac.Equal(want[8:], id[8:])
}

// Parse reads a job id as text; ok is false for anything that is not a UUID.
func Parse(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return uuid.UUID{}, fmt.Errorf("job id %q: not a UUID", raw)
	}
	return id, nil
}
