package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AccountState is one account's history and state, judged on its own.
type AccountState struct {
	Name    string
	History []Record
	State   State
}

// readState waits until the webhooks stop delivering, then reads every
// account back through the API with its root key: the reads are requests
// of the history like any other, audited like any other.
func (r *Run) readState(ctx context.Context) ([]AccountState, error) {
	r.settle()
	r.deliveriesBy = time.Now().Add(r.cfg.DeliveryWait)
	var out []AccountState
	for i, a := range r.accounts {
		s, err := r.readAccount(a, i)
		if err != nil {
			return nil, fmt.Errorf("account %d: %w", i, err)
		}
		out = append(out, s)
	}
	history := r.c.History()
	for i := range out {
		ids := map[string]bool{}
		for _, k := range out[i].State.Keys {
			ids[k.ID] = true
		}
		for _, h := range history {
			if ids[h.KeyID] {
				out[i].History = append(out[i].History, h)
			}
		}
	}
	return out, ctx.Err()
}

// awaitDeliveries waits until every event of a committed write reached
// the receiver (as many ids of each unnamed event as writes announce it),
// or until the run's delivery wait is over.
func (r *Run) awaitDeliveries(i int, committed map[string][]string, unnamed map[string]int) []Delivery {
	for ; ; time.Sleep(500 * time.Millisecond) {
		got := r.recv.Deliveries(i)
		seen := map[[2]string]bool{}
		ids := map[string]map[string]bool{}
		for _, d := range got {
			seen[[2]string{d.Subject, d.Event}] = true
			if _, ok := unnamed[d.Event]; ok && d.Subject == "" {
				if ids[d.Event] == nil {
					ids[d.Event] = map[string]bool{}
				}
				ids[d.Event][d.EventID] = true
			}
		}
		missing := 0
		for subj, evs := range committed {
			for _, ev := range evs {
				if !seen[[2]string{subj, ev}] {
					missing++
				}
			}
		}
		for ev, n := range unnamed {
			missing += max(0, n-len(ids[ev]))
		}
		if missing == 0 || time.Now().After(r.deliveriesBy) {
			return got
		}
	}
}

