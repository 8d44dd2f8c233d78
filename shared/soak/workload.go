package soak

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one run of the model. A seed fixes the operations each worker
// makes, with which keys and in which order, and when the server is
// killed; how concurrent requests interleave is the machine's.
type Config struct {
	Seed     uint64
	Duration time.Duration
	Workers  int // concurrent clients (default 6)
	Accounts int // independent root accounts (default 2)
	// Kills: kill -9 every KillEvery (± half), and let some lives crash
	// right after a random write commits (SOAK_CRASH_AFTER).
	KillEvery time.Duration
	NoKills   bool
	// DeliveryWait bounds how long the state reader waits for every
	// committed write's event (default 2 minutes: a queue message a dead
	// life had taken comes back when its visibility timeout ends).
	DeliveryWait time.Duration
	// CrashMatch narrows the crash points to writes touching keys with
	// this prefix (SOAK_CRASH_MATCH), and CrashWithin bounds the write a
	// life crashes after (default 300): a run aimed at one path.
	CrashMatch  string
	CrashWithin int
	// CrashAfter, when set, is the one matching write every life crashes
	// after, instead of a random one up to CrashWithin.
	CrashAfter int
	// Only restricts the operations to these names; SliceAfterCrash
	// slices every account as soon as the first life that crashed is
	// replaced, and has that life charge each account once, before the
	// dead life's calls are retried; that life crashes nowhere and lives
	// until the run ends, so the dead calls are retried by it.
	Only            []string
	SliceAfterCrash bool
	// Fault is SOAK_FAULT for every life of the server: a broken server
	// whose breakage the checker must report.
	Fault string
	// RequestTimeout is the server's REQUEST_TIMEOUT, which bounds every
	// answer (default 5 s; an emulated AWS backend needs more).
	RequestTimeout time.Duration
	Env            []string // more server environment (BACKEND=aws …)
	Args           []string // the server's flags (--create-resources)
	Log            io.Writer
}

// The server's timings in a soak: short run and hold lifetimes, so that a
// dead life's idempotency claims and orphaned holds come back within
// seconds; the request timeout is Config.RequestTimeout (default 5 s).
const holdGrace = 2 * time.Second

var serverEnv = []string{"RUN_TIMEOUT=3s", "HOLD_GRACE=2s", "ALLOW_PRIVATE_WEBHOOKS=true"}

// mkey is a key of the model with its secret.
type mkey struct {
	Key
	Secret  string
	Account int
	Depth   int
	Rolled  bool
}

// account is one root account of the model.
type account struct {
	Root     *mkey
	WalletID string
	Hook     string // the receiver's URL for this account's webhook
	sliced   atomic.Bool
}

// Stats is what a run did.
type Stats struct {
	Ops     map[string]int
	Kills   int // SIGKILLs sent
	Crashes int // lives that ended at their crash point
	Lives   int
	Slices  int
}

// Run is a run in progress.
type Run struct {
	cfg      Config
	srv      *Server
	c        *Client
	recv     *Receiver
	accounts []*account

	mu    sync.Mutex
	keys  []*mkey
	ops   map[string]int
	stats Stats
	start time.Time
	// deliveriesBy is when the state reader stops waiting for events.
	deliveriesBy time.Time
}

// Start builds nothing: bin is the soakfaults build of the server, dir
// its data directory.
func NewRun(cfg Config, bin, dir string) *Run {
	if cfg.Workers == 0 {
		cfg.Workers = 6
	}
	if cfg.Accounts == 0 {
		cfg.Accounts = 2
	}
	if cfg.KillEvery == 0 {
		cfg.KillEvery = 8 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	if cfg.DeliveryWait == 0 {
		cfg.DeliveryWait = 2 * time.Minute
	}
	if cfg.CrashWithin == 0 {
		cfg.CrashWithin = 300
	}
	env := append(append([]string{"REQUEST_TIMEOUT=" + cfg.RequestTimeout.String()}, serverEnv...), cfg.Env...)
	if cfg.Fault != "" {
		env = append(env, "SOAK_FAULT="+cfg.Fault)
	}
	srv := &Server{Bin: bin, DataDir: dir, Env: env, Args: cfg.Args}
	return &Run{cfg: cfg, srv: srv, c: NewClient(srv, cfg.RequestTimeout), recv: NewReceiver(), ops: map[string]int{}}
}

func (r *Run) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "soak: "+format+"\n", args...)
}

