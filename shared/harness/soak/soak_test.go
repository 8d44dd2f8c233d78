package soak

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	bin       string
	buildErr  error
)

// runsTogether is how many of the package's runs of the real server go at
// once when -test.parallel is not given: a run spends most of its time
// waiting (for the deadline of its last life, for a redelivery of what a
// dead life held, for the sweep of what it left), so its neighbours use
// the time, and the package takes about as long as its longest run.
const runsTogether = 6

// TestMain runs the package's runs of the server side by side, and removes
// the server built for them once the tests are done.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && !explicit("test.parallel") {
		_ = f.Value.Set(strconv.Itoa(max(runsTogether, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// explicit reports whether the named flag was given on the command line.
func explicit(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// server is the soakfaults build of the local server, built once per test
// binary.
func server() (string, error) {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "soak-bin")
		if buildErr != nil {
			return
		}
		bin, buildErr = Build(context.Background(), binDir)
	})
	return bin, buildErr
}

// seedAndDuration are SOAK_SEED and SOAK_DURATION (make soak), else the
// short run make test makes.
func seedAndDuration(t *testing.T) (uint64, time.Duration) {
	seed, dur := uint64(1), 60*time.Second
	if s := os.Getenv("SOAK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if s := os.Getenv("SOAK_DURATION"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SOAK_DURATION=%q: %v", s, err)
		}
		dur = v
	}
	return seed, dur
}

// run executes cfg and judges every account: the verdicts by invariant.
func run(t *testing.T, cfg Config) (map[string][]string, Stats) {
	t.Helper()
	verdicts, stats, err := execute(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return verdicts, stats
}

// runs numbers the runs of this process, so that runs side by side name
// their resources apart.
var runs atomic.Int64

// execute is run for any goroutine: it reports a failed run instead of
// ending the test.
func execute(t *testing.T, cfg Config) (map[string][]string, Stats, error) {
	bin, err := server()
	if err != nil {
		return nil, Stats{}, err
	}
	cfg.Log = testWriter{t}
	if b := os.Getenv("SOAK_BACKEND"); b != "" {
		// Resources of this run's own, created by the server's first life.
		sfx := "soak-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + "-" + strconv.FormatInt(runs.Add(1), 36)
		cfg.Env = append(cfg.Env, "BACKEND="+b, "TABLE_NAME=t-"+sfx, "WEBHOOK_QUEUE_NAME=q-"+sfx, "KMS_KEY_ID=alias/k-"+sfx,
			"FILES_BUCKET=f-"+sfx, "ARCHIVES_BUCKET=a-"+sfx, "ARTIFACTS_BUCKET=r-"+sfx, "RUNS_QUEUE_NAME=r-"+sfx)
		// Top-ups on the AWS backend go to the local facilitator too, which
		// moves no money: the soak buys credits on either backend.
		cfg.Env = append(cfg.Env, "X402_FACILITATOR=local", "X402_PAY_TO=0x000000000000000000000000000000000000dEaD")
		cfg.Args = append(cfg.Args, "--create-resources")
		// Listing a run's audit events is many queries, each slower on an
		// emulator than on DynamoDB.
		cfg.RequestTimeout = 30 * time.Second
	}
	r := NewRun(cfg, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+5*time.Minute)
	defer cancel()
	accounts, err := r.Execute(ctx)
	if err != nil {
		return nil, Stats{}, err
	}
	out := map[string][]string{}
	for _, a := range accounts {
		for _, v := range Check(a.History, a.State) {
			out[v.Name] = append(out[v.Name], prefix(a.Name, v.Violations)...)
		}
	}
	return out, r.Stats(), nil
}

func prefix(p string, vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = p + ": " + v
	}
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestASeededRunKeepsEveryInvariant is the soak: the real server, killed
// and crashed at random points while keys of every depth charge, delegate,
// roll, upload, download, buy credits through x402, trade, send from and
// swap in the account's wallet and decide each other's approvals, and
// accounts are sliced mid-run; then each account is held to every
// invariant. A failure prints the command that runs its seed again.
func TestASeededRunKeepsEveryInvariant(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs the real server for over a minute")
	}
	t.Parallel()
	seed, dur := seedAndDuration(t)
	strict := os.Getenv("SOAK_STRICT") != ""
	verdicts, stats := run(t, Config{Seed: seed, Duration: dur, NoKills: os.Getenv("SOAK_KILLS") == "0"})
	t.Logf("seed %d, %s: %d lives, %d kills, %d crashes at a write, %d accounts sliced; operations %v",
		seed, dur, stats.Lives, stats.Kills, stats.Crashes, stats.Slices, stats.Ops)
	for _, inv := range Invariants {
		vs := verdicts[inv.Name]
		switch why, known := knownOpen[inv.Name]; {
		case len(vs) == 0:
			t.Logf("%s: held", inv.Name)
		case known && !strict:
			t.Logf("KNOWN OPEN %s (%s): %d violations:\n  %s", inv.Name, why, len(vs), strings.Join(first(vs, 20), "\n  "))
		default:
			t.Errorf("%s: %d violations:\n  %s", inv.Name, len(vs), strings.Join(first(vs, 20), "\n  "))
		}
	}
	if t.Failed() {
		t.Logf("reproduce: make soak SEED=%d DURATION=%s", seed, dur)
	}
}

