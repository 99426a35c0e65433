package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ccplatform/gateway/e2e/loadtest"
	"ccplatform/gateway/e2e/stacktest"
)

// op is one operation of the mix, drawn with its weight (out of their sum).
type op struct {
	weight float64
	run    func(m *mix, ctx context.Context)
}

// ops is the mix: every operation of the public API but the dialing queue's and the do-not-call
// list's (still being built), weighted like a partner's traffic: reads first, then lead creates.
// The last three provoke a 400, a 401 and a 404 on purpose.
var ops = []op{
	{2, (*mix).orderCreate},
	{3, (*mix).orderUpdate},
	{6, (*mix).orderDetail},
	{0.5, (*mix).callAttemptCreate},
	{8, (*mix).leadCreateV2},
	{4, (*mix).leadCreateV1},
	{5, (*mix).leadCreateAsyncV2},
	{2, (*mix).leadCreateAsyncV1},
	{6, (*mix).leadJob},
	{6, (*mix).leadList},
	{10, (*mix).leadDetail},
	{5, (*mix).leadUpdateV2},
	{2, (*mix).leadUpdateV1},
	{5, (*mix).callList},
	{5, (*mix).callDetail},
	{2, (*mix).userList},
	{1, (*mix).userListAlias},
	{3, (*mix).userDetail},
	{1, (*mix).agentGroupCreate},
	{1, (*mix).agentGroupUpdate},
	{3, (*mix).agentGroupList},
	{2, (*mix).notifyPrivate},
	{0.2, (*mix).notifyPublic},
	{0.3, (*mix).notifyGroup},
	{4, (*mix).notificationList},
	{1, (*mix).notificationRead},
	{0.5, (*mix).notificationStream},
	{1, (*mix).healthCheck},
	{2, (*mix).apiKeyList},
	{0.5, (*mix).apiKeyCreate},
	{0.5, (*mix).apiKeyRevoke},
	{1, (*mix).leadCreateInvalid},
	{0.5, (*mix).orderDetailNoKey},
	{1, (*mix).leadDetailUnknown},
}

// leadOrder is an order the mix sends leads to.
type leadOrder struct {
	id   int64
	code string
}

// mix is the load: the clients, the ids it works on, and what it measured.
type mix struct {
	// api sends the key; anon is the same connections without it.
	api  *loadtest.Client
	anon *loadtest.Client
	rec  *recorder

	adminID    int64
	leadOrders []leadOrder
	callOrders []int64
	orders     *ring[int64]
	leads      *ring[int64]
	jobs       *ring[string]
	calls      *ring[int64]
	users      *ring[int64]
	groups     *ring[int64]
	notes      *ring[int64]
	// keys holds the API keys the mix made and has not revoked yet.
	keys struct {
		sync.Mutex
		ids []int64
	}
	seq        atomic.Int64
	callErrors atomic.Int64
	// paused and inflight let a sample be taken without load (quiet).
	paused   atomic.Bool
	inflight atomic.Int64
}

func newMix(baseURL, key string, workers int) *mix {
	api := loadtest.NewClient(baseURL, workers, map[string]string{"X-Api-Key": key})
	return &mix{
		api: api, anon: &loadtest.Client{HTTP: api.HTTP, BaseURL: baseURL}, rec: newRecorder(),
		orders: newRing[int64](), leads: newRing[int64](), jobs: newRing[string](), calls: newRing[int64](),
		users: newRing[int64](), groups: newRing[int64](), notes: newRing[int64](),
	}
}