// Execute sets the accounts up, runs the workers and the killer for the
// configured duration, lets every request finish, and reads the state back.
func (r *Run) Execute(ctx context.Context) ([]AccountState, error) {
	defer r.recv.Close()
	r.start = time.Now()
	if err := r.srv.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = r.srv.Stop() }()
	if err := r.setup(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w\n%s", err, r.srv.Logs())
	}
	end := time.Now().Add(r.cfg.Duration)
	var wg sync.WaitGroup
	for w := range r.cfg.Workers {
		rng := mrand.New(mrand.NewPCG(r.cfg.Seed, uint64(w)+1))
		wg.Go(func() { r.worker(rng, w, end) })
	}
	// The killer stops when the duration ends, and leaves a life without
	// a crash point to answer what the workers still retry.
	r.killer(mrand.New(mrand.NewPCG(r.cfg.Seed, 0)), time.After(time.Until(end)))
	wg.Wait()
	// A last life, started cleanly once every request is answered: its
	// start fans out what dead lives left in the outbox and counts what
	// they left in the audit journal. Holds they left are swept once their
	// deadline and the grace are past: the run waits for that.
	if err := r.srv.Stop(); err != nil {
		return nil, err
	}
	if err := r.srv.Start(); err != nil {
		return nil, err
	}
	r.stats.Lives = r.srv.Lives()
	time.Sleep(r.cfg.RequestTimeout + 3*holdGrace)
	out, err := r.readState(ctx)
	if err != nil {
		logs := r.srv.Logs()
		return nil, fmt.Errorf("%w\nthe server's last words:\n%s", err, logs[max(0, len(logs)-4000):])
	}
	return out, nil
}

// Stats is what the run did.
func (r *Run) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Ops = map[string]int{}
	for k, v := range r.ops {
		s.Ops[k] = v
	}
	return s
}

// History is every attempt the run made.
func (r *Run) History() []Record { return r.c.History() }

// killer ends the server's life every KillEvery (± half) with SIGKILL and
// starts the next, half of them with a crash point: the life exits right
// after its n-th write commits. A life that crashed is restarted at once.
func (r *Run) killer(rng *mrand.Rand, stop <-chan time.Time) {
	next := func() time.Duration {
		return r.cfg.KillEvery/2 + time.Duration(rng.Int64N(int64(r.cfg.KillEvery)))
	}
	aimed := r.cfg.CrashMatch != ""
	restart := func() {
		var extra []string
		if !r.cfg.NoKills && (aimed || rng.IntN(2) == 0) {
			n := 1 + rng.IntN(r.cfg.CrashWithin)
			if r.cfg.CrashAfter > 0 {
				n = r.cfg.CrashAfter
			}
			extra = append(extra, fmt.Sprintf("SOAK_CRASH_AFTER=%d", n), "SOAK_CRASH_MATCH="+r.cfg.CrashMatch)
		}
		for {
			if err := r.srv.Start(extra...); err == nil {
				return
			} else {
				r.logf("restart: %v", err)
			}
			extra = nil
			time.Sleep(time.Second)
		}
	}
	if aimed && !r.cfg.NoKills {
		// Every life of an aimed run crashes at its point, the first too.
		r.srv.Kill()
		restart()
	}
	timer := time.NewTimer(next())
	defer timer.Stop()
	// clean: the current life has no crash point, and may answer what
	// the workers still retry.
	clean := false
	for {
		select {
		case <-stop:
			if !r.cfg.NoKills && !clean {
				r.srv.Kill()
				r.mu.Lock()
				r.stats.Kills++
				r.mu.Unlock()
				for r.srv.Start() != nil {
					time.Sleep(time.Second)
				}
			}
			return
		case <-r.srv.Exited():
			r.mu.Lock()
			r.stats.Crashes++
			r.mu.Unlock()
			if !r.cfg.SliceAfterCrash {
				restart()
				continue
			}
			// The next life is withheld from the workers until every
			// account is sliced and a call of the harness has made the
			// life read it so: the dead life's calls are retried by a
			// process that knows. It crashes nowhere: one crash is the
			// case.
			r.srv.Withhold(true)
			for r.srv.Start() != nil {
				time.Sleep(time.Second)
			}
			clean = true
			for i, a := range r.accounts {
				r.sliceAccount(a)
				r.c.Do(Request{Op: "invoke", Method: "POST", Path: "/v1/services/cloud-superbrain/invoke", Key: &a.Root.Key, Secret: a.Root.Secret,
					Idem: fmt.Sprintf("soak-prime-%d-%d", i, r.srv.Lives()), Harness: true,
					Body: []byte(`{"operationId":"memory.write","input":{"text":"prime"}}`)})
			}
			r.srv.Withhold(false)
		case <-timer.C:
			if !r.cfg.NoKills {
				r.srv.Kill()
				r.mu.Lock()
				r.stats.Kills++
				r.mu.Unlock()
				restart()
			}
			timer.Reset(next())
		}
	}
}