// knownOpen are the invariants this soak has found broken and that are not
// fixed yet, each with the reason: make test reports their violations
// without failing, make soak (SOAK_STRICT) fails on them like on any
// other. The list is the product's known defects; docs/status.md says the
// same.
var knownOpen = map[string]string{}

// A life that dies right after a charged call's answer is stored, before
// the call's audit event is written, leaves the charge audited all the
// same: the retry's replay writes the call's event. Every life of this run
// crashes there: right after its second write of an idempotency record,
// the first fresh call's claim and then its stored answer (a replay of the
// dead life's call writes none).
func TestACrashAfterAChargedAnswerIsStoredLeavesItsChargeAudited(t *testing.T) {
	if testing.Short() {
		t.Skip("the run drives the real server for half a minute")
	}
	t.Parallel()
	verdicts, stats := run(t, Config{Seed: 3, Duration: 10 * time.Second, KillEvery: time.Hour, CrashMatch: "idem#", CrashAfter: 2, UntilCrashes: 1,
		Accounts: 1, Workers: 1, Only: []string{"invoke"}})
	t.Logf("%d lives, %d crashes, %v", stats.Lives, stats.Crashes, stats.Ops)
	if stats.Crashes == 0 {
		t.Fatal("no life crashed: the run tested nothing")
	}
	for _, inv := range Invariants {
		if vs := verdicts[inv.Name]; len(vs) > 0 {
			t.Errorf("%s: %s", inv.Name, strings.Join(first(vs, 5), "; "))
		}
	}
}

// A life that dies right after an order, a send or a swap committed with
// its credit hold, before its answer was stored, leaves the charge audited
// all the same: the retry finds what the dead attempt made and writes the
// dead attempt's event, named by the hold, with the hold. Every life of this run crashes right after its first
// write of a hold; the seed has the three workers start with an order, a
// swap and a send.
func TestACrashAfterAnOrderSendOrSwapCommitsLeavesItsChargeAudited(t *testing.T) {
	if testing.Short() {
		t.Skip("the run drives the real server for half a minute")
	}
	t.Parallel()
	verdicts, stats := run(t, Config{Seed: 8, Duration: 15 * time.Second, KillEvery: time.Hour, CrashMatch: "hold#", CrashWithin: 1, UntilCrashes: 1,
		Accounts: 1, Workers: 3, Only: []string{"order", "send", "swap"}})
	t.Logf("%d lives, %d crashes, %v", stats.Lives, stats.Crashes, stats.Ops)
	if stats.Crashes == 0 {
		t.Fatal("no life crashed: the run tested nothing")
	}
	for _, inv := range Invariants {
		if _, known := knownOpen[inv.Name]; len(verdicts[inv.Name]) > 0 && !known {
			t.Errorf("%s: %s", inv.Name, strings.Join(first(verdicts[inv.Name], 5), "; "))
		}
	}
}

// A life that dies right after a top-up's credit committed, before its
// answer and its credits.topped_up event, leaves the top-up announced all
// the same: the retry of the same call answers the top-up again rather
// than refusing its payment as used, and publishes its event. Every life
// of this run crashes right after its third write of a payment record:
// the first top-up's credit, then in later lives the other steps of a
// purchase (its record, its settlement, its recorded result).
func TestACrashAfterATopUpIsCreditedLeavesItsEventDelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("the run drives the real server for half a minute")
	}
	t.Parallel()
	verdicts, stats := run(t, Config{Seed: 5, Duration: 12 * time.Second, KillEvery: time.Hour, CrashMatch: "x402pay#", CrashAfter: 3, UntilCrashes: 1,
		Accounts: 1, Workers: 1, Only: []string{"topup"}})
	t.Logf("%d lives, %d crashes, %v", stats.Lives, stats.Crashes, stats.Ops)
	if stats.Crashes == 0 {
		t.Fatal("no life crashed: the run tested nothing")
	}
	for _, inv := range Invariants {
		if vs := verdicts[inv.Name]; len(vs) > 0 {
			t.Errorf("%s: %s", inv.Name, strings.Join(first(vs, 5), "; "))
		}
	}
}

