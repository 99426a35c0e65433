package lead

import (
	"hash/fnv"
	"sort"
	"strconv"
)

// PhoneKey names the leads that repeat one another: the same normalised phone in the same order.
type PhoneKey struct {
	OrderID int64
	Phone   string
}

// KeyOf is l's repeat key.
func KeyOf(l Lead) PhoneKey { return PhoneKey{OrderID: l.OrderID, Phone: l.Phone} }

// LockID is the advisory-lock id of a key. Two keys may share one (a 64-bit hash): that only
// serialises two creates that did not need it.
func (k PhoneKey) LockID() int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("lead.phone:" + strconv.FormatInt(k.OrderID, 10) + ":" + k.Phone))
	return int64(h.Sum64())
}

// LockIDs are the sorted, distinct lock ids of leads' keys: taking locks in one global order is
// what keeps two batches that share keys from deadlocking.
func LockIDs(leads []Lead) []int64 {
	seen := map[int64]bool{}
	var ids []int64
	for _, l := range leads {
		id := KeyOf(l).LockID()
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Link marks the repeats among leads, which already have their ids and are in creation order.
// latest holds, per key, the newest lead already stored. A lead whose key has an earlier lead is
// secondary, its previousLeadId is that lead and that lead's nextLeadId is this one. Links to
// leads inside the batch are set on the batch; links to stored leads come back in next
// (stored lead id → its new nextLeadId).
func Link(leads []Lead, latest map[PhoneKey]int64) (next map[int64]int64) {
	next = map[int64]int64{}
	index := make(map[int64]int, len(leads))
	last := make(map[PhoneKey]int64, len(latest))
	for k, id := range latest {
		last[k] = id
	}
	for i := range leads {
		l := &leads[i]
		k := KeyOf(*l)
		l.IsSecondary, l.PreviousLeadID = false, nil
		if prev, ok := last[k]; ok {
			p := prev
			l.IsSecondary, l.PreviousLeadID = true, &p
			id := l.ID
			if j, inBatch := index[prev]; inBatch {
				leads[j].NextLeadID = &id
			} else {
				next[prev] = id
			}
		}
		index[l.ID] = i
		last[k] = l.ID
	}
	return next
}
