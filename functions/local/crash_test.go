package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/webhooks"
)

// The crash suite's timings: short request, run and hold deadlines, so that
// a dead process's idempotency claims, in-flight run messages and orphaned
// holds come back within seconds instead of minutes.
var crashEnv = []string{"REQUEST_TIMEOUT=4s", "RUN_TIMEOUT=3s", "HOLD_GRACE=2s", "ALLOW_PRIVATE_WEBHOOKS=true"}

// crashOp is one write the suite sends, and its answer once it has one.
type crashOp struct {
	kind, method, path, body, idem string
	header                         map[string]string
	code                           int
	resp                           map[string]any
	// answeredBefore is the X-Request-Id of the answer the killed server
	// gave, "" when it gave none.
	answeredBefore string
}

// id is the resource the answer names.
func (o *crashOp) id() string {
	if o.kind == "memory" {
		res, _ := o.resp["result"].(map[string]any)
		s, _ := res["memoryId"].(string)
		return s
	}
	s, _ := o.resp["id"].(string)
	return s
}

type answer struct {
	code   int
	body   map[string]any
	header http.Header
}

// send makes one request; an error means no answer (the server died).
func send(base, method, path, secret, idem, body string) (answer, error) {
	return sendWith(base, method, path, secret, idem, body, nil)
}

// sendOp sends o once.
func sendOp(base, secret string, o *crashOp) (answer, error) {
	return sendWith(base, o.method, o.path, secret, o.idem, o.body, o.header)
}

// sendWith is send with extra headers, which override the JSON content type.
func sendWith(base, method, path, secret, idem, body string, header map[string]string) (answer, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return answer{code: res.StatusCode, body: out, header: res.Header}, nil
}

// crashOps are the concurrent writes of every kind, each with its own
// Idempotency-Key, which also names what it creates so that a duplicate
// shows in the lists; files are uploaded to project.
func crashOps(hook, project string) []*crashOp {
	var ops []*crashOp
	add := func(kind, method, path string, n int, body func(idem string) string) {
		for i := range n {
			idem := fmt.Sprintf("crash-%s-%02d", kind, i)
			ops = append(ops, &crashOp{kind: kind, method: method, path: path, body: body(idem), idem: idem})
		}
	}
	add("key", "POST", "/v1/api-keys", 15, func(idem string) string {
		return `{"label":"` + idem + `","scopes":["services:invoke"]}`
	})
	add("project", "POST", "/v1/projects", 15, func(idem string) string { return `{"name":"` + idem + `"}` })
	add("memory", "POST", "/v1/services/cloud-superbrain/invoke", 30, func(idem string) string {
		return `{"operationId":"memory.write","input":{"text":"` + idem + `"}}`
	})
	add("webhook", "POST", "/v1/webhooks", 10, func(idem string) string {
		return `{"url":"` + hook + `?op=` + idem + `","events":["*"]}`
	})
	add("run", "POST", "/v1/runs", 15, func(idem string) string {
		return `{"serviceId":"cloud-superbrain","operationId":"memory.search","input":{"query":"` + idem + `"}}`
	})
	add("file", "POST", "/v1/files", 10, func(idem string) string { return "bytes of " + idem })
	for _, o := range ops {
		if o.kind == "file" {
			o.header = map[string]string{"Content-Type": "text/plain", "X-File-Name": o.idem + ".txt", "X-Service-Project": project}
		}
	}
	// Interleave the kinds, so that the kill lands among writes of all of them.
	slices.SortFunc(ops, func(a, b *crashOp) int { return strings.Compare(a.idem[len(a.idem)-2:], b.idem[len(b.idem)-2:]) })
	return ops
}