// setup finds the demo data the mix reads (users, demo orders with their calls, leads, agent
// groups) and makes the orders it sends leads to. Its requests are not measured.
func (m *mix) setup(ctx context.Context) error {
	var users struct {
		List []struct {
			ID    int64  `json:"id"`
			Email string `json:"email"`
		} `json:"list"`
	}
	if err := m.get(ctx, "/v2/user/list/?limit=100", &users); err != nil {
		return err
	}
	for _, u := range users.List {
		m.users.add(u.ID)
		if u.Email == "admin@demo.callcenter.local" {
			m.adminID = u.ID
		}
	}
	if m.adminID == 0 {
		return fmt.Errorf("the demo admin is not among the users")
	}
	// The demo orders are the orders of the demo leads; their calls are read from them.
	var leads struct {
		List []struct {
			ID      int64 `json:"id"`
			OrderID int64 `json:"orderId"`
		} `json:"list"`
	}
	if err := m.get(ctx, "/v2/lead/?limit=100", &leads); err != nil {
		return err
	}
	for _, l := range leads.List {
		m.leads.add(l.ID)
		if !slices.Contains(m.callOrders, l.OrderID) {
			m.callOrders = append(m.callOrders, l.OrderID)
			m.orders.add(l.OrderID)
		}
	}
	for _, order := range m.callOrders {
		var calls struct {
			List []idData `json:"list"`
		}
		if err := m.get(ctx, fmt.Sprintf("/v2/call/?orderIds[]=%d&limit=100", order), &calls); err != nil {
			return err
		}
		for _, c := range calls.List {
			m.calls.add(c.ID)
		}
	}
	if m.calls.pick() == 0 {
		return fmt.Errorf("the demo data has no calls")
	}
	var groups struct {
		List []idData `json:"list"`
	}
	if err := m.get(ctx, "/v2/agent-group/?limit=100", &groups); err != nil {
		return err
	}
	for _, g := range groups.List {
		m.groups.add(g.ID)
	}
	for i := range 3 {
		var created struct {
			ID int64 `json:"id"`
		}
		body := map[string]any{"serviceTitle": "Soak", "title": fmt.Sprintf("Soak leads %d", i+1), "status": "success", "sipEndpointIds": []int{1}}
		if err := m.post(ctx, "/v2/order/create/", body, &created); err != nil {
			return err
		}
		var detail struct {
			Code string `json:"code"`
		}
		if err := m.get(ctx, fmt.Sprintf("/v2/order/detail/%d/", created.ID), &detail); err != nil {
			return err
		}
		m.leadOrders = append(m.leadOrders, leadOrder{created.ID, detail.Code})
		m.orders.add(created.ID)
	}
	return nil
}

// drive sends requests at rate until ctx ends, each on the first free worker, and waits for the
// last ones. While paused it sends nothing and does not catch up afterwards.
func (m *mix) drive(ctx context.Context, rate, workers int) {
	var total float64
	for _, o := range ops {
		total += o.weight
	}
	queue := make(chan op)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range queue {
				// The request may end after the window: it is measured all the same.
				o.run(m, context.WithoutCancel(ctx))
				m.inflight.Add(-1)
			}
		})
	}
	defer wg.Wait()
	defer close(queue)
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	sent := 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			due := int(now.Sub(start).Seconds()*float64(rate)) - sent
			if m.paused.Load() {
				sent += due
				continue
			}
			for ; due > 0; due-- {
				sent++
				m.inflight.Add(1)
				select {
				case queue <- pick(total):
				default:
					m.inflight.Add(-1)
					m.rec.late()
				}
			}
		}
	}
}

// quiet stops the load until resume and waits for the requests in flight, then closes the
// client's idle connections (the gateway holds a goroutine for each): a sample taken meanwhile
// counts the processes' own goroutines and memory, not the requests of that moment.
func (m *mix) quiet() {
	m.paused.Store(true)
	for deadline := time.Now().Add(10 * time.Second); m.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	m.api.HTTP.CloseIdleConnections()
}

func (m *mix) resume() { m.paused.Store(false) }

func pick(total float64) op {
	x := rand.Float64() * total
	for _, o := range ops {
		if x < o.weight {
			return o
		}
		x -= o.weight
	}
	return ops[len(ops)-1]
}

