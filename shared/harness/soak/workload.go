package soak

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/ethereum/go-ethereum/crypto"

	"platformapi/shared/groups/credits/x402"
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
	// UntilCrashes keeps the workers and the killer going past Duration,
	// for up to untilCrashesLimit more, until that many lives crashed: a
	// busy machine may make fewer requests in Duration than an aimed run
	// needs to reach its crash point.
	UntilCrashes int
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
	// setupEvents are the events the setup's writes announce, by subject.
	setupEvents map[string][]string

	mu       sync.Mutex
	sends    []plannedSend
	swaps    map[string]string // quote id → the swap's Idempotency-Key
	payments []x402.PaymentPayload
}

// plannedSend is a send quoted to an address of its own.
type plannedSend struct{ Idem, QuoteID, To, Amount string }

// Stats is what a run did.
type Stats struct {
	Ops map[string]int
	// Answers counts the attempts by the status they were answered with
	// (0: none, the server died or the client gave up).
	Answers map[int]int
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
	// tokens are the local chain's test tokens by symbol (deployed at the
	// chain's first start by a faucet of its own).
	tokens map[string]string
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
	// The killer stops when the workers do, and leaves a life without a
	// crash point to answer what they still retry.
	stop := make(chan struct{})
	go func() {
		for r.going(end) {
			time.Sleep(100 * time.Millisecond)
		}
		close(stop)
	}()
	r.killer(mrand.New(mrand.NewPCG(r.cfg.Seed, 0)), stop)
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

// untilCrashesLimit bounds how long UntilCrashes may extend a run.
const untilCrashesLimit = 2 * time.Minute

// going reports whether the workers start another operation: until end,
// and past it while fewer lives crashed than UntilCrashes asks.
func (r *Run) going(end time.Time) bool {
	now := time.Now()
	if now.Before(end) {
		return true
	}
	r.mu.Lock()
	crashes := r.stats.Crashes
	r.mu.Unlock()
	return crashes < r.cfg.UntilCrashes && now.Before(end.Add(untilCrashesLimit))
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
	s.Answers = map[int]int{}
	for _, rec := range r.c.History() {
		s.Answers[rec.Status]++
	}
	return s
}

// History is every attempt the run made.
func (r *Run) History() []Record { return r.c.History() }

// killer ends the server's life every KillEvery (± half) with SIGKILL and
// starts the next, half of them with a crash point: the life exits right
// after its n-th write commits. A life that crashed is restarted at once.
func (r *Run) killer(rng *mrand.Rand, stop <-chan struct{}) {
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
// webhook to the receiver, its funded wallet with its policy and its
// database, and learns the local chain's tokens.
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
		acct := &account{Root: root, Hook: r.recv.URL(i), setupEvents: map[string][]string{}, swaps: map[string]string{}}
		r.keys = append(r.keys, root)
		r.accounts = append(r.accounts, acct)
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/webhooks", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-hook-%d", i),
			Body: []byte(`{"url":"` + acct.Hook + `","events":["*"]}`)})
		if a.Status != 201 {
			return fmt.Errorf("webhook: %d %s", a.Status, a.Raw)
		}
		acct.setupEvents[str(a.Body["id"])] = []string{"webhook.created"}
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/wallets", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-wallet-%d", i),
			Body: []byte(`{"label":"soak"}`)})
		if a.Status != 201 {
			return fmt.Errorf("wallet: %d %s", a.Status, a.Raw)
		}
		acct.WalletID = str(a.Body["id"])
		acct.setupEvents[acct.WalletID] = []string{"wallet.created"}
		if err := r.fund(ctx, str(a.Body["address"])); err != nil {
			return err
		}
		// Sends over sendApprovalOver wei wait for an approval.
		a = r.c.Do(Request{Op: "setup", Method: "PATCH", Path: "/v1/wallets/" + acct.WalletID + "/policy", Key: &root.Key, Secret: root.Secret,
			Idem: fmt.Sprintf("soak-policy-%d", i), Body: []byte(`{"defaultAction":"allow","expectedRevision":1,"rules":[` +
				`{"action":"require_approval","operation":"signatures.create","criteria":[]},` +
				`{"action":"require_approval","operation":"transactions.create","criteria":[{"type":"value","asset":"ETH","op":"gt","amount":"` + sendApprovalOver + `"}]}]}`)})
		if a.Status != 200 {
			return fmt.Errorf("wallet policy: %d %s", a.Status, a.Raw)
		}
		acct.setupEvents[acct.WalletID] = append(acct.setupEvents[acct.WalletID], "wallet.policy_updated")
		a = r.c.Do(Request{Op: "setup", Method: "POST", Path: "/v1/databases/account", Key: &root.Key, Secret: root.Secret, Idem: fmt.Sprintf("soak-db-%d", i),
			Body: []byte(`{}`)})
		if a.Status != 201 {
			return fmt.Errorf("database: %d %s", a.Status, a.Raw)
		}
		acct.setupEvents[str(a.Body["id"])] = []string{"database.provisioned"}
		if r.tokens == nil {
			a = r.call("setup", root, "GET", "/v1/swaps/tokens?chainId=1337", "", nil, nil)
			data, _ := a.Body["data"].([]any)
			r.tokens = map[string]string{}
			for _, x := range data {
				t, _ := x.(map[string]any)
				r.tokens[str(t["symbol"])] = str(t["address"])
			}
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

// fund gives a wallet ETH for sends and gas and USDC to swap, on the
// server's local chain.
func (r *Run) fund(ctx context.Context, address string) error {
	for _, f := range [][2]string{{"ETH", "100"}, {"USDC", "10000"}} {
		cmd := exec.CommandContext(ctx, r.srv.Bin, "fund", "--address", address, "--asset", f[0], "--amount", f[1])
		cmd.Env = append(append(cmd.Environ(), "DATA_DIR="+r.srv.DataDir), r.srv.Env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("fund %s: %v\n%s", f[0], err, out)
		}
	}
	return nil
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
	{"topup", 3, (*Run).topUp},
	{"order", 6, (*Run).order},
	{"send", 6, (*Run).send},
	{"swap", 3, (*Run).swap},
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
	for n := 0; r.going(end); n++ {
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

// topUp buys credits through x402: the challenge, then the same request
// with the same Idempotency-Key and a payment signed by a new payer. Now
// and then it pays again with an authorization an earlier top-up used,
// under a new key: that must credit nothing.
func (r *Run) topUp(rng *mrand.Rand, idem string) {
	acct := rng.IntN(len(r.accounts))
	a, k := r.accounts[acct], r.pickKey(rng, acct)
	body := []byte(`{"amountUsd":5}`)
	a.mu.Lock()
	var used []x402.PaymentPayload
	if rng.IntN(4) == 0 {
		used = a.payments
	}
	a.mu.Unlock()
	if len(used) > 0 {
		p := used[rng.IntN(len(used))]
		hdr, err := x402.EncodeHeader(p)
		if err == nil {
			r.c.Do(Request{Op: "topup.reuse", Method: "POST", Path: "/v1/credits/x402/top-up", Key: &k.Key, Secret: k.Secret, Idem: idem,
				Body: body, Header: map[string]string{"Payment-Signature": hdr}, Payment: p.Payload.Authorization.Nonce})
		}
		return
	}
	ch := r.call("topup", k, "POST", "/v1/credits/x402/top-up", idem, body, nil)
	if ch.Status != 402 {
		return
	}
	pr, err := x402.DecodePaymentRequired(ch.Header.Get("Payment-Required"))
	if err != nil || len(pr.Accepts) == 0 {
		r.logf("topup %s: challenge %v", idem, err)
		return
	}
	payer, err := crypto.GenerateKey()
	if err != nil {
		return
	}
	p, err := x402.Sign(payer, pr.Accepts[0], x402.SignOptions{Resource: &pr.Resource})
	if err != nil {
		r.logf("topup %s: sign: %v", idem, err)
		return
	}
	hdr, err := x402.EncodeHeader(p)
	if err != nil {
		return
	}
	a.mu.Lock()
	a.payments = append(a.payments, p)
	a.mu.Unlock()
	r.c.Do(Request{Op: "topup", Method: "POST", Path: "/v1/credits/x402/top-up", Key: &k.Key, Secret: k.Secret, Idem: idem,
		Body: body, Header: map[string]string{"Payment-Signature": hdr}, Payment: p.Payload.Authorization.Nonce})
}

// order buys or sells a little on the paper venue, immediate or cancel,
// with its Idempotency-Key as its clientOrderId: acknowledged, the book
// holds exactly one order of that id.
func (r *Run) order(rng *mrand.Rand, idem string) {
	side := [2]string{"buy", "sell"}[rng.IntN(2)]
	qty := fmt.Sprintf("0.00%d", 1+rng.IntN(9))
	r.call("order", r.pickKey(rng, -1), "POST", "/v1/trading/orders", idem,
		[]byte(`{"symbol":"ETH-USD","side":"`+side+`","type":"market","qty":"`+qty+`","timeInForce":"ioc","clientOrderId":"`+idem+`"}`), nil)
}

// sendApprovalOver is the largest send (wei) the soak's wallet policy
// lets through without an approval.
const sendApprovalOver = "2000000"

// sendTo is the address a send pays, its own: what the chain holds there
// is what that send moved.
func sendTo(idem string) string {
	h := sha256.Sum256([]byte("soak-send|" + idem))
	return "0x" + hex.EncodeToString(h[:20])
}

// send pays a small amount of ETH from the account's wallet to an address
// of its own; a send over sendApprovalOver waits for an approval, decided
// by a random key of the account (its requester's lineage is refused), now
// and then rejected.
func (r *Run) send(rng *mrand.Rand, idem string) {
	acct := rng.IntN(len(r.accounts))
	a := r.accounts[acct]
	req := r.pickKey(rng, acct)
	to, amount := sendTo(idem), fmt.Sprint(1_000_000+rng.IntN(2_000_000))
	q := r.call("send.quote", req, "POST", "/v1/wallets/"+a.WalletID+"/transactions/quote", idem+"-quote",
		[]byte(`{"chainId":1337,"to":"`+to+`","asset":"ETH","amount":"`+amount+`"}`), nil)
	if q.Status/100 != 2 {
		return
	}
	a.mu.Lock()
	a.sends = append(a.sends, plannedSend{Idem: idem, QuoteID: str(q.Body["id"]), To: to, Amount: amount})
	a.mu.Unlock()
	t := r.call("send", req, "POST", "/v1/wallets/"+a.WalletID+"/transactions", idem, []byte(`{"quoteId":"`+str(q.Body["id"])+`"}`), nil)
	if approval := str(t.Body["approvalId"]); t.Status == 202 && approval != "" {
		r.decide(rng, acct, req, approval, idem)
	}
}

// decide has a random key of the account decide an approval req asked
// for: approved, one time in five rejected.
func (r *Run) decide(rng *mrand.Rand, acct int, req *mkey, approval, idem string) Answer {
	dec := r.pickKey(rng, acct)
	decision := "approve"
	if rng.IntN(5) == 0 {
		decision = "reject"
	}
	return r.c.Do(Request{Op: "approve", Method: "POST", Path: "/v1/approvals/" + approval, Key: &dec.Key, Secret: dec.Secret,
		Idem: idem + "-decide", Body: []byte(`{"decision":"` + decision + `"}`), Requester: req.ID})
}

// swap trades about one USDC of the account's wallet for WETH on the local
// chain's pool.
func (r *Run) swap(rng *mrand.Rand, idem string) {
	acct := rng.IntN(len(r.accounts))
	a := r.accounts[acct]
	req := r.pickKey(rng, acct)
	q := r.call("swap.quote", req, "POST", "/v1/swaps/quote", idem+"-quote",
		[]byte(`{"walletId":"`+a.WalletID+`","fromChainId":1337,"toChainId":1337,"fromToken":"`+r.tokens["USDC"]+`","toToken":"`+r.tokens["WETH"]+
			`","fromAmount":"`+fmt.Sprint(1_000_000+rng.IntN(1000))+`"}`), nil)
	if q.Status/100 != 2 {
		return
	}
	a.mu.Lock()
	a.swaps[str(q.Body["id"])] = idem
	a.mu.Unlock()
	r.call("swap", req, "POST", "/v1/swaps", idem, []byte(`{"quoteId":"`+str(q.Body["id"])+`"}`), nil)
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
		// The subject: a resource's id, a top-up's receipt; an invoke's
		// event has none.
		var data struct {
			ID      string `json:"id"`
			Receipt string `json:"receiptId"`
		}
		_ = json.Unmarshal(p.Data, &data)
		subject := cmp.Or(data.ID, data.Receipt)
		rc.mu.Lock()
		rc.got[acct] = append(rc.got[acct], Delivery{EventID: p.ID, Event: p.Type, Subject: subject})
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