func (r *Run) readAccount(a *account, i int) (AccountState, error) {
	root := a.Root
	s := State{Committed: map[string][]string{}, Passing: map[string][]string{},
		Unnamed: map[string]int{}, Waiting: map[string]bool{}, RSSBoundBytes: 1 << 30}
	commit := func(subject, event string) {
		if subject != "" && !slices.Contains(s.Committed[subject], event) {
			s.Committed[subject] = append(s.Committed[subject], event)
		}
	}
	get := func(path string) (map[string]any, error) {
		ans := r.call("read", root, "GET", path, "", nil, nil)
		if ans.Status != 200 {
			return nil, fmt.Errorf("GET %s: %d %s", path, ans.Status, ans.Raw)
		}
		return ans.Body, nil
	}
	each := func(path string, fn func(map[string]any)) error {
		cursor := ""
		for range 1000 {
			q := path + "?limit=100"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			body, err := get(q)
			if err != nil {
				return err
			}
			for _, x := range body["data"].([]any) {
				fn(x.(map[string]any))
			}
			if cursor = str(body["nextCursor"]); cursor == "" {
				return nil
			}
		}
		return fmt.Errorf("GET %s: too many pages", path)
	}
	// The database first: its query is charged, and the ledger read next
	// must hold that charge too.
	rows := map[string]int{}
	q := r.call("read", root, "POST", "/v1/databases/query", "",
		[]byte(`{"sql":"SELECT v, count(*) FROM soak GROUP BY v","rowMode":"arrays","maxRows":10000}`), nil)
	if q.Status != 200 {
		return AccountState{}, fmt.Errorf("database query: %d %s", q.Status, q.Raw)
	}
	if q.Body["truncated"] == true {
		return AccountState{}, fmt.Errorf("database query truncated")
	}
	for _, x := range q.Body["rows"].([]any) {
		row := x.([]any)
		n, _ := strconv.Atoi(string(row[1].(json.Number)))
		rows[str(row[0])] = n
	}
	bal, err := get("/v1/credits/balance")
	if err != nil {
		return AccountState{}, err
	}
	if s.Balance, err = micro(bal["balance"]); err != nil {
		return AccountState{}, err
	}
	err = each("/v1/credits/ledger", func(e map[string]any) {
		amt, err1 := micro(e["amountCredits"])
		after, err2 := micro(e["balanceAfter"])
		if err1 != nil || err2 != nil {
			err = fmt.Errorf("ledger entry %v: %v %v", e, err1, err2)
		}
		s.Entries = append(s.Entries, Entry{ID: str(e["id"]), Type: str(e["type"]), Reference: str(e["referenceId"]),
			RequestID: str(e["requestId"]), Operation: str(e["operation"]), KeyID: str(e["keyId"]), Amount: amt, BalanceAfter: after})
		if at, perr := time.Parse(time.RFC3339Nano, str(e["occurredAt"])); perr == nil {
			s.Entries[len(s.Entries)-1].At = at
		}
	})
	if err != nil {
		return AccountState{}, err
	}
	ids := map[string]bool{}
	r.mu.Lock()
	for _, k := range r.keys {
		if k.Account == i {
			ids[k.ID] = true
		}
	}
	r.mu.Unlock()
	labels := map[string]int{}
	setupKeys := map[string]bool{root.ID: true}
	if err := each("/v1/api-keys", func(k map[string]any) {
		key := Key{ID: str(k["id"]), Parent: str(k["parentId"]), RolledFrom: str(k["rolledFrom"])}
		s.Keys = append(s.Keys, key)
		if key.RolledFrom == "" && !setupKeys[key.ID] {
			labels[str(k["label"])]++
			commit(key.ID, "api_key.created")
		}
	}); err != nil {
		return AccountState{}, err
	}
	files := map[string]int{}
	if err := each("/v1/files", func(f map[string]any) {
		files[strings.TrimSuffix(str(f["filename"]), ".bin")]++
		commit(str(f["id"]), "file.created")
	}); err != nil {
		return AccountState{}, err
	}
	for subj, evs := range a.setupEvents {
		for _, ev := range evs {
			commit(subj, ev)
		}
	}
	invoked := map[string]bool{}
	for _, h := range r.c.History() {
		switch ev := madeEvent[h.Op]; {
		case !ids[h.KeyID] || h.Status/100 != 2:
		case h.Op == "invoke":
			invoked[h.Idem] = true
		case ev != "":
			commit(h.Made, ev)
		}
	}
	// An invoke's event names no resource: each acknowledged call is one.
	s.Unnamed["service.invoked"] = len(invoked)
	for _, e := range s.Entries {
		if e.Type == "top_up" {
			commit(e.Reference, "credits.topped_up")
		}
	}
	if err := each("/v1/approvals", func(x map[string]any) {
		id := str(x["id"])
		commit(id, "approval.requested")
		switch str(x["status"]) {
		case "approved", "rejected", "consumed":
			commit(id, "approval.decided")
		}
	}); err != nil {
		return AccountState{}, err
	}
	// Sends, swaps and orders: each resource's last status is announced,
	// and every status it may have passed through at most once.
	reached := map[string]int{} // event of each resource's status → how many
	lifecycle := func(id, prefix, status string, statuses []string) {
		reached[prefix+status]++
		commit(id, prefix+status)
		for _, st := range statuses {
			if st != status {
				s.Passing[id] = append(s.Passing[id], prefix+st)
			}
		}
	}
	resources := map[string]int{} // Idempotency-Key → orders, sends and swaps made for it
	sendOf, swapOf := map[string]string{}, map[string]string{}
	a.mu.Lock()
	sends := slices.Clone(a.sends)
	for _, sd := range sends {
		sendOf[sd.QuoteID] = sd.Idem
	}
	for q, idem := range a.swaps {
		swapOf[q] = idem
	}
	a.mu.Unlock()
	txTo := map[string][]string{} // address → the statuses of the transactions to it
	waiting := map[string]bool{}  // Idempotency-Keys whose send or swap waits for its approval
	if err := each("/v1/wallets/"+a.WalletID+"/transactions", func(x map[string]any) {
		lifecycle(str(x["id"]), "wallet.transaction.", str(x["status"]), txStatuses)
		if idem, ok := sendOf[str(x["quoteId"])]; ok && str(x["purpose"]) == "send" {
			resources[idem]++
			waiting[idem] = waiting[idem] || str(x["status"]) == "pending_approval"
		}
		to := strings.ToLower(str(x["to"]))
		txTo[to] = append(txTo[to], str(x["status"]))
	}); err != nil {
		return AccountState{}, err
	}
	if err := each("/v1/swaps", func(x map[string]any) {
		lifecycle(str(x["id"]), "swap.", str(x["status"]), swapStatuses)
		if idem, ok := swapOf[str(x["quoteId"])]; ok {
			resources[idem]++
			waiting[idem] = waiting[idem] || str(x["status"]) == "pending_approval"
		}
	}); err != nil {
		return AccountState{}, err
	}
	if err := each("/v1/trading/orders", func(x map[string]any) {
		lifecycle(str(x["id"]), "trading.order.", str(x["status"]), orderStatuses)
		if c := str(x["clientOrderId"]); c != "" {
			resources[c]++
		}
	}); err != nil {
		return AccountState{}, err
	}
	rpc, err := r.chainRPC()
	if err != nil && len(sends) > 0 {
		return AccountState{}, err
	}
	for _, sd := range sends {
		got, err := balanceAt(rpc, sd.To)
		if err != nil {
			return AccountState{}, err
		}
		st := txTo[strings.ToLower(sd.To)]
		send := Send{Idem: sd.Idem, Listed: len(st), Amount: sd.Amount, Received: got}
		if len(st) > 0 {
			send.Status = st[0]
		}
		s.Sends = append(s.Sends, send)
	}
	for _, e := range s.Entries {
		if e.Type == "top_up" {
			reached["top-ups credited"]++
		}
	}
	if len(reached) > 0 {
		r.logf("account %d: %v", i, reached)
	}
	untracked := map[string]int{}
	for _, d := range r.awaitDeliveries(i, s.Committed, s.Unnamed) {
		if trackedEvent(d.Event) {
			s.Deliveries = append(s.Deliveries, d)
		} else {
			untracked[d.Event]++
		}
	}
	if len(untracked) > 0 {
		r.logf("account %d: deliveries of events no write of the model announces: %v", i, untracked)
	}
	// Requests answered before the audit listing must be listed; the
	// listing reads what the journal's flusher has stored, a moment later.
	s.AuditListedAt = time.Now()
	time.Sleep(2 * time.Second)
	if err := each("/v1/audit-events", func(e map[string]any) {
		c, _ := micro(e["chargedCredits"])
		s.Audit = append(s.Audit, AuditEvent{RequestID: str(e["requestId"]), KeyID: str(e["keyId"]), Operation: str(e["operation"]), ChargedMicro: c})
	}); err != nil {
		return AccountState{}, err
	}
	start := r.start.Add(-time.Hour).UTC().Format(time.RFC3339)
	use, err := get("/v1/usage?bucketWidth=1h&start=" + url.QueryEscape(start))
	if err != nil {
		return AccountState{}, err
	}
	for _, b := range use["data"].([]any) {
		for _, x := range b.(map[string]any)["results"].([]any) {
			c, err := micro(x.(map[string]any)["chargedCredits"])
			if err != nil {
				return AccountState{}, err
			}
			s.UsageMicro += c
		}
	}
	// What each Idempotency-Key did: the resources named after it and the
	// debits its attempts' requests made.
	s.Effects, s.PaymentCredits = effects(r.c.History(), s.Entries)
	s.Waiting = waitingHolds(r.c.History(), s.Entries, waiting)
	for idem, e := range s.Effects {
		e.Resources = labels[idem] + files[idem] + rows[idem] + resources[idem]
		s.Effects[idem] = e
	}
	s.MaxRSSBytes = r.srv.MaxRSS()
	s.NoUsage = slices.Contains(r.srv.Env, "BACKEND=aws")
	return AccountState{Name: fmt.Sprintf("account %d (root %s)", i, root.ID), State: s}, nil
}

