package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
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

// awaitDeliveries waits until every committed write's event reached the
// receiver, or until the run's delivery wait is over.
func (r *Run) awaitDeliveries(i int, committed map[string]string) []Delivery {
	for ; ; time.Sleep(500 * time.Millisecond) {
		got := r.recv.Deliveries(i)
		seen := map[string]bool{}
		for _, d := range got {
			seen[d.Subject] = true
		}
		missing := 0
		for subj := range committed {
			if !seen[subj] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(r.deliveriesBy) {
			return got
		}
	}
}

func (r *Run) readAccount(a *account, i int) (AccountState, error) {
	root := a.Root
	s := State{Effects: map[string]Effect{}, Committed: map[string]string{}, RSSBoundBytes: 1 << 30}
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
			RequestID: str(e["requestId"]), Amount: amt, BalanceAfter: after})
	})
	if err != nil {
		return AccountState{}, err
	}
	labels := map[string]int{}
	setupKeys := map[string]bool{root.ID: true}
	if err := each("/v1/api-keys", func(k map[string]any) {
		key := Key{ID: str(k["id"]), Parent: str(k["parentId"]), RolledFrom: str(k["rolledFrom"])}
		s.Keys = append(s.Keys, key)
		if key.RolledFrom == "" && !setupKeys[key.ID] {
			labels[str(k["label"])]++
			s.Committed[key.ID] = "api_key.created"
		}
	}); err != nil {
		return AccountState{}, err
	}
	files := map[string]int{}
	if err := each("/v1/files", func(f map[string]any) {
		files[strings.TrimSuffix(str(f["filename"]), ".bin")]++
		s.Committed[str(f["id"])] = "file.created"
	}); err != nil {
		return AccountState{}, err
	}
	for _, d := range r.awaitDeliveries(i, s.Committed) {
		if d.Event == "api_key.created" || d.Event == "file.created" {
			s.Deliveries = append(s.Deliveries, d)
		}
	}
	// Requests answered before the audit listing must be listed; the
	// listing reads what the journal's flusher has stored, a moment later.
	s.AuditListedAt = time.Now()
	time.Sleep(2 * time.Second)
	if err := each("/v1/audit-events", func(e map[string]any) {
		c, _ := micro(e["chargedCredits"])
		s.Audit = append(s.Audit, AuditEvent{RequestID: str(e["requestId"]), KeyID: str(e["keyId"]), ChargedMicro: c})
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
	debits := map[string]int{}
	for _, e := range s.Entries {
		if e.Type == "hold" || e.Type == "charge" {
			debits[e.RequestID]++
		}
	}
	for _, h := range r.c.History() {
		if h.Idem == "" {
			continue
		}
		e := s.Effects[h.Idem]
		e.Charges += debits[h.RequestID]
		debits[h.RequestID] = 0
		s.Effects[h.Idem] = e
	}
	for _, h := range r.c.History() {
		if h.Idem != "" && (h.Op == "key" || h.Op == "upload" || h.Op == "db") {
			e := s.Effects[h.Idem]
			e.Creates = true
			s.Effects[h.Idem] = e
		}
	}
	for idem, e := range s.Effects {
		e.Resources = labels[idem] + files[idem] + rows[idem]
		s.Effects[idem] = e
	}
	s.MaxRSSBytes = r.srv.MaxRSS()
	s.NoUsage = slices.Contains(r.srv.Env, "BACKEND=aws")
	return AccountState{Name: fmt.Sprintf("account %d (root %s)", i, root.ID), State: s}, nil
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