// TestAKilledServerLosesNothingAndRepeatsNothing is the crash suite: the
// real server is killed with SIGKILL in the middle of concurrent writes of
// every kind, restarted on the same data, and every unanswered request is
// retried with its Idempotency-Key until answered. Then nothing executed
// twice (each key produced exactly one resource), nothing acknowledged is
// lost, every run reached a final state (its queue message survived), no
// credit hold is left held after the sweep, the ledger sums to the
// balance, every write announced itself to the webhook subscribed
// before them exactly once (the event outbox), and every request the killed
// server answered left exactly one audit event, counted once in /usage
// (the audit journal).
func TestAKilledServerLosesNothingAndRepeatsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash suite runs the real server for about half a minute")
	}
	dir := t.TempDir()
	env := append([]string{"DATA_DIR=" + dir}, crashEnv...)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hook.Close()

	first := start(t, env)
	tok := mintToken(t, env)
	code, root := call(t, "POST", first.base+"/v1/api-keys", map[string]string{
		"X-Service-Credit-Token": tok, "Idempotency-Key": "crash-root", "Content-Type": "application/json"}, `{"label":"root"}`)
	if code != 201 {
		t.Fatalf("root key: %d %v", code, root)
	}
	secret, rootID := root["secret"].(string), root["id"].(string)
	auth := map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json"}
	code, sink := call(t, "POST", first.base+"/v1/webhooks", with(auth, "Idempotency-Key", "crash-sink"), `{"url":"`+hook.URL+`/hook?op=sink","events":["*"]}`)
	if code != 201 {
		t.Fatalf("sink webhook: %d %v", code, sink)
	}
	code, files := call(t, "POST", first.base+"/v1/projects", with(auth, "Idempotency-Key", "crash-files"), `{"name":"files"}`)
	if code != 201 {
		t.Fatalf("files project: %d %v", code, files)
	}
	ops := crashOps(hook.URL+"/hook", files["id"].(string))

	// Concurrent writes; SIGKILL once a quarter of them are answered.
	var answered atomic.Int32
	killed := make(chan struct{})
	var killOnce sync.Once
	kill := func() { killOnce.Do(func() { _ = first.cmd.Process.Kill(); close(killed) }) }
	var wg sync.WaitGroup
	sem := make(chan struct{}, 12)
	for _, o := range ops {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			a, err := sendOp(first.base, secret, o)
			if err != nil {
				return
			}
			o.code, o.resp, o.answeredBefore = a.code, a.body, a.header.Get("X-Request-Id")
			if int(answered.Add(1)) >= len(ops)/4 {
				kill()
			}
		})
	}
	go func() { time.Sleep(5 * time.Second); kill() }()
	<-killed
	killedAt := time.Now()
	wg.Wait()
	_ = first.cmd.Wait()
	acknowledged := map[string]string{} // idem → resource id answered before the kill
	unanswered := 0
	for _, o := range ops {
		switch {
		case o.code == 0:
			unanswered++
		case o.code/100 == 2:
			acknowledged[o.idem] = o.id()
		default:
			t.Fatalf("%s answered %d before the kill: %v", o.idem, o.code, o.resp)
		}
	}
	t.Logf("killed with %d of %d writes acknowledged, %d unanswered", len(acknowledged), len(ops), unanswered)

	second := start(t, env)
	retryUntilAnswered(t, second.base, secret, ops, time.Now().Add(40*time.Second))
	for _, o := range ops {
		if id, ok := acknowledged[o.idem]; ok && id != o.id() {
			t.Errorf("%s: acknowledged %s before the crash, %s after", o.idem, id, o.id())
		}
		if o.code/100 != 2 || o.id() == "" {
			t.Fatalf("%s finally answered %d %v", o.idem, o.code, o.resp)
		}
	}
	wantEachOnce(t, ops, "key", listAll(t, second.base, secret, "/v1/api-keys", "label"))
	wantEachOnce(t, ops, "project", listAll(t, second.base, secret, "/v1/projects", "name"))
	wantEachOnce(t, ops, "webhook", webhookKeys(listAll(t, second.base, secret, "/v1/webhooks", "url")))
	wantEachOnce(t, ops, "memory", listMemories(t, second.base, secret))
	wantEachOnce(t, ops, "run", runsFinished(t, second.base, secret, ops))
	wantEventsOnce(t, second.base, secret, sink["id"].(string), ops, sink["id"].(string), files["id"].(string))
	wantAuditedOnce(t, second.base, secret, ops, first, second)

	// Orphaned holds have deadlines at most RUN_TIMEOUT after the kill;
	// the sweep runs every HOLD_GRACE.
	if wait := time.Until(killedAt.Add(3*time.Second + 2*2*time.Second + time.Second)); wait > 0 {
		time.Sleep(wait)
	}
	second.stop(t)
	checkLedger(t, filepath.Join(dir, "platform.db"), rootID)
}