// A holder that outlives its credit hold (a starved process: the sweep
// released the hold while the holder still ran) charges its call once and
// audits it once: its capture finds the hold released and answers a 503,
// and the client's retry with the same key charges the call, or it finds
// the hold captured by a retry that took it over and answers that charge.
// Every third capture of the run is held back past the sweep of its hold
// (SOAK_STALL); each such answer comes late, which is what the bound on
// answers rightly reports, and every other invariant holds.
func TestAHolderThatOutlivesItsHoldChargesItsCallOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("the run drives the real server for half a minute")
	}
	t.Parallel()
	verdicts, stats := run(t, Config{Seed: 11, Duration: 12 * time.Second, NoKills: true, Accounts: 1, Workers: 2,
		Only: []string{"invoke"}, Env: []string{"SOAK_STALL=capture"}})
	t.Logf("%d lives, operations %v, answers %v", stats.Lives, stats.Ops, stats.Answers)
	if stats.Answers[503] == 0 {
		t.Fatal("no capture found its hold released: the run tested nothing")
	}
	for _, inv := range Invariants {
		if vs := verdicts[inv.Name]; len(vs) > 0 && inv.Name != "bounds" {
			t.Errorf("%s: %s", inv.Name, strings.Join(first(vs, 5), "; "))
		}
	}
}

func first(vs []string, n int) []string {
	if len(vs) > n {
		return append(vs[:n:n], fmt.Sprintf("… and %d more", len(vs)-n))
	}
	return vs
}

// Each fault the soakfaults build can inject breaks one invariant, and the
// checker reports it under that invariant's name; the same run without
// the fault keeps it. This is the proof that each checker can fail.
func TestTheCheckerReportsEachInjectedFault(t *testing.T) {
	if testing.Short() {
		t.Skip("each case runs the real server for half a minute")
	}
	t.Parallel()
	for _, tc := range []struct {
		fault, invariant string
		cfg              Config
	}{
		// A server that records no audit event leaves every answered
		// request without one.
		{"drop-audit", "audit", Config{Duration: 3 * time.Second, NoKills: true, Only: []string{"invoke", "balance"}}},
		// A server that loses its outbox loses the event of a write when
		// it dies after the commit and before the fan-out: each life here
		// crashes right after one of its first outbox writes.
		{"drop-outbox", "events", Config{Duration: 10 * time.Second, KillEvery: time.Hour, CrashMatch: "evo#", CrashWithin: 3, UntilCrashes: 1,
			Only: []string{"key", "upload"}, DeliveryWait: 20 * time.Second}},
		// A server that skips the marker of a call's hold takes the hold
		// twice when the call is retried after its account was sliced: a
		// life crashes right after its first call hold on the quiet
		// account (the write that carries the marker, hold#acct_…), and
		// the account is sliced before the dead call is retried. The
		// sweep is held off past the run, so that the dead call's hold is
		// still there when its retry comes, rather than released by then
		// and rightly taken anew.
		{"skip-hold-marker", "money", Config{Duration: 10 * time.Second, KillEvery: time.Hour, CrashMatch: "hold#acct_", CrashWithin: 1, Accounts: 1, UntilCrashes: 1,
			Only: []string{"invoke"}, SliceAfterCrash: true, Env: []string{"HOLD_GRACE=10m"}}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Seed = 7
			// The same run without the fault goes beside it, on its own
			// data directory, waiting as long as a queue message a dead
			// life held may take to come back.
			clean := tc.cfg
			clean.DeliveryWait = 0
			var kept map[string][]string
			var keptErr error
			var wg sync.WaitGroup
			wg.Go(func() { kept, _, keptErr = execute(t, clean) })
			defer wg.Wait()
			tc.cfg.Fault = tc.fault
			broken, stats := run(t, tc.cfg)
			t.Logf("with %s: %d lives, %d crashes, %d slices, %v", tc.fault, stats.Lives, stats.Crashes, stats.Slices, stats.Ops)
			if len(broken[tc.invariant]) == 0 {
				t.Fatalf("with %s the checker found nothing wrong with %s", tc.fault, tc.invariant)
			}
			t.Logf("%s reported: %s", tc.invariant, strings.Join(first(broken[tc.invariant], 3), "; "))
			// Without the fault, its operations reach no known open
			// defect: the invariant the fault breaks must hold, known open
			// or not.
			wg.Wait()
			if keptErr != nil {
				t.Fatalf("without %s: %v", tc.fault, keptErr)
			}
			for _, inv := range Invariants {
				vs := kept[inv.Name]
				if _, known := knownOpen[inv.Name]; len(vs) > 0 && (!known || inv.Name == tc.invariant) {
					t.Errorf("without %s, %s failed: %s", tc.fault, inv.Name, strings.Join(first(vs, 5), "; "))
				}
			}
		})
	}
}