// effects is what each Idempotency-Key of history h did by the ledger's
// entries: the debits and the top-ups its attempts' requests made, and
// whether its operation creates or funds; and the top-ups each x402
// payment (its nonce) credited. A top-up credited by an attempt that died
// unanswered names a request the client never heard of: it counts for the
// Idempotency-Key whose retry answered with its receipt.
func effects(h []Record, entries []Entry) (map[string]Effect, map[string]int) {
	out, payments := map[string]Effect{}, map[string]int{}
	heard := map[string]bool{}
	for _, r := range h {
		heard[r.RequestID] = r.RequestID != ""
	}
	debits, credits := map[string]int{}, map[string]int{}
	unheard := map[string]string{} // receipt → the unanswered request that credited it
	for _, e := range entries {
		switch e.Type {
		case "hold", "charge":
			debits[e.RequestID]++
		case "top_up":
			credits[e.RequestID]++
			if !heard[e.RequestID] {
				unheard[e.Reference] = e.RequestID
			}
		}
	}
	for _, r := range h {
		if r.Idem == "" {
			continue
		}
		e := out[r.Idem]
		credited := credits[r.RequestID]
		if dead, ok := unheard[r.Made]; ok && r.Status/100 == 2 {
			credited += credits[dead]
			credits[dead] = 0
		}
		e.Debits += debits[r.RequestID]
		e.Credits += credited
		if r.Payment != "" {
			payments[r.Payment] += credited
		}
		debits[r.RequestID], credits[r.RequestID] = 0, 0
		switch r.Op {
		case "key", "upload", "db", "order", "send", "swap":
			e.Creates = true
		case "topup":
			e.Funds = true
		}
		out[r.Idem] = e
	}
	return out, payments
}