// setup makes each account's root key from a minted credit token, its
// webhook to the receiver and its wallet, on a server with no fault yet.
func (r *Run) setup(ctx context.Context) error {
	for i := range r.cfg.Accounts {
		tok, err := r.mint(ctx)
		if err != nil {
			return err
		}
		a := r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/api-keys", Idem: fmt.Sprintf("soak-root-%d", i),
			Header: map[string]string{"X-Service-Credit-Token": tok}, Body: []byte(`{"label":"root"}`)})
		if a.Status != 201 {
			return fmt.Errorf("root key: %d %s", a.Status, a.Raw)
		}
		root := &mkey{Key: Key{ID: str(a.Body["id"])}, Secret: str(a.Body["secret"]), Account: i}
		acct := &account{Root: root, Hook: r.recv.URL(i)}
		r.keys = append(r.keys, root)
		r.accounts = append(r.accounts, acct)
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/webhooks", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-hook-%d", i),
			Body: []byte(`{"url":"` + acct.Hook + `","events":["*"]}`)})
		if a.Status != 201 {
			return fmt.Errorf("webhook: %d %s", a.Status, a.Raw)
		}
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/wallets", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-wallet-%d", i),
			Body: []byte(`{"label":"soak"}`)})
		if a.Status != 201 {
			return fmt.Errorf("wallet: %d %s", a.Status, a.Raw)
		}
		acct.WalletID = str(a.Body["id"])
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/databases/account", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-db-%d", i),
			Body: []byte(`{}`)})
		if a.Status != 201 {
			return fmt.Errorf("database: %d %s", a.Status, a.Raw)
		}
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/databases/actions", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-db-table-%d", i),
			Body: []byte(`{"actions":[{"type":"migrate","id":"001","sql":"CREATE TABLE soak(v TEXT NOT NULL)"}]}`)})
		if a.Status != 200 {
			return fmt.Errorf("database table: %d %s", a.Status, a.Raw)
		}
	}
	return nil
}