// publishCalls plays the telephony platform every so often: 20 call events for a demo order's
// leads through `ccadmin simulate-calls`, which call-ingest stores (and lead-worker reads back as
// call results).
func (m *mix) publishCalls(ctx context.Context, st *stacktest.Stack, every time.Duration) {
	// Half a period off the minute, so a batch is never in flight while a sample is taken.
	next := time.NewTimer(every / 2)
	defer next.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
			next.Reset(every)
		}
		if m.paused.Load() {
			continue
		}
		order := m.callOrders[i%len(m.callOrders)]
		if _, err := st.CCAdmin("simulate-calls", "--order", strconv.FormatInt(order, 10), "--count", "20"); err != nil {
			m.callErrors.Add(1)
			fmt.Println("soak: call events:", err)
		}
	}
}

// request sends one measured request under its route template and returns the status (0 when no
// answer came) and the envelope's data of a 200. want is the status the request should get: a
// request of the mix gets 200, one that provokes an error on purpose names it.
func (m *mix) request(ctx context.Context, route string, want int, method, path string, body any, withKey bool) (int, json.RawMessage) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			panic(fmt.Sprintf("soak: body of %s: %v", route, err))
		}
	}
	client := m.api
	if !withKey {
		client = m.anon
	}
	start := time.Now()
	status, answer, err := client.Send(ctx, method, path, raw)
	if err == nil && status != want {
		err = fmt.Errorf("status %d: %.300s", status, answer)
	}
	m.rec.record(route, status, status == want, time.Since(start), err)
	if status != http.StatusOK {
		return status, nil
	}
	data, err := loadtest.Data(answer)
	if err != nil {
		return status, nil
	}
	return status, data
}

// do is a request of the mix (with the key, 200 wanted) whose data, when it answered 200, is
// decoded into out.
func (m *mix) do(ctx context.Context, route, method, path string, body, out any) bool {
	status, data := m.request(ctx, route, http.StatusOK, method, path, body, true)
	if status != http.StatusOK {
		return false
	}
	return out == nil || json.Unmarshal(data, out) == nil
}

// get and post are the unmeasured requests of setup.
func (m *mix) get(ctx context.Context, path string, out any) error {
	return m.unmeasured(ctx, http.MethodGet, path, nil, out)
}

func (m *mix) post(ctx context.Context, path string, body, out any) error {
	return m.unmeasured(ctx, http.MethodPost, path, body, out)
}

func (m *mix) unmeasured(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return m.api.Do(ctx, method, path, raw, out)
}

type idData struct {
	ID int64 `json:"id"`
}

// phone is a distinct valid Moscow mobile number per call, so no lead links to another.
func (m *mix) phone() string { return fmt.Sprintf("7916%07d", 1000000+m.seq.Add(1)%8000000) }

func (m *mix) leadOrder() leadOrder { return m.leadOrders[rand.IntN(len(m.leadOrders))] }

func (m *mix) orderCreate(ctx context.Context) {
	n := m.seq.Add(1)
	body := map[string]any{"serviceTitle": "Soak", "title": fmt.Sprintf("Soak order %d", n), "status": "success", "sipEndpointIds": []int{1}}
	var d idData
	if m.do(ctx, "POST /v2/order/create", http.MethodPost, "/v2/order/create/", body, &d) {
		m.orders.add(d.ID)
	}
}

func (m *mix) orderUpdate(ctx context.Context) {
	body := map[string]any{"title": fmt.Sprintf("Soak order renamed %d", m.seq.Add(1))}
	m.do(ctx, "POST /v2/order/update/:orderId", http.MethodPost, fmt.Sprintf("/v2/order/update/%d/", m.orders.pick()), body, nil)
}

func (m *mix) orderDetail(ctx context.Context) {
	m.do(ctx, "GET /v2/order/detail/:orderId", http.MethodGet, fmt.Sprintf("/v2/order/detail/%d/", m.orders.pick()), nil, nil)
}