// waitingHolds are the requests whose holds wait with a send or a swap for
// its approval (Idempotency-Keys in waiting). A hold taken by an attempt
// that was never answered names a request id the client never heard: it
// is the attempt of the same key in flight when the hold was taken.
func waitingHolds(h []Record, entries []Entry, waiting map[string]bool) map[string]bool {
	out := map[string]bool{}
	known := map[string]bool{}
	for _, r := range h {
		if r.RequestID != "" {
			known[r.RequestID] = true
			out[r.RequestID] = out[r.RequestID] || waiting[r.Idem]
		}
	}
	for _, e := range entries {
		if e.Type != "hold" || known[e.RequestID] {
			continue
		}
		for _, r := range h {
			if r.Status == 0 && r.KeyID == e.KeyID && waiting[r.Idem] && inFlight(r, e.At) {
				out[e.RequestID] = true
			}
		}
	}
	return out
}

// The statuses a send, a swap and an order pass through, each announced
// by an event of its own.
var (
	txStatuses    = []string{"pending_approval", "queued", "submitted", "confirmed", "failed", "rejected", "expired"}
	swapStatuses  = []string{"pending_approval", "pending", "done", "failed"}
	orderStatuses = []string{"new", "partially_filled", "filled", "expired", "rejected"}
)

// madeEvent is the event a successful answer of an operation announces
// about what the answer names (Record.Made); an invoke's names nothing.
var madeEvent = map[string]string{"sign": "wallet.signature.created", "roll": "api_key.rolled"}

// trackedEvent is an event some write of the model announces: the events
// invariant judges these, and the run logs any other it receives.
func trackedEvent(ev string) bool {
	switch ev {
	case "api_key.created", "api_key.rolled", "file.created", "service.invoked", "credits.topped_up", "approval.requested", "approval.decided",
		"wallet.created", "wallet.policy_updated", "wallet.signature.created", "webhook.created", "database.provisioned":
		return true
	}
	for _, p := range []string{"wallet.transaction.", "swap.", "trading.order."} {
		if strings.HasPrefix(ev, p) {
			return true
		}
	}
	return false
}

// settle waits until no send or swap of any account is on its way (the
// last life's worker finishes what dead lives queued), at most a minute
// and a half.
func (r *Run) settle() {
	for until := time.Now().Add(90 * time.Second); time.Now().Before(until); time.Sleep(time.Second) {
		busy := 0
		for _, a := range r.accounts {
			for _, p := range []string{"/v1/wallets/" + a.WalletID + "/transactions?limit=100", "/v1/swaps?limit=100"} {
				ans := r.call("read", a.Root, "GET", p, "", nil, nil)
				data, _ := ans.Body["data"].([]any)
				for _, x := range data {
					switch str(x.(map[string]any)["status"]) {
					case "queued", "submitted", "pending":
						busy++
					}
				}
			}
		}
		if busy == 0 {
			return
		}
	}
}

// chainRPC is the local chain's JSON-RPC endpoint of the current life.
func (r *Run) chainRPC() (string, error) {
	raw, err := os.ReadFile(filepath.Join(r.srv.DataDir, "chain", "endpoint"))
	return strings.TrimSpace(string(raw)), err
}

// balanceAt is an address's ETH balance on the chain, in wei (decimal).
func balanceAt(rpc, address string) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance", "params": []string{address, "latest"}})
	res, err := http.Post(rpc, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("eth_getBalance %s: %w", address, err)
	}
	defer res.Body.Close()
	var out struct {
		Result string
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Error != nil {
		return "", fmt.Errorf("eth_getBalance %s: %v %v", address, err, out.Error)
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(out.Result, "0x"), 16)
	if !ok {
		return "", fmt.Errorf("eth_getBalance %s: %q", address, out.Result)
	}
	return n.String(), nil
}

// micro is a JSON number of credits in micro-credits, exactly: the API
// writes at most six decimals.
func micro(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number: %v", v)
	}
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 || strings.ContainsAny(s, "eE") {
		return 0, fmt.Errorf("%s is not a whole number of micro-credits", n)
	}
	frac += strings.Repeat("0", 6-len(frac))
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	m := w*1_000_000 + f
	if neg {
		m = -m
	}
	return m, nil
}