// mint is a credit token from the server's own signing key.
func (r *Run) mint(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, r.srv.Bin, "mint-credit-token", "--credits", "50")
	cmd.Env = append(append(cmd.Environ(), "DATA_DIR="+r.srv.DataDir), r.srv.Env...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("mint-credit-token: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// The operations a worker picks from, with their weights.
var operations = []struct {
	name   string
	weight int
	run    func(r *Run, rng *mrand.Rand, idem string)
}{
	{"invoke", 40, (*Run).invoke},
	{"key", 8, (*Run).createKey},
	{"roll", 3, (*Run).roll},
	{"upload", 10, (*Run).upload},
	{"download", 8, (*Run).download},
	{"sign", 8, (*Run).sign},
	{"balance", 5, (*Run).balance},
	{"db", 8, (*Run).insert},
	{"slice", 1, (*Run).slice},
}

func (r *Run) worker(rng *mrand.Rand, w int, end time.Time) {
	ops := operations
	if len(r.cfg.Only) > 0 {
		ops = nil
		for _, o := range operations {
			if slices.Contains(r.cfg.Only, o.name) {
				ops = append(ops, o)
			}
		}
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for n := 0; time.Now().Before(end); n++ {
		pick := rng.IntN(total)
		for _, o := range ops {
			if pick -= o.weight; pick < 0 {
				o.run(r, rng, fmt.Sprintf("soak-%d-%d-%s", w, n, o.name))
				r.mu.Lock()
				r.ops[o.name]++
				r.mu.Unlock()
				break
			}
		}
	}
}

// pickKey is a random key of a random account (of account acct if ≥ 0).
func (r *Run) pickKey(rng *mrand.Rand, acct int) *mkey {
	r.mu.Lock()
	defer r.mu.Unlock()
	var of []*mkey
	for _, k := range r.keys {
		if acct < 0 || k.Account == acct {
			of = append(of, k)
		}
	}
	return of[rng.IntN(len(of))]
}

func (r *Run) call(op string, k *mkey, method, path, idem string, body []byte, header map[string]string) Answer {
	return r.c.Do(Request{Op: op, Method: method, Path: path, Key: &k.Key, Secret: k.Secret, Idem: idem, Body: body, Header: header})
}

// invoke is a charged call: a memory written under the call's key.
func (r *Run) invoke(rng *mrand.Rand, idem string) {
	k := r.pickKey(rng, -1)
	r.call("invoke", k, "POST", "/v1/services/cloud-superbrain/invoke", idem,
		[]byte(`{"operationId":"memory.write","input":{"text":"`+idem+`"}}`), nil)
}

// createKey delegates a child (inheriting every scope) under a random key.
func (r *Run) createKey(rng *mrand.Rand, idem string) {
	parent := r.pickKey(rng, -1)
	if parent.Depth >= 3 {
		return
	}
	a := r.call("key", parent, "POST", "/v1/api-keys", idem, []byte(`{"label":"`+idem+`"}`), nil)
	if a.Status == 201 {
		r.addKey(&mkey{Key: Key{ID: str(a.Body["id"]), Parent: parent.ID}, Secret: str(a.Body["secret"]), Account: parent.Account, Depth: parent.Depth + 1})
	}
}

func (r *Run) addKey(k *mkey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, k)
}

// roll rolls a random key into a successor; both work for the next hour.
func (r *Run) roll(rng *mrand.Rand, idem string) {
	k := r.pickKey(rng, -1)
	r.mu.Lock()
	rolled := k.Rolled
	r.mu.Unlock()
	// A rolled root is a new root, outside the old root's subtree, which
	// the state is read with.
	if rolled || k.Depth == 0 {
		return
	}
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	a := r.call("roll", k, "POST", "/v1/api-keys/"+k.ID+"/roll", idem, []byte(`{"expiresAt":"`+exp+`"}`), nil)
	if a.Status == 201 {
		r.mu.Lock()
		k.Rolled = true
		r.mu.Unlock()
		r.addKey(&mkey{Key: Key{ID: str(a.Body["id"]), Parent: k.Parent, RolledFrom: k.ID}, Secret: str(a.Body["secret"]), Account: k.Account, Depth: k.Depth})
	}
}

// upload stores a small random file at the account level.
func (r *Run) upload(rng *mrand.Rand, idem string) {
	k := r.pickKey(rng, -1)
	body := make([]byte, 512+rng.IntN(16<<10))
	_, _ = rand.Read(body)
	r.call("upload", k, "POST", "/v1/files", idem, body, map[string]string{"Content-Type": "application/octet-stream", "X-File-Name": idem + ".bin"})
}

// download reads a random file of the key's account back.
func (r *Run) download(rng *mrand.Rand, _ string) {
	k := r.pickKey(rng, -1)
	a := r.call("files.list", k, "GET", "/v1/files?limit=20", "", nil, nil)
	data, _ := a.Body["data"].([]any)
	if len(data) == 0 {
		return
	}
	f, _ := data[rng.IntN(len(data))].(map[string]any)
	r.call("download", k, "GET", "/v1/files/"+str(f["id"])+"/content", "", nil, nil)
}

// sign asks for a personal_sign signature with one key, has it decided by
// another random key of the account (a key of the requester's lineage
// must be refused), and signs if it was approved.
func (r *Run) sign(rng *mrand.Rand, idem string) {
	acct := rng.IntN(len(r.accounts))
	w := r.accounts[acct].WalletID
	req := r.pickKey(rng, acct)
	q := r.call("sign.quote", req, "POST", "/v1/wallets/"+w+"/signatures/quote", idem+"-quote",
		[]byte(`{"type":"personal_sign","message":"`+idem+`"}`), nil)
	approval := str(q.Body["approvalId"])
	if approval == "" {
		return
	}
	dec := r.pickKey(rng, acct)
	d := r.c.Do(Request{Op: "approve", Method: "POST", Path: "/v1/approvals/" + approval, Key: &dec.Key, Secret: dec.Secret,
		Idem: idem + "-decide", Body: []byte(`{"decision":"approve"}`), Requester: req.ID})
	if d.Status/100 != 2 {
		return
	}
	r.call("sign", req, "POST", "/v1/wallets/"+w+"/signatures", idem,
		[]byte(`{"quoteId":"`+str(q.Body["id"])+`","approvalId":"`+approval+`"}`), nil)
}

// insert adds one row named after its Idempotency-Key to the account's
// database: acknowledged, it must be there exactly once.
func (r *Run) insert(rng *mrand.Rand, idem string) {
	r.call("db", r.pickKey(rng, -1), "POST", "/v1/databases/actions", idem,
		[]byte(`{"actions":[{"type":"execute","sql":"INSERT INTO soak(v) VALUES (?)","params":["`+idem+`"]}]}`), nil)
}

// balance reads the balance a random key sees.
func (r *Run) balance(rng *mrand.Rand, _ string) {
	r.call("balance", r.pickKey(rng, -1), "GET", "/v1/credits/balance", "", nil, nil)
}

// slice splits a random account's balance while charges run, once per
// account: the state a burst reaches by contention, reached on purpose.
func (r *Run) slice(rng *mrand.Rand, _ string) {
	r.sliceAccount(r.accounts[rng.IntN(len(r.accounts))])
}

func (r *Run) sliceAccount(a *account) {
	if a.sliced.Swap(true) {
		return
	}
	for until := time.Now().Add(time.Minute); time.Now().Before(until); time.Sleep(200 * time.Millisecond) {
		base := r.srv.URL()
		if base == "" {
			continue
		}
		res, err := http.Post(base+"/_soak/slice?n=4&key="+a.Root.ID, "", nil)
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode == http.StatusNoContent {
			r.mu.Lock()
			r.stats.Slices++
			r.mu.Unlock()
			return
		}
		r.logf("slice: %d", res.StatusCode)
		return
	}
}

func str(v any) string { s, _ := v.(string); return s }

// Receiver is the webhook target: every delivery it takes, by account.
type Receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[int][]Delivery
}

func NewReceiver() *Receiver {
	rc := &Receiver{got: map[int][]Delivery{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var acct int
		if _, err := fmt.Sscanf(req.URL.Path, "/hook/%d", &acct); err != nil {
			http.NotFound(w, req)
			return
		}
		var p struct {
			ID, Type string
			Data     json.RawMessage
		}
		if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var data struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(p.Data, &data)
		rc.mu.Lock()
		rc.got[acct] = append(rc.got[acct], Delivery{EventID: p.ID, Event: p.Type, Subject: data.ID})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return rc
}

// URL is where account acct's webhook delivers.
func (rc *Receiver) URL(acct int) string { return fmt.Sprintf("%s/hook/%d", rc.srv.URL, acct) }

// Deliveries is what account acct's webhook delivered so far.
func (rc *Receiver) Deliveries(acct int) []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Delivery(nil), rc.got[acct]...)
}

func (rc *Receiver) Close() { rc.srv.Close() }
