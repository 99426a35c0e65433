package lead_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"ccplatform/pkg/db"
	"ccplatform/pkg/dbtest"
	"ccplatform/pkg/listquery"
	"ccplatform/services/lead/internal/lead"
	"ccplatform/services/lead/internal/wiring"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conn is the package's database, migrated, opened as both binaries open it; dbURL its URL.
var (
	conn  *sqlx.DB
	dbURL string
)

func TestMain(m *testing.M) {
	dbtest.Main(m, "lead_lead", func(url string) int {
		var s wiring.Settings
		s.Database.URL, s.MaxConns = url, 16
		dbURL = url
		c, err := wiring.OpenDB(context.Background(), s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lead tests:", err)
			return 1
		}
		defer c.Close()
		conn = c
		return m.Run()
	})
}

// lastOrder keeps the tests' leads apart: each test takes orders of its own.
var lastOrder atomic.Int64

func newOrder() int64 { return lastOrder.Add(1) }

func newLead(order int64, phone string) lead.Lead {
	return lead.Lead{OrderID: order, OrderCode: fmt.Sprint("order-", order), Phone: phone, StatusID: 1,
		LeadType: lead.TypeStraight, CreateMethod: lead.MethodAPIv2Async, Source: lead.SourceOrganic,
		CustomValues: lead.CustomValues{}}
}

func insertBatch(t *testing.T, leads ...lead.Lead) []lead.Lead {
	t.Helper()
	var out []lead.Lead
	require.NoError(t, db.InTx(context.Background(), conn, func(tx *sqlx.Tx) error {
		var err error
		out, err = lead.InsertBatch(context.Background(), tx, leads)
		return err
	}))
	require.Len(t, out, len(leads))
	return out
}

func stored(t *testing.T, id int64) lead.Lead {
	t.Helper()
	l, err := lead.NewStore(conn).Get(context.Background(), id)
	require.NoError(t, err)
	return l
}

func TestBatchLinksRepeatsOfItsOwnRowsAndOfStoredLeads(t *testing.T) {
	o1, o2 := newOrder(), newOrder()
	earlier := insertBatch(t, newLead(o1, "+2"))[0]

	got := insertBatch(t, newLead(o1, "+1"), newLead(o1, "+2"), newLead(o1, "+1"), newLead(o2, "+1"), newLead(o1, "+1"))
	for i := 1; i < len(got); i++ {
		assert.Greater(t, got[i].ID, got[i-1].ID, "ids follow the rows")
	}
	assert.Greater(t, got[0].ID, earlier.ID)

	assert.False(t, got[0].IsSecondary)
	assert.Nil(t, got[0].PreviousLeadID)
	assert.Equal(t, &got[2].ID, got[0].NextLeadID)
	assert.True(t, got[1].IsSecondary, "a repeat of a stored lead")
	assert.Equal(t, &earlier.ID, got[1].PreviousLeadID)
	assert.Nil(t, got[1].NextLeadID)
	assert.True(t, got[2].IsSecondary, "a repeat of an earlier row")
	assert.Equal(t, &got[0].ID, got[2].PreviousLeadID)
	assert.Equal(t, &got[4].ID, got[2].NextLeadID)
	assert.False(t, got[3].IsSecondary, "the same phone in another order")
	assert.Nil(t, got[3].PreviousLeadID)
	assert.Nil(t, got[3].NextLeadID)
	assert.True(t, got[4].IsSecondary)
	assert.Equal(t, &got[2].ID, got[4].PreviousLeadID)
	assert.Nil(t, got[4].NextLeadID)

	assert.Equal(t, &got[1].ID, stored(t, earlier.ID).NextLeadID, "the stored lead points at its repeat")
	for _, l := range got {
		s := stored(t, l.ID)
		assert.Equal(t, []any{l.IsSecondary, l.PreviousLeadID, l.NextLeadID}, []any{s.IsSecondary, s.PreviousLeadID, s.NextLeadID},
			"lead %d is returned as stored", l.ID)
	}
}