// retryUntilAnswered sends every unanswered op again with its key until it
// has an answer: an idempotency claim of the dead process answers 409 until
// it expires (Retry-After says when to come back).
func retryUntilAnswered(t *testing.T, base, secret string, ops []*crashOp, deadline time.Time) {
	t.Helper()
	var wg sync.WaitGroup
	for _, o := range ops {
		if o.code != 0 {
			continue
		}
		wg.Go(func() {
			for time.Now().Before(deadline) {
				a, err := sendOp(base, secret, o)
				switch {
				case err != nil, a.code == 429, a.code >= 500:
					time.Sleep(200 * time.Millisecond)
				case a.code == 409 && a.body["code"] == "idempotency_request_in_progress":
					secs, _ := strconv.Atoi(a.header.Get("Retry-After"))
					time.Sleep(time.Duration(max(1, min(secs, 5))) * time.Second)
				default:
					o.code, o.resp = a.code, a.body
					return
				}
			}
		})
	}
	wg.Wait()
}

// listItems pages through a list endpoint (path may carry its own query)
// and returns every item.
func listItems(t *testing.T, base, secret, path string) []map[string]any {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var out []map[string]any
	cursor := ""
	for range 50 {
		q := path + sep + "limit=100"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		a, err := send(base, "GET", q, secret, "", "")
		if err != nil || a.code != 200 {
			t.Fatalf("GET %s: %v %d %v", q, err, a.code, a.body)
		}
		for _, x := range a.body["data"].([]any) {
			out = append(out, x.(map[string]any))
		}
		if cursor, _ = a.body["nextCursor"].(string); cursor == "" {
			return out
		}
	}
	t.Fatalf("GET %s: too many pages", path)
	return nil
}

// listAll is the ids of a list endpoint's items by their field.
func listAll(t *testing.T, base, secret, path, field string) map[string][]string {
	t.Helper()
	return byField(listItems(t, base, secret, path), field)
}

func byField(items []map[string]any, field string) map[string][]string {
	out := map[string][]string{}
	for _, m := range items {
		v, _ := m[field].(string)
		out[v] = append(out[v], m["id"].(string))
	}
	return out
}

// webhookKeys names each webhook by the op in its URL.
func webhookKeys(byURL map[string][]string) map[string][]string {
	out := map[string][]string{}
	for u, ids := range byURL {
		_, op, _ := strings.Cut(u, "?op=")
		out[op] = append(out[op], ids...)
	}
	return out
}