func (m *mix) callAttemptCreate(ctx context.Context) {
	body := map[string]any{"title": fmt.Sprintf("Soak attempts %d", m.seq.Add(1)), "intervals": []int{30, 120}}
	m.do(ctx, "POST /v2/call-attempt/create", http.MethodPost, "/v2/call-attempt/create/", body, nil)
}

func (m *mix) v2Lead() map[string]any {
	o := m.leadOrder()
	return map[string]any{"leadType": "straight", "phone": m.phone(), "orderId": o.id, "orderCode": o.code, "name": "Soak"}
}

func (m *mix) v1Lead() map[string]any {
	o := m.leadOrder()
	return map[string]any{"lead_type": "straight", "client_phone": m.phone(), "order_id": o.id, "order_code": o.code,
		"messengerId": 5550001, "socialNetworkId": "123456", "socialLogin": "soak"}
}

func (m *mix) leadCreateV2(ctx context.Context) {
	var d idData
	if m.do(ctx, "POST /v2/lead/create", http.MethodPost, "/v2/lead/create/", m.v2Lead(), &d) {
		m.leads.add(d.ID)
	}
}

func (m *mix) leadCreateV1(ctx context.Context) {
	var d idData
	if m.do(ctx, "POST /v1/lead/create", http.MethodPost, "/v1/lead/create/", m.v1Lead(), &d) {
		m.leads.add(d.ID)
	}
}

type jobData struct {
	JobID string `json:"jobId"`
}

func (m *mix) leadCreateAsyncV2(ctx context.Context) {
	var d jobData
	if m.do(ctx, "POST /v2/lead/create-async", http.MethodPost, "/v2/lead/create-async/", m.v2Lead(), &d) {
		m.jobs.add(d.JobID)
	}
}

func (m *mix) leadCreateAsyncV1(ctx context.Context) {
	var d jobData
	if m.do(ctx, "POST /v1/lead/create-async", http.MethodPost, "/v1/lead/create-async/", m.v1Lead(), &d) {
		m.jobs.add(d.JobID)
	}
}

func (m *mix) leadJob(ctx context.Context) {
	job := m.jobs.pick()
	if job == "" {
		return
	}
	var d struct {
		Status string `json:"status"`
		LeadID int64  `json:"leadId"`
	}
	if m.do(ctx, "GET /v2/lead/job/:jobId", http.MethodGet, "/v2/lead/job/"+job+"/", nil, &d) && d.LeadID > 0 {
		m.leads.add(d.LeadID)
	}
}

func (m *mix) leadList(ctx context.Context) {
	m.do(ctx, "GET /v2/lead", http.MethodGet, fmt.Sprintf("/v2/lead/?orderIds[]=%d&limit=20", m.leadOrder().id), nil, nil)
}

func (m *mix) leadDetail(ctx context.Context) {
	m.do(ctx, "GET /v2/lead/detail/:leadId", http.MethodGet, fmt.Sprintf("/v2/lead/detail/%d/", m.leads.pick()), nil, nil)
}

func (m *mix) leadUpdateV2(ctx context.Context) {
	body := map[string]any{"name": fmt.Sprintf("Soak %d", m.seq.Add(1))}
	m.do(ctx, "POST /v2/lead/update/:leadId", http.MethodPost, fmt.Sprintf("/v2/lead/update/%d/", m.leads.pick()), body, nil)
}

func (m *mix) leadUpdateV1(ctx context.Context) {
	body := map[string]any{"client_name": fmt.Sprintf("Soak %d", m.seq.Add(1))}
	m.do(ctx, "POST /v1/lead/update/:lead_id", http.MethodPost, fmt.Sprintf("/v1/lead/update/%d/", m.leads.pick()), body, nil)
}

func (m *mix) callList(ctx context.Context) {
	order := m.callOrders[rand.IntN(len(m.callOrders))]
	m.do(ctx, "GET /v2/call", http.MethodGet, fmt.Sprintf("/v2/call/?orderIds[]=%d&limit=20", order), nil, nil)
}