func TestBatchesAndSyncCreatesContinueOneChain(t *testing.T) {
	o := newOrder()
	store := lead.NewStore(conn)
	first, err := store.Create(context.Background(), newLead(o, "+1"))
	require.NoError(t, err)
	assert.False(t, first.IsSecondary)
	batch := insertBatch(t, newLead(o, "+1"), newLead(o, "+1"))
	last, err := store.Create(context.Background(), newLead(o, "+1"))
	require.NoError(t, err)
	assert.True(t, last.IsSecondary)
	assert.Equal(t, &batch[1].ID, last.PreviousLeadID)
	assert.Nil(t, last.NextLeadID)
	assertChains(t, o, map[string]int{"+1": 4})
	assert.Equal(t, []int64{first.ID, batch[0].ID, batch[1].ID, last.ID}, chainIDs(t, o, "+1"))
}

// Batches and sync creates racing over the same phones, each batch naming them in an order of its
// own and some twice: none may deadlock or be refused, and each phone's leads make one chain in id
// order.
func TestConcurrentCreatesOfSharedPhonesMakeOneChainEach(t *testing.T) {
	o := newOrder()
	phones := []string{"+1", "+2", "+3", "+4", "+5"}
	const writers, rounds = 6, 10
	want := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			store := lead.NewStore(conn)
			for range rounds {
				if w == 0 {
					p := phones[rnd.IntN(len(phones))]
					_, err := store.Create(context.Background(), newLead(o, p))
					assert.NoError(t, err)
					mu.Lock()
					want[p]++
					mu.Unlock()
					continue
				}
				var batch []lead.Lead
				for _, i := range rnd.Perm(len(phones)) {
					batch = append(batch, newLead(o, phones[i]))
				}
				batch = append(batch, newLead(o, phones[rnd.IntN(len(phones))]))
				err := db.InTx(context.Background(), conn, func(tx *sqlx.Tx) error {
					_, err := lead.InsertBatch(context.Background(), tx, batch)
					return err
				})
				if !assert.NoError(t, err) {
					continue
				}
				mu.Lock()
				for _, l := range batch {
					want[l.Phone]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assertChains(t, o, want)
}

// assertChains checks that order o has want leads per phone, each phone's leads one chain in id
// order: the first not secondary, every other one pointing back at the one before it, which
// points forward at it, and the last with no next lead.
func assertChains(t *testing.T, o int64, want map[string]int) {
	t.Helper()
	leads, total, err := lead.NewStore(conn).List(context.Background(), lead.Filter{OrderIDs: []int64{o}},
		listquery.Page{Limit: 10_000})
	require.NoError(t, err)
	require.Equal(t, total, len(leads))
	byPhone := map[string][]lead.Lead{}
	for _, l := range leads {
		byPhone[l.Phone] = append(byPhone[l.Phone], l)
	}
	got := map[string]int{}
	for p, chain := range byPhone {
		got[p] = len(chain)
		sort.Slice(chain, func(i, j int) bool { return chain[i].ID < chain[j].ID })
		for i, l := range chain {
			if i == 0 {
				assert.False(t, l.IsSecondary, "lead %d", l.ID)
				assert.Nil(t, l.PreviousLeadID, "lead %d", l.ID)
			} else {
				assert.True(t, l.IsSecondary, "lead %d", l.ID)
				assert.Equal(t, &chain[i-1].ID, l.PreviousLeadID, "lead %d", l.ID)
			}
			if i == len(chain)-1 {
				assert.Nil(t, l.NextLeadID, "lead %d", l.ID)
			} else {
				assert.Equal(t, &chain[i+1].ID, l.NextLeadID, "lead %d", l.ID)
			}
		}
	}
	assert.Equal(t, want, got)
}

func chainIDs(t *testing.T, o int64, phone string) []int64 {
	t.Helper()
	var ids []int64
	require.NoError(t, conn.Select(&ids, `SELECT id FROM leads WHERE order_id = $1 AND phone = $2 ORDER BY id`, o, phone))
	return ids
}

func TestEmptyBatchStoresNothing(t *testing.T) {
	require.NoError(t, db.InTx(context.Background(), conn, func(tx *sqlx.Tx) error {
		out, err := lead.InsertBatch(context.Background(), tx, nil)
		assert.Empty(t, out)
		return err
	}))
}