// listMemories reads every memory through memory.list, by text.
func listMemories(t *testing.T, base, secret string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	cursor := ""
	for i := range 20 {
		in := `{"limit":100}`
		if cursor != "" {
			in = `{"limit":100,"cursor":"` + cursor + `"}`
		}
		a, err := send(base, "POST", "/v1/services/cloud-superbrain/invoke", secret, fmt.Sprintf("crash-list-%d", i),
			`{"operationId":"memory.list","input":`+in+`}`)
		if err != nil || a.code != 200 {
			t.Fatalf("memory.list: %v %d %v", err, a.code, a.body)
		}
		res := a.body["result"].(map[string]any)
		for _, x := range res["data"].([]any) {
			m := x.(map[string]any)
			out[m["text"].(string)] = append(out[m["text"].(string)], m["memoryId"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
	t.Fatal("memory.list: too many pages")
	return nil
}

// runsFinished waits until every run is succeeded, failed or cancelled
// (one the dead process was executing fails as interrupted) and returns
// the runs listed, by the query their input holds.
func runsFinished(t *testing.T, base, secret string, ops []*crashOp) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	deadline := time.Now().Add(40 * time.Second)
	for _, o := range ops {
		if o.kind != "run" {
			continue
		}
		for {
			a, err := send(base, "GET", "/v1/runs/"+o.id(), secret, "", "")
			if err != nil || a.code != 200 {
				t.Fatalf("GET run %s: %v %d %v", o.id(), err, a.code, a.body)
			}
			if s := a.body["status"]; s != "queued" && s != "running" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s (%s) still %v after the restart", o.id(), o.idem, a.body["status"])
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, ids := range listAll(t, base, secret, "/v1/runs", "") {
		for _, id := range ids {
			a, err := send(base, "GET", "/v1/runs/"+id, secret, "", "")
			if err != nil || a.code != 200 {
				t.Fatalf("GET run %s: %v %d", id, err, a.code)
			}
			in, _ := a.body["input"].(map[string]any)
			q, _ := in["query"].(string)
			out[q] = append(out[q], id)
		}
	}
	return out
}

// wantEachOnce checks that every op of kind produced exactly one listed
// resource, the one its answer names, and nothing else of its kind exists.
func wantEachOnce(t *testing.T, ops []*crashOp, kind string, listed map[string][]string) {
	t.Helper()
	n := 0
	for _, o := range ops {
		if o.kind != kind {
			continue
		}
		n++
		if got := listed[o.idem]; len(got) != 1 || got[0] != o.id() {
			t.Errorf("%s produced %v; want exactly %s", o.idem, got, o.id())
		}
	}
	total := 0
	for name, ids := range listed {
		if strings.HasPrefix(name, "crash-"+kind+"-") {
			total += len(ids)
		}
	}
	if total != n {
		t.Errorf("%d %ss exist; want %d, one per Idempotency-Key", total, kind, n)
	}
}

// checkLedger opens the stopped server's store: no hold is still held and
// the ledger's entries add up to the balance.
func checkLedger(t *testing.T, path, rootKeyID string) {
	t.Helper()
	st, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	it, err := st.Get(ctx, store.Key{PK: "key#" + rootKeyID, SK: "key"})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		AccountID string `json:"accountId"`
	}
	if err := it.Doc(&rec); err != nil || rec.AccountID == "" {
		t.Fatalf("root key record: %v", err)
	}
	holds, err := st.Query(ctx, store.Query{PK: "acct#" + rec.AccountID, Prefix: "hold#"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds.Items {
		if h.String("state") == "held" {
			t.Errorf("hold %s of %d is still held after the sweep", h.Key().SK, h.Int("amount"))
		}
	}
	l := credits.NewLedger(st, time.Now)
	entries, err := l.Entries(ctx, rec.AccountID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, e := range entries {
		sum += e.Amount
	}
	balance, err := l.Balance(ctx, rec.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if sum != balance {
		t.Errorf("the ledger sums to %d; the balance is %d", sum, balance)
	}
	t.Logf("%d holds, %d ledger entries, balance %d", len(holds.Items), len(entries), balance)
}

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

// crashEvents is the event each kind of write announces; memory writes
// announce service.invoked, whose data names no resource.
var crashEvents = map[string]string{
	"key": "api_key.created", "project": "project.created", "webhook": "webhook.created", "file": "file.created",
}

// wantEventsOnce waits until the sink webhook (subscribed to every event
// before the writes began) holds one delivery of each write's event, then
// checks that each is there exactly once: one event id per resource, one
// delivery per event id, one service.invoked per memory write, and no
// event of those types for anything else than the writes and the setup
// resources (setup).
func wantEventsOnce(t *testing.T, base, secret, sinkID string, ops []*crashOp, setup ...string) {
	t.Helper()
	type seen struct {
		events    map[string]map[string][]string // type → data.id → event ids
		memWrites map[string]bool                // event ids of memory.write invocations
		perEvent  map[string]int                 // event id → deliveries
	}
	read := func() seen {
		s := seen{events: map[string]map[string][]string{}, memWrites: map[string]bool{}, perEvent: map[string]int{}}
		for _, d := range listItems(t, base, secret, "/v1/webhook-deliveries?webhookId="+sinkID) {
			p, _ := d["payload"].(map[string]any)
			data, _ := p["data"].(map[string]any)
			ev, evID := d["event"].(string), d["eventId"].(string)
			s.perEvent[evID]++
			if ev == "service.invoked" && data["operationId"] == "memory.write" {
				s.memWrites[evID] = true
			}
			id, _ := data["id"].(string)
			if s.events[ev] == nil {
				s.events[ev] = map[string][]string{}
			}
			if !slices.Contains(s.events[ev][id], evID) {
				s.events[ev][id] = append(s.events[ev][id], evID)
			}
		}
		return s
	}
	memWrites := 0
	for _, o := range ops {
		if o.kind == "memory" {
			memWrites++
		}
	}
	// An event whose fan-out after its commit failed is the outbox sweep's,
	// which takes events older than webhooks.OutboxGrace once a minute: so
	// long may a whole event take, and the test says when one did.
	var s seen
	began := time.Now()
	defer func() {
		if waited := time.Since(began); waited > 20*time.Second {
			t.Logf("the events took %s to be delivered: a fan-out was left to the outbox sweep", waited.Round(time.Second))
		}
	}()
	for deadline := began.Add(webhooks.OutboxGrace + time.Minute + 20*time.Second); ; time.Sleep(200 * time.Millisecond) {
		s = read()
		complete := len(s.memWrites) >= memWrites
		for _, o := range ops {
			if ev, ok := crashEvents[o.kind]; ok && len(s.events[ev][o.id()]) == 0 {
				complete = false
			}
		}
		if complete || time.Now().After(deadline) {
			break
		}
	}
	want := map[string]map[string]bool{}
	for _, o := range ops {
		if ev, ok := crashEvents[o.kind]; ok {
			if want[ev] == nil {
				want[ev] = map[string]bool{}
			}
			want[ev][o.id()] = true
			if got := s.events[ev][o.id()]; len(got) != 1 {
				t.Errorf("%s (%s): %d %s events %v; want exactly 1", o.idem, o.id(), len(got), ev, got)
			}
		}
	}
	for ev, byID := range s.events {
		if want[ev] == nil {
			continue
		}
		for id, evIDs := range byID {
			if !want[ev][id] && !slices.Contains(setup, id) {
				t.Errorf("%s events %v for %q, which no write created", ev, evIDs, id)
			}
		}
	}
	if len(s.memWrites) != memWrites {
		t.Errorf("%d service.invoked events of memory.write; want %d, one per write", len(s.memWrites), memWrites)
	}
	for evID, n := range s.perEvent {
		if n != 1 {
			t.Errorf("event %s has %d deliveries to one webhook; want 1", evID, n)
		}
	}
	t.Logf("%d events delivered to the sink webhook, each once", len(s.perEvent))
}

// wantAuditedOnce checks the audit journal across the kill: every request
// the killed server answered has exactly one audit event, no request has
// two, and /usage counts per operation what /audit-events lists. The reads
// themselves are audited, so their own operations are left out of the sums.
func wantAuditedOnce(t *testing.T, base, secret string, ops []*crashOp, servers ...*server) {
	t.Helper()
	items := listItems(t, base, secret, "/v1/audit-events")
	events := byField(items, "requestId")
	before := 0
	for _, o := range ops {
		if o.answeredBefore == "" {
			continue
		}
		before++
		if n := len(events[o.answeredBefore]); n != 1 {
			t.Errorf("%s: answered before the kill as %s, %d audit events", o.idem, o.answeredBefore, n)
		}
	}
	for req, ids := range events {
		// A run's own step is a settlement named after the run, beside
		// the request that created it: only requests must be unique.
		if strings.HasPrefix(req, "req_") && len(ids) > 1 {
			t.Errorf("request %s has %d audit events (%s): %v", req, len(ids), answeredAs(ops, req), eventsOf(items, req))
			for _, s := range servers {
				t.Logf("server log of %s: %v", req, linesWith(s.logs.String(), req))
			}
		}
	}
	t.Logf("%d requests answered before the kill, each with one audit event; %d events in all", before, len(events))

	// A settlement's event (a run's step, a released hold) commits with
	// its balance change; the readers count it before they answer.
	if listed, counted := auditedByOperation(t, base, secret); !maps.Equal(listed, counted) {
		t.Errorf("/usage counts %v, /audit-events lists %v", counted, listed)
	}
}

// answeredAs names the write the killed server answered as request req.
func answeredAs(ops []*crashOp, req string) string {
	for _, o := range ops {
		if o.answeredBefore == req {
			return fmt.Sprintf("%s, answered before the kill", o.idem)
		}
	}
	return "no write answered before the kill"
}

// eventsOf is the audit events of request req, whole.
func eventsOf(items []map[string]any, req string) []map[string]any {
	var out []map[string]any
	for _, m := range items {
		if m["requestId"] == req {
			out = append(out, m)
		}
	}
	return out
}

// auditedByOperation is what /audit-events lists and what /usage counts,
// per operation, leaving out the reads themselves.
func auditedByOperation(t *testing.T, base, secret string) (listed, counted map[string]int64) {
	t.Helper()
	reads := []string{"auditEvents.list", "usage.read"}
	listed = map[string]int64{}
	for _, m := range listItems(t, base, secret, "/v1/audit-events") {
		if op := m["operation"].(string); !slices.Contains(reads, op) {
			listed[op]++
		}
	}
	start := time.Now().UTC().Add(-48 * time.Hour).Format(time.RFC3339)
	a, err := send(base, "GET", "/v1/usage?bucketWidth=1d&groupBy=operation&start="+start, secret, "", "")
	if err != nil || a.code != 200 {
		t.Fatalf("GET /v1/usage: %v %d %v", err, a.code, a.body)
	}
	counted = map[string]int64{}
	for _, b := range a.body["data"].([]any) {
		for _, r := range b.(map[string]any)["results"].([]any) {
			res := r.(map[string]any)
			if op, _ := res["operation"].(string); !slices.Contains(reads, op) {
				counted[op] += int64(res["requests"].(float64))
			}
		}
	}
	return listed, counted
}