func (m *mix) callDetail(ctx context.Context) {
	m.do(ctx, "GET /v2/call/detail/:callId", http.MethodGet, fmt.Sprintf("/v2/call/detail/%d/", m.calls.pick()), nil, nil)
}

func (m *mix) userList(ctx context.Context) {
	m.do(ctx, "GET /v2/user/list", http.MethodGet, "/v2/user/list/?limit=20", nil, nil)
}

func (m *mix) userListAlias(ctx context.Context) {
	m.do(ctx, "GET /v2/user", http.MethodGet, "/v2/user/", nil, nil)
}

func (m *mix) userDetail(ctx context.Context) {
	m.do(ctx, "GET /v2/user/detail/:userId", http.MethodGet, fmt.Sprintf("/v2/user/detail/%d/", m.users.pick()), nil, nil)
}

func (m *mix) agentGroupCreate(ctx context.Context) {
	body := map[string]any{"names": map[string]string{"ru": "Сок", "gb": fmt.Sprintf("Soak %d", m.seq.Add(1))}, "agentIds": []int64{}}
	var d idData
	if m.do(ctx, "POST /v2/agent-group/create", http.MethodPost, "/v2/agent-group/create/", body, &d) {
		m.groups.add(d.ID)
	}
}

func (m *mix) agentGroupUpdate(ctx context.Context) {
	body := map[string]any{"names": map[string]string{"ru": "Сок", "gb": fmt.Sprintf("Soak renamed %d", m.seq.Add(1))}}
	m.do(ctx, "POST /v2/agent-group/update/:id", http.MethodPost, fmt.Sprintf("/v2/agent-group/update/%d/", m.groups.pick()), body, nil)
}

func (m *mix) agentGroupList(ctx context.Context) {
	m.do(ctx, "GET /v2/agent-group", http.MethodGet, "/v2/agent-group/?limit=20", nil, nil)
}

func (m *mix) note(extra map[string]any) map[string]any {
	body := map[string]any{"title": "Soak", "text": fmt.Sprintf("Soak notification %d", m.seq.Add(1)), "priority": "default", "level": "default"}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func (m *mix) notifyPrivate(ctx context.Context) {
	m.do(ctx, "POST /v2/notification/private", http.MethodPost, "/v2/notification/private/", m.note(map[string]any{"userId": m.adminID}), nil)
}

func (m *mix) notifyPublic(ctx context.Context) {
	m.do(ctx, "POST /v2/notification/public", http.MethodPost, "/v2/notification/public/", m.note(nil), nil)
}

func (m *mix) notifyGroup(ctx context.Context) {
	m.do(ctx, "POST /v2/notification/group", http.MethodPost, "/v2/notification/group/", m.note(map[string]any{"group": "admin"}), nil)
}

func (m *mix) notificationList(ctx context.Context) {
	var d struct {
		List []idData `json:"list"`
	}
	if m.do(ctx, "GET /v2/notification", http.MethodGet, "/v2/notification/?limit=20", nil, &d) {
		for _, n := range d.List {
			m.notes.add(n.ID)
		}
	}
}

func (m *mix) notificationRead(ctx context.Context) {
	id := m.notes.pick()
	if id == 0 {
		return
	}
	m.do(ctx, "POST /v2/notification/read/:id", http.MethodPost, fmt.Sprintf("/v2/notification/read/%d/", id), map[string]any{}, nil)
}

// notificationStream opens the live stream, waits for its ready event and closes it: the time
// measured is the time to ready. A stream held open would only add one steady goroutine per
// process; opening and closing them is what could leak.
func (m *mix) notificationStream(ctx context.Context) {
	const route = "GET /v2/notification/stream"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := m.api.NewRequest(ctx, http.MethodGet, "/v2/notification/stream/", nil)
	if err != nil {
		panic(fmt.Sprintf("soak: request of %s: %v", route, err))
	}
	start := time.Now()
	resp, err := m.api.HTTP.Do(req)
	if err != nil {
		m.rec.record(route, 0, false, time.Since(start), err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		m.rec.record(route, resp.StatusCode, false, time.Since(start), fmt.Errorf("status %d: %.300s", resp.StatusCode, raw))
		return
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.TrimSpace(strings.TrimPrefix(sc.Text(), "event:")) == "ready" {
			m.rec.record(route, http.StatusOK, true, time.Since(start), nil)
			return
		}
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	m.rec.record(route, 0, false, time.Since(start), fmt.Errorf("no ready event: %w", err))
}

func (m *mix) healthCheck(ctx context.Context) {
	m.do(ctx, "GET /v1/health/check", http.MethodGet, "/v1/health/check/", nil, nil)
}

func (m *mix) apiKeyList(ctx context.Context) {
	m.do(ctx, "GET /v2/api-key", http.MethodGet, "/v2/api-key/?limit=20", nil, nil)
}

func (m *mix) apiKeyCreate(ctx context.Context) {
	var d idData
	body := map[string]any{"name": fmt.Sprintf("soak %d", m.seq.Add(1)), "scopes": []string{"leads:read"}}
	if m.do(ctx, "POST /v2/api-key/create", http.MethodPost, "/v2/api-key/create/", body, &d) {
		m.keys.Lock()
		m.keys.ids = append(m.keys.ids, d.ID)
		m.keys.Unlock()
	}
}

// apiKeyRevoke revokes the oldest key the mix made, so the keys do not pile up.
func (m *mix) apiKeyRevoke(ctx context.Context) {
	m.keys.Lock()
	if len(m.keys.ids) == 0 {
		m.keys.Unlock()
		return
	}
	id := m.keys.ids[0]
	m.keys.ids = m.keys.ids[1:]
	m.keys.Unlock()
	m.do(ctx, "POST /v2/api-key/revoke/:id", http.MethodPost, fmt.Sprintf("/v2/api-key/revoke/%d/", id), map[string]any{}, nil)
}

// leadCreateInvalid is a lead whose phone cannot be a number: a 400 naming the field.
func (m *mix) leadCreateInvalid(ctx context.Context) {
	body := m.v2Lead()
	body["phone"] = "12"
	m.request(ctx, "POST /v2/lead/create", http.StatusBadRequest, http.MethodPost, "/v2/lead/create/", body, true)
}

// orderDetailNoKey is a request without X-Api-Key: a 401.
func (m *mix) orderDetailNoKey(ctx context.Context) {
	m.request(ctx, "GET /v2/order/detail/:orderId", http.StatusUnauthorized, http.MethodGet, fmt.Sprintf("/v2/order/detail/%d/", m.orders.pick()), nil, false)
}

// leadDetailUnknown is a lead id that does not exist: a 404.
func (m *mix) leadDetailUnknown(ctx context.Context) {
	m.request(ctx, "GET /v2/lead/detail/:leadId", http.StatusNotFound, http.MethodGet, "/v2/lead/detail/999999999/", nil, true)
}

// ring keeps the latest ids of a kind for the mix to pick from.
type ring[T comparable] struct {
	mu   sync.Mutex
	ids  []T
	next int
}

const ringSize = 1000

func newRing[T comparable]() *ring[T] { return &ring[T]{ids: make([]T, 0, ringSize)} }

func (r *ring[T]) add(id T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) < ringSize {
		r.ids = append(r.ids, id)
		return
	}
	r.ids[r.next] = id
	r.next = (r.next + 1) % ringSize
}

// pick is a random id of the ring, the zero value when it is empty.
func (r *ring[T]) pick() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var zero T
	if len(r.ids) == 0 {
		return zero
	}
	return r.ids[rand.IntN(len(r.ids))]
}
