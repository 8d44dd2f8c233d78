// Package bench measures what a request costs, in time, storage round trips
// and dollars (docs/benchmarks.md): `go run ./functions/local bench`, which `make bench`
// runs against moto. It loads the local server with an authenticated,
// limited read, its unauthenticated /health and a no-op handler mounted
// beside it, counts the storage
// round trips of that read and of an idempotent write at the SDK, times the
// cold start of every real function binary under AWS's runtime interface
// emulator (lambdarie), sizes the
// deployed bootstraps, and prices a million reads from a dated price table.
//
// It reports and never judges: no figure makes it fail, and the targets it
// prints are there to be compared with, not enforced. It must never touch a
// real AWS account: storage is counted only against a loopback emulator.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"platformapi/shared/app"
	"platformapi/shared/base/diskuse"
	"platformapi/shared/base/jsonlog"
)

// Targets (docs/benchmarks.md), printed beside the figures.
const (
	targetOverheadRatio  = 1.5
	targetOpsPerRead     = 2
	targetOpsPerWrite    = 4
	targetColdStartMs    = 30
	targetBootstrapMB    = 15
	targetCostPerMillion = 2.50
	targetAuthCPUMicros  = 100
)

// options are the command-line flags. The defaults keep the whole run, with
// a warm build cache, well under three minutes on two shared cores.
type options struct {
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	coldStarts  int
	samples     int
	rounds      int
	// rate, above zero, makes the server-alone loads open loops of that
	// many requests a second.
	rate  float64
	trace string
	// serverAlone runs only the server-alone loads (alone.go), with CPU
	// profiles of the first round's (cpuProfile.<load>) when it is set.
	serverAlone bool
	cpuProfile  string
	// serve, serveDir and serveCPUs make the process a child server of
	// the server-alone run.
	serve, serveDir, serveCPUs string
}

// measurements are the raw results the report and the table are made of.
type measurements struct {
	load       map[string]result // by load name (loadOrder), merged over the rounds
	loadRun    loadRun
	storage    storageResult
	starts     map[string][]time.Duration // every function's init durations, sorted
	firsts     map[string][]time.Duration // every function's first-invocation durations, sorted
	sizes      map[string]int64           // every function's bootstrap
	sizeSource string
	coldNote   string // what the cold starts ran against
	// firstStart and dataDirBytes are the local server's first start on
	// an empty data directory: until /health answered, and what it left.
	firstStart   time.Duration
	dataDirBytes int64
}

// Report is the benchmark's result, printed as the last line of output:
// first the figures that have targets, then their breakdowns.
type Report struct {
	// RPSBare is the bare handler: GET /health on the same server, no key,
	// no storage (the baseline the figures' targets were set against).
	RPSBare float64 `json:"rpsBare"`
	// RPSAuthenticated is the authenticated read with auditing off;
	// AuditFigures holds it audited.
	RPSAuthenticated float64 `json:"rpsAuthenticated"`
	OverheadRatio    float64 `json:"overheadRatio"` // p50 authenticated / p50 bare
	P50Micros        float64 `json:"p50Micros"`     // authenticated read
	P99Micros        float64 `json:"p99Micros"`
	P999Micros       float64 `json:"p999Micros"`
	// ReadStalls are the audited read's stalls (its worst round's):
	// schedLatencyP99Micros, gcPauseP99Micros, journalSyncP99Micros, ...
	ReadStalls                   stallFigures `json:"readStalls"`
	StorageOpsPerRead            float64      `json:"storageOpsPerRead"`
	StorageOpsPerIdempotentWrite float64      `json:"storageOpsPerIdempotentWrite"`
	ColdStartMillis              float64      `json:"coldStartMillis"` // median of every start of every function
	BootstrapBytes               int64        `json:"bootstrapBytes"`  // the largest bootstrap
	CostPerMillionRequestsUsd    float64      `json:"costPerMillionRequestsUsd"`

	// CPUMicrosPerRead is the process's CPU time per authenticated read
	// under load (client included), audited as deployed.
	CPUMicrosPerRead float64 `json:"cpuMicrosPerRead"`
	// AuthCPUMicrosPerRequest is the like-for-like figure of authentication: the CPU
	// per unaudited authenticated read minus the CPU per bare request, what
	// authentication, the limit and the handler add (the client's share and
	// the server's edge, which /health pays too, cancel out).
	AuthCPUMicrosPerRequest float64 `json:"authCpuMicrosPerRequest"`
	// OverheadRatioWithoutAudit is overheadRatio with auditing off: what
	// authentication and the limit alone add to the bare handler's p50.
	OverheadRatioWithoutAudit float64 `json:"overheadRatioWithoutAudit"`
	// Load holds every load run's figures by name: noop, bare, read,
	// readWithoutAudit, idempotentWrite, idempotentWriteWithoutAudit.
	Load map[string]loadFigures `json:"load"`

	BareP50Micros float64 `json:"bareP50Micros"`
	BareP99Micros float64 `json:"bareP99Micros"`
	// RPSNoop and NoopP50Micros are a handler that only writes its answer,
	// mounted beside the API on the same listener: net/http and the load
	// client alone, below what any request of the API can cost.
	// OverheadRatioAuditedVsNoop is the audited read's p50 over its p50.
	RPSNoop                    float64 `json:"rpsNoop"`
	NoopP50Micros              float64 `json:"noopP50Micros"`
	OverheadRatioAuditedVsNoop float64 `json:"overheadRatioAuditedVsNoop"`
	Errors                     int     `json:"errors"` // non-200 answers under load
	// PlainNetHTTP is a trivial handler on a net/http server of its own in
	// the same process: what any Go HTTP server costs, the floor the API's
	// edge (GET /health) is compared with.
	PlainNetHTTP loadFigures `json:"plainNetHTTP"`
	// DataDirBytesPerMillionAudited is the data directory's growth (as du
	// counts it, the flusher settled) per million audited reads.
	DataDirBytesPerMillionAudited float64 `json:"dataDirBytesPerMillionAudited"`
	// Rounds is how many rounds the loads alternated in; RatioSpread each
	// ratio's least and greatest over them (the figures above are over
	// every round's requests together).
	Rounds      int               `json:"rounds"`
	RatioSpread map[string]spread `json:"ratioSpread"`
	// Pinning says which CPUs the server and the load generator ran on; ""
	// when they shared them (one CPU, or not Linux).
	Pinning string `json:"pinning"`

	StorageOpsPerIdempotentReplay float64 `json:"storageOpsPerIdempotentReplay"`
	// StorageOpsPerReadWithoutAudit and CostPerMillionReadsWithoutAuditUsd
	// are the read with auditing off: the price of the audit event.
	StorageOpsPerReadWithoutAudit      float64 `json:"storageOpsPerReadWithoutAudit"`
	CostPerMillionReadsWithoutAuditUsd float64 `json:"costPerMillionReadsWithoutAuditUsd"`
	// Storage holds each counted request's round trips and request units
	// per DynamoDB operation.
	Storage       map[string]storageCase `json:"storage"`
	StorageSource string                 `json:"storageSource"`

	ColdStartMillisByFunction map[string]float64 `json:"coldStartMillisByFunction"`
	BootstrapBytesByFunction  map[string]int64   `json:"bootstrapBytesByFunction"`

	CostBreakdownUsd Cost   `json:"costBreakdownUsd"`
	CostDominatedBy  string `json:"costDominatedBy"`
	// CostPerMillionIdempotentWritesUsd prices the counted POST /v1/projects
	// alike, with the read's p50 standing in for its duration.
	CostPerMillionIdempotentWritesUsd float64 `json:"costPerMillionIdempotentWritesUsd"`
	PricesDate                        string  `json:"pricesDate"`
	PricesRegion                      string  `json:"pricesRegion"`

	AuditFigures

	// Ceilings are the capacity model's requests a second for each class
	// under DynamoDB's per-partition-key limits (ceilingPerPartition of
	// each case in Capacity; see docs/storage-design.md).
	Ceilings map[string]float64      `json:"ceilings"`
	Capacity map[string]capacityCase `json:"capacity"`

	// DataDirBytesAfterStart is the local server's data directory after its
	// first start (allocated bytes); ServerStartMillis that start until
	// /health answered.
	DataDirBytesAfterStart int64   `json:"dataDirBytesAfterStart"`
	ServerStartMillis      float64 `json:"serverStartMillis"`

	Concurrency int     `json:"concurrency"`
	LoadSeconds float64 `json:"loadSeconds"` // per endpoint
	Machine     string  `json:"machine"`
	Date        string  `json:"date"`
}

// Main runs every measurement and writes the table, then the report as one
// JSON line. Progress goes to stderr so that the report stays the last line
// of w.
func Main(w io.Writer, args []string) error {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured load per endpoint")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load per endpoint before it")
	fs.IntVar(&o.concurrency, "concurrency", 8, "requests in flight at once")
	fs.IntVar(&o.coldStarts, "cold-starts", 5, "starts of every function")
	fs.IntVar(&o.samples, "samples", 20, "requests counted for each storage figure")
	fs.StringVar(&o.trace, "trace", "", "write a runtime/trace of the first round's audited read load to this file (with -server-alone, the API child's)")
	fs.IntVar(&o.rounds, "rounds", 4, "rounds the loads alternate in (the duration is split between them)")
	fs.Float64Var(&o.rate, "rate", 0, "with -server-alone, send each load's requests at this many a second whatever the answers (open loop, over at most -concurrency connections), each latency counted from the request's due time; closed loop when 0")
	fs.BoolVar(&o.serverAlone, "server-alone", false, "only load servers that are processes of their own, and report their CPU per request (make bench-server)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "with -server-alone, write a CPU profile of each server process over the first round's loads to this path with the load's name added (FILE.read, FILE.bare, ...)")
	fs.StringVar(&o.serve, "serve", "", "serve as a child of -server-alone: api or plain")
	fs.StringVar(&o.serveDir, "serve-dir", "", "the child's data directory")
	fs.StringVar(&o.serveCPUs, "serve-cpus", "", "the CPUs the child runs on (\"0,2\"), all when empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.serve != "" {
		return serveChild(context.Background(), o.serve, o.serveDir, o.serveCPUs, os.Stdin, w)
	}
	if o.duration <= 0 || o.warmup < 0 || o.concurrency < 1 || o.coldStarts < 1 || o.samples < 1 || o.rounds < 1 {
		return errors.New("bench: durations must be positive and counts at least 1")
	}
	if o.rate < 0 || (o.rate > 0 && !o.serverAlone) {
		return errors.New("bench: -rate is a positive number of requests a second, with -server-alone")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.serverAlone {
		return mainAlone(ctx, w, o, o.cpuProfile)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "platformapi-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	progress := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
	emulator := emulatorEndpoint()
	groups := functionGroups(root)

	var m measurements
	env, skipped, cleanup, err := coldStartEnv(ctx, emulator)
	if err != nil {
		return err
	}
	defer cleanup()
	started := slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return slices.Contains(skipped, g) })
	m.coldNote = "AWS backend against " + emulator + ", with the signing secrets made there"
	if emulator == "" {
		m.coldNote = fmt.Sprintf("no emulator, so AWS endpoints that init does not call; %v left out: they need Secrets Manager (run through .ci/with-moto)", skipped)
	}
	progress("building %d functions for the host and starting each %d times", len(started), o.coldStarts)
	m.starts, m.firsts, err = coldStarts(ctx, root, dir, started, o.coldStarts, env)
	if err != nil {
		return err
	}
	progress("sizing the linux/arm64 bootstraps")
	m.sizes, m.sizeSource, err = bootstraps(ctx, root, dir, groups)
	if err != nil {
		return err
	}
	progress("starting the local server once on an empty data directory")
	m.firstStart, m.dataDirBytes, err = firstStart(ctx, root, dir)
	if err != nil {
		return err
	}
	progress("loading the local server: %s per endpoint at concurrency %d", o.duration, o.concurrency)
	m.loadRun, err = measureLoad(ctx, filepath.Join(dir, "load"), o)
	if err != nil {
		return err
	}
	m.load = m.loadRun.merged
	if emulator != "" {
		progress("counting storage round trips against %s", emulator)
	} else {
		progress("counting storage round trips on embedded storage (no loopback AWS_ENDPOINT_URL)")
	}
	m.storage, err = measureStorage(ctx, dir, emulator, o.samples)
	if err != nil {
		return err
	}

	r := report(o, m)
	writeTable(w, r, o, m)
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", line)
	return err
}

// The load runs, in the order the first round runs them.
const (
	loadPlain          = "plainNetHTTP"
	loadBare           = "bare"
	loadNoop           = "noop"
	loadRead           = "read"
	loadReadNoAudit    = "readWithoutAudit"
	loadWrite          = "idempotentWrite"
	loadWriteNoAudit   = "idempotentWriteWithoutAudit"
	readLabel          = "GET " + balancePath + " (depth-3 key, * limit)"
	writeLabel         = "POST " + projectsPath + " (new Idempotency-Key)"
	withoutAuditSuffix = ", audit off"
)

var loadOrder = []string{loadPlain, loadNoop, loadBare, loadRead, loadReadNoAudit, loadWrite, loadWriteNoAudit}

// loadRun is every load's result merged over the rounds, each round's own,
// and what the audited reads left on disk.
type loadRun struct {
	merged map[string]result
	rounds []map[string]result
	// auditedGrowth is the data directory's growth over the audited read
	// runs (each flushed), auditedReads the requests they answered.
	auditedGrowth int64
	auditedReads  int
	pinning       string // how the load was kept apart from the server, "" when it was not
}

// measureLoad serves the API on embedded storage twice, as deployed and with
// auditing off, with a no-op handler in the same http.Server and a plain
// net/http server of its own beside them, and loads each endpoint in turn at
// the same concurrency. One after the other rather than mixed: on two cores,
// mixed load would make each endpoint's figure depend on the other's. The
// loads run in rounds, every other one in reverse order (audited, audit
// off, audit off, audited, ...), so that a drift of the machine's load
// weighs on both sides of every ratio alike; each round's ratios are
// reported, with their spread.
func measureLoad(ctx context.Context, dataDir string, o options) (loadRun, error) {
	run := loadRun{merged: map[string]result{}}
	rt, err := app.Open(ctx, app.Config{Backend: "embedded", DataDir: dataDir})
	if err != nil {
		return run, err
	}
	defer rt.Close()
	// Requests are logged as in production, only not written anywhere: the
	// formatting is part of a request's cost, the output would drown the
	// table.
	logger := slog.New(jsonlog.New(io.Discard, nil))
	audited, err := rt.NewServer(logger, nil)
	if err != nil {
		return run, err
	}
	audit := rt.Audit
	rt.Audit = nil
	unaudited, err := rt.NewServer(logger, nil)
	rt.Audit = audit
	if err != nil {
		return run, err
	}
	secret, err := leafKey(apiClient{h: audited}, rt.Signer)
	if err != nil {
		return run, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+noopPath, noop)
	mux.Handle("/", audited)
	base, stop, err := serve(mux)
	if err != nil {
		return run, err
	}
	defer stop()
	unauditedBase, stopUnaudited, err := serve(unaudited)
	if err != nil {
		return run, err
	}
	defer stopUnaudited()
	plainBase, stopPlain, err := serve(http.HandlerFunc(noop))
	if err != nil {
		return run, err
	}
	defer stopPlain()

	auth := http.Header{"Authorization": {"Bearer " + secret}}
	// Every write creates a project under a fresh Idempotency-Key: the
	// claim, the project, the stored answer and the limit window, all of it.
	write := func(prefix string) func(int64, http.Header) string {
		return func(i int64, h http.Header) string {
			h.Set("Idempotency-Key", fmt.Sprintf("bench-load-%s-%09d", prefix, i))
			h.Set("Content-Type", "application/json")
			return fmt.Sprintf(`{"name":"load %s %d"}`, prefix, i)
		}
	}
	loads := map[string]load{
		loadPlain:        {url: plainBase + noopPath, header: http.Header{}},
		loadNoop:         {url: base + noopPath, header: http.Header{}},
		loadBare:         {url: base + "/health", header: http.Header{}},
		loadRead:         {url: base + balancePath, header: auth},
		loadReadNoAudit:  {url: unauditedBase + balancePath, header: auth},
		loadWrite:        {method: http.MethodPost, url: base + projectsPath, header: auth, body: write("a"), want: http.StatusCreated},
		loadWriteNoAudit: {method: http.MethodPost, url: unauditedBase + projectsPath, header: auth, body: write("u"), want: http.StatusCreated},
	}
	if pin, ok := newPinning(); ok {
		pin.confineServer()
		defer pin.release()
		run.pinning = pin.describe()
		for name, l := range loads {
			l.pin = pin
			loads[name] = l
		}
	}
	if err := warm(ctx, loads, o.concurrency, o.warmup); err != nil {
		return run, err
	}
	each := o.duration / time.Duration(o.rounds)
	for round := range o.rounds {
		order := inRound(loadOrder, round)
		got := map[string]result{}
		for _, name := range order {
			// Start the measured run from a collected heap, so one run does
			// not pay for the garbage of the one before.
			runtime.GC()
			audit.LossWindow() // from here on
			before, err := diskuse.Allocated(dataDir)
			if err != nil {
				return run, err
			}
			probe := startStalls(audit.Timings())
			stopTrace := func() error { return nil }
			if name == loadRead && round == 0 && o.trace != "" {
				if stopTrace, err = startTrace(o.trace); err != nil {
					return run, err
				}
			}
			res := loads[name].run(ctx, each)
			if err := stopTrace(); err != nil {
				return run, err
			}
			res.Stalls = probe.stop()
			res.AuditTail = audit.LossWindow()
			if err := ctx.Err(); err != nil {
				return run, err
			}
			if name == loadRead {
				if err := audit.Flush(ctx); err != nil {
					return run, err
				}
				after, err := diskuse.Allocated(dataDir)
				if err != nil {
					return run, err
				}
				run.auditedGrowth += after - before
				run.auditedReads += len(res.Latencies)
			}
			got[name] = res
		}
		run.rounds = append(run.rounds, got)
	}
	for _, name := range loadOrder {
		var m result
		for _, got := range run.rounds {
			m = m.merge(got[name])
		}
		run.merged[name] = m
	}
	return run, nil
}

// noop only writes its answer: net/http and the load client alone.
func noop(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

// serve serves h on a fresh loopback port and returns its base URL.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func report(o options, m measurements) Report {
	bare, authed, st := m.load[loadBare], m.load[loadRead], m.storage
	rru, wru := st.Read.Units()
	irru, iwru := st.Ingest.Units()
	p50 := authed.Percentile(50)
	// The audited read's bill includes its event's storing off the path.
	cost := USEast1.PerMillion(Usage{ReadUnits: rru + irru, WriteUnits: wru + iwru, Duration: p50, LogBytes: st.LogBytes})
	wrru, wwru := st.Write.Units()
	writeCost := USEast1.PerMillion(Usage{ReadUnits: wrru, WriteUnits: wwru, Duration: p50})
	nrru, nwru := st.ReadNoAudit.Units()
	noAuditCost := USEast1.PerMillion(Usage{ReadUnits: nrru, WriteUnits: nwru, Duration: p50})
	r := Report{
		StorageOpsPerReadWithoutAudit:      round(st.ReadNoAudit.Total(), 2),
		CostPerMillionReadsWithoutAuditUsd: round(noAuditCost.Total(), 4),
		RPSBare:                            round(bare.RPS(), 0),
		RPSAuthenticated:                   round(m.load[loadReadNoAudit].RPS(), 0),
		OverheadRatio:                      round(ratio(p50, bare.Percentile(50)), 2),
		P50Micros:                          micros(p50),
		P99Micros:                          micros(authed.Percentile(99)),
		P999Micros:                         micros(authed.Percentile(99.9)),
		ReadStalls:                         stallsFigures(authed.Stalls),
		StorageOpsPerRead:                  round(st.Read.Total(), 2),
		StorageOpsPerIdempotentWrite:       round(st.Write.Total(), 2),
		BareP50Micros:                      micros(bare.Percentile(50)),
		BareP99Micros:                      micros(bare.Percentile(99)),
		RPSNoop:                            round(m.load[loadNoop].RPS(), 0),
		NoopP50Micros:                      micros(m.load[loadNoop].Percentile(50)),
		OverheadRatioAuditedVsNoop:         round(ratio(p50, m.load[loadNoop].Percentile(50)), 2),
		CPUMicrosPerRead:                   micros(authed.CPUPerRequest()),
		AuthCPUMicrosPerRequest:            round(float64(m.load[loadReadNoAudit].CPUPerRequest()-bare.CPUPerRequest())/float64(time.Microsecond), 0),
		OverheadRatioWithoutAudit:          round(ratio(m.load[loadReadNoAudit].Percentile(50), bare.Percentile(50)), 2),
		Load:                               map[string]loadFigures{},
		StorageOpsPerIdempotentReplay:      round(st.Replay.Total(), 2),
		Storage: map[string]storageCase{"read": st.Read, "readAuditPut": st.ReadPut, "readWithoutAudit": st.ReadNoAudit,
			"idempotentWrite": st.Write, "idempotentReplay": st.Replay, "auditIngestPerEvent": st.Ingest},
		AuditFigures:                      auditFigures(m),
		Capacity:                          st.Capacity,
		Ceilings:                          map[string]float64{},
		StorageSource:                     st.Source,
		ColdStartMillisByFunction:         map[string]float64{},
		BootstrapBytesByFunction:          m.sizes,
		CostPerMillionRequestsUsd:         round(cost.Total(), 4),
		CostBreakdownUsd:                  roundCost(cost),
		CostDominatedBy:                   cost.Dominant().Name,
		CostPerMillionIdempotentWritesUsd: round(writeCost.Total(), 4),
		PricesDate:                        USEast1.Date,
		PricesRegion:                      USEast1.Region,
		DataDirBytesAfterStart:            m.dataDirBytes,
		PlainNetHTTP:                      figures(m.load[loadPlain]),
		Rounds:                            len(m.loadRun.rounds),
		RatioSpread:                       ratioSpread(m.loadRun.rounds),
		Pinning:                           m.loadRun.pinning,
		ServerStartMillis:                 millis(m.firstStart),
		Concurrency:                       o.concurrency,
		LoadSeconds:                       o.duration.Seconds(),
		Machine:                           fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
		Date:                              time.Now().UTC().Format(time.RFC3339),
	}
	for name, c := range st.Capacity {
		r.Ceilings[name] = c.CeilingPerPartition
	}
	if n := m.loadRun.auditedReads; n > 0 {
		r.DataDirBytesPerMillionAudited = round(float64(m.loadRun.auditedGrowth)/float64(n)*1e6, 0)
	}
	for name, res := range m.load {
		r.Load[name] = figures(res)
		r.Errors += res.Errors
	}
	var all []time.Duration
	for g, d := range m.starts {
		r.ColdStartMillisByFunction[g] = millis(percentile(d, 50))
		all = append(all, d...)
	}
	slices.Sort(all)
	r.ColdStartMillis = millis(percentile(all, 50))
	for _, n := range m.sizes {
		r.BootstrapBytes = max(r.BootstrapBytes, n)
	}
	return r
}

func writeTable(w io.Writer, r Report, o options, m measurements) {
	authed, st, starts, sizes := m.load[loadRead], m.storage, m.starts, m.sizes
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }

	p("Platform API benchmark, %s, %s", r.Date, r.Machine)
	p("")
	p("Load: local server on embedded storage, closed loop, concurrency %d, %s per endpoint after %s warm-up", o.concurrency, o.duration, o.warmup)
	if m.loadRun.pinning != "" {
		p("pinned: %s", m.loadRun.pinning)
	}
	p("endpoint\trequests\terrors\treq/s\tp50\tp90\tp99\tp99.9\tmax\tCPU/request")
	labels := map[string]string{
		loadPlain: "GET " + noopPath + " (plain net/http server, trivial handler)", loadNoop: "GET " + noopPath + " (no-op handler, same listener)", loadBare: "GET /health (bare: no key, same server)", loadRead: readLabel, loadReadNoAudit: readLabel + withoutAuditSuffix,
		loadWrite: writeLabel, loadWriteNoAudit: writeLabel + withoutAuditSuffix,
	}
	var all []result
	for _, name := range loadOrder {
		res := m.load[name]
		lat := res.Latencies
		p("%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s", labels[name], len(lat), res.Errors, res.RPS(),
			us(percentile(lat, 50)), us(percentile(lat, 90)), us(percentile(lat, 99)), us(percentile(lat, 99.9)), us(percentile(lat, 100)), us(res.CPUPerRequest()))
		all = append(all, res)
	}
	p("overheadRatio (p50 read / p50 bare)\t%.2f\t(target ≤ %.1f)", r.OverheadRatio, targetOverheadRatio)
	p("first start of the local server (empty data directory)\t%.0f ms to /health\t%.1f MB on disk after", r.ServerStartMillis, float64(r.DataDirBytesAfterStart)/1e6)
	p("overheadRatioWithoutAudit (p50 read, audit off / p50 bare)\t%.2f", r.OverheadRatioWithoutAudit)
	p("authCpuMicrosPerRequest (CPU/request: read, audit off, minus bare)\t%.0f µs\t(target ≤ %d)", r.AuthCPUMicrosPerRequest, targetAuthCPUMicros)
	p("CPU/request is the whole process's CPU time (server and load client) over the requests answered.")
	p("")
	stallTable(p, "stalls during each load (the worst round's; µs)", loadOrder, labels, func(name string) stallFigures { return r.Load[name].stallFigures })
	p("")
	p("ratios over %d alternating rounds (audited, audit off, audit off, audited, ...): all rounds' requests, [least, greatest of one round]", r.Rounds)
	for _, name := range spreadOrder {
		sp := r.RatioSpread[name]
		p("%s\t%.2f\t[%.2f, %.2f]", name, sp.All, sp.Min, sp.Max)
	}
	p("dataDirBytesPerMillionAudited (data directory growth over the audited reads, flushed)\t%.0f\t(%.0f bytes a request)", r.DataDirBytesPerMillionAudited, r.DataDirBytesPerMillionAudited/1e6)
	if msg := firstError(all...); msg != "" {
		p("first error under load: %s", msg)
	}
	p("")

	p("Storage per request: %s; %d requests each after one warm-up", st.Source, o.samples)
	p("request\toperation\tround trips\titems\tRRU\tWRU")
	for _, c := range []struct {
		name   string
		c      storageCase
		target string
	}{
		{"GET " + balancePath, st.Read, fmt.Sprintf("(target ≤ %d; the event is a log line)", targetOpsPerRead)},
		{"GET " + balancePath + " (event as PutItem)", st.ReadPut, "(the event on the request path, as before the log line)"},
		{"audit-ingest, per event (off the path)", st.Ingest, ""},
		{"GET " + balancePath + " (audit off)", st.ReadNoAudit, fmt.Sprintf("(target ≤ %d)", targetOpsPerRead)},
		{"POST " + projectsPath + " (new key)", st.Write, fmt.Sprintf("(target ≤ %d)", targetOpsPerWrite)},
		{"POST " + projectsPath + " (replay)", st.Replay, ""},
	} {
		for _, op := range c.c.Ops() {
			u := c.c.Usage[op]
			p("%s\t%s\t%g\t%g\t%g\t%g", c.name, op, round(c.c.RoundTrips[op], 2), round(u.Items, 2), round(u.ReadUnits, 2), round(u.WriteUnits, 2))
		}
		rru, wru := c.c.Units()
		p("%s\ttotal\t%g\t\t%g\t%g\t%s", c.name, round(c.c.Total(), 2), round(rru, 2), round(wru, 2), c.target)
	}
	p("Items and request units are counted at the item-store port with DynamoDB's size rules; round trips include retries.")
	p("")

	writeAuditTable(p, r)
	writeCapacityTable(p, r)

	p("Cold start: init (the emulator's INIT REPORT) and the first request (its REPORT Duration, init included) under AWS's runtime interface emulator, host build with the Makefile's flags, %d starts each", o.coldStarts)
	p("(%s)", m.coldNote)
	p("function\tinit median\tmin\tmax\tfirst request median\tbootstrap (linux/arm64)")
	groups := make([]string, 0, len(starts))
	for g := range starts {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		d := starts[g]
		p("%s\t%s\t%s\t%s\t%s\t%.1f MB", g, ms(percentile(d, 50)), ms(d[0]), ms(d[len(d)-1]), ms(percentile(m.firsts[g], 50)), float64(sizes[g])/1e6)
	}
	p("coldStartMillis (median of all %d starts)\t%.1f ms\t(target ≤ %d)", o.coldStarts*len(starts), r.ColdStartMillis, targetColdStartMs)
	p("bootstrapBytes (largest)\t%d\t(%.1f MB; target ≤ %d MB; %s)", r.BootstrapBytes, float64(r.BootstrapBytes)/1e6, targetBootstrapMB, m.sizeSource)
	p("")

	rru, wru := st.Read.Units()
	wrru, wwru := st.Write.Units()
	p("Cost of a million authenticated reads, %s list prices recorded %s", USEast1.Region, USEast1.Date)
	_, iwru := st.Ingest.Units()
	p("(%g RRU + %g WRU per read, %g WRU and %.0f log bytes per audit event; Lambda arm64 at %d MB for the measured p50 of %s, billed per ms)",
		round(rru, 2), round(wru, 2), round(iwru, 2), st.LogBytes, USEast1.LambdaMemoryMB, us(authed.Percentile(50)))
	cost := r.CostBreakdownUsd
	total := cost.Total()
	p("line item\tUSD\tshare")
	for _, l := range cost.Lines() {
		p("%s\t%.4f\t%.0f%%", l.Name, l.USD, 100*l.USD/total)
	}
	p("costPerMillionRequestsUsd\t%.4f\t(target ≤ %.2f); dominated by %s", r.CostPerMillionRequestsUsd, targetCostPerMillion, r.CostDominatedBy)
	p("the same read with auditing off\t%.4f\t(%g round trips instead of %g; the audit event adds %.4f)", r.CostPerMillionReadsWithoutAuditUsd,
		r.StorageOpsPerReadWithoutAudit, r.StorageOpsPerRead, r.CostPerMillionRequestsUsd-r.CostPerMillionReadsWithoutAuditUsd)
	p("idempotent POST %s, priced alike\t%.4f\t(%g RRU + %g WRU; the read's p50 as its duration)", projectsPath, r.CostPerMillionIdempotentWritesUsd, round(wrru, 2), round(wwru, 2))
	p("")
}

// loadFigures are one load run's figures in the report.
type loadFigures struct {
	Requests            int     `json:"requests"`
	Errors              int     `json:"errors"`
	RPS                 float64 `json:"rps"`
	P50Micros           float64 `json:"p50Micros"`
	P99Micros           float64 `json:"p99Micros"`
	P999Micros          float64 `json:"p999Micros"`
	CPUMicrosPerRequest float64 `json:"cpuMicrosPerRequest"`
	stallFigures
}

// stallFigures are a load's stalls (the worst round's), in microseconds.
type stallFigures struct {
	SchedLatencyP99Micros       float64 `json:"schedLatencyP99Micros"`
	SchedLatencyMaxMicros       float64 `json:"schedLatencyMaxMicros"`
	GCPauseP99Micros            float64 `json:"gcPauseP99Micros"`
	GCPauseMaxMicros            float64 `json:"gcPauseMaxMicros"`
	GCPauses                    uint64  `json:"gcPauses"`
	JournalAppendWaitP99Micros  float64 `json:"journalAppendWaitP99Micros,omitempty"`
	JournalAppendWriteP99Micros float64 `json:"journalAppendWriteP99Micros,omitempty"`
	JournalAppendWriteMaxMicros float64 `json:"journalAppendWriteMaxMicros,omitempty"`
	JournalSyncP99Micros        float64 `json:"journalSyncP99Micros,omitempty"`
	JournalSyncMaxMicros        float64 `json:"journalSyncMaxMicros,omitempty"`
	FlushCommitP99Micros        float64 `json:"flushCommitP99Micros,omitempty"`
	FlushCommitMaxMicros        float64 `json:"flushCommitMaxMicros,omitempty"`
	FlushCommits                uint64  `json:"flushCommits,omitempty"`
}

// stallTable prints the stalls of each load in order, under title.
func stallTable(p func(string, ...any), title string, order []string, labels map[string]string, of func(string) stallFigures) {
	p("%s\tsched p99/max\tGC pause p99/max (n)\tjournal lock p99\twrite(2) p99/max\tjournal fsync p99/max\tflusher commit p99/max (n)", title)
	for _, name := range order {
		f := of(name)
		p("%s\t%.0f / %.0f\t%.0f / %.0f (%d)\t%.0f\t%.0f / %.0f\t%.0f / %.0f\t%.0f / %.0f (%d)", labels[name],
			f.SchedLatencyP99Micros, f.SchedLatencyMaxMicros, f.GCPauseP99Micros, f.GCPauseMaxMicros, f.GCPauses,
			f.JournalAppendWaitP99Micros, f.JournalAppendWriteP99Micros, f.JournalAppendWriteMaxMicros,
			f.JournalSyncP99Micros, f.JournalSyncMaxMicros, f.FlushCommitP99Micros, f.FlushCommitMaxMicros, f.FlushCommits)
	}
}

func stallsFigures(s stalls) stallFigures {
	return stallFigures{
		SchedLatencyP99Micros: micros(s.SchedLatencyP99), SchedLatencyMaxMicros: micros(s.SchedLatencyMax),
		GCPauseP99Micros: micros(s.GCPauseP99), GCPauseMaxMicros: micros(s.GCPauseMax), GCPauses: s.GCPauses,
		JournalAppendWaitP99Micros:  micros(s.JournalAppendWaitP99),
		JournalAppendWriteP99Micros: micros(s.JournalAppendWriteP99), JournalAppendWriteMaxMicros: micros(s.JournalAppendWriteMax),
		JournalSyncP99Micros: micros(s.JournalSyncP99), JournalSyncMaxMicros: micros(s.JournalSyncMax),
		FlushCommitP99Micros: micros(s.FlushCommitP99), FlushCommitMaxMicros: micros(s.FlushCommitMax), FlushCommits: s.FlushCommits,
	}
}

func figures(r result) loadFigures {
	return loadFigures{
		Requests: len(r.Latencies), Errors: r.Errors, RPS: round(r.RPS(), 0),
		P50Micros: micros(r.Percentile(50)), P99Micros: micros(r.Percentile(99)), P999Micros: micros(r.Percentile(99.9)), CPUMicrosPerRequest: micros(r.CPUPerRequest()),
		stallFigures: stallsFigures(r.Stalls),
	}
}

// spread is a ratio over every round's requests together, and its least and
// greatest in one round.
type spread struct {
	All float64 `json:"all"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// ratios are the comparisons the rounds repeat, each computed from one set
// of loads (a round's, or all rounds' merged).
var ratios = map[string]func(map[string]result) float64{
	// The audited read's p50 over /health's, and with auditing off.
	"overheadRatio":             func(l map[string]result) float64 { return p50Ratio(l[loadRead], l[loadBare]) },
	"overheadRatioWithoutAudit": func(l map[string]result) float64 { return p50Ratio(l[loadReadNoAudit], l[loadBare]) },
	// The audited read's requests a second over the unaudited read's.
	"auditedRpsShare": func(l map[string]result) float64 { return l[loadRead].RPS() / max(l[loadReadNoAudit].RPS(), 1e-9) },
	// The audited read's tail over its median.
	"readP99OverP50": func(l map[string]result) float64 { return pRatio(l[loadRead], 99) },
	// /health's CPU per request over a plain net/http server's: the edge.
	"bareCpuOverPlainNetHTTP": func(l map[string]result) float64 {
		return ratio(l[loadBare].CPUPerRequest(), l[loadPlain].CPUPerRequest())
	},
}

var spreadOrder = []string{"overheadRatio", "overheadRatioWithoutAudit", "auditedRpsShare", "readP99OverP50", "bareCpuOverPlainNetHTTP"}

func p50Ratio(a, b result) float64 { return ratio(a.Percentile(50), b.Percentile(50)) }

// pRatio is r's p-th percentile over its median.
func pRatio(r result, p float64) float64 { return ratio(r.Percentile(p), r.Percentile(50)) }

func ratioSpread(rounds []map[string]result) map[string]spread {
	out := map[string]spread{}
	if len(rounds) == 0 {
		return out
	}
	merged := map[string]result{}
	for _, round := range rounds {
		for name, res := range round {
			merged[name] = merged[name].merge(res)
		}
	}
	for name, f := range ratios {
		sp := spread{All: round(f(merged), 2), Min: math.Inf(1), Max: math.Inf(-1)}
		for _, l := range rounds {
			v := round(f(l), 2)
			sp.Min, sp.Max = min(sp.Min, v), max(sp.Max, v)
		}
		out[name] = sp
	}
	return out
}

func firstError(rs ...result) string {
	for _, r := range rs {
		if r.FirstError != "" {
			return r.FirstError
		}
	}
	return ""
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func round(x float64, places int) float64 {
	f := math.Pow(10, float64(places))
	return math.Round(x*f) / f
}

func roundCost(c Cost) Cost {
	return Cost{
		APIGateway: round(c.APIGateway, 4), LambdaRequests: round(c.LambdaRequests, 4), LambdaDuration: round(c.LambdaDuration, 4),
		DynamoDBReads: round(c.DynamoDBReads, 4), DynamoDBWrites: round(c.DynamoDBWrites, 4), CloudWatchLogs: round(c.CloudWatchLogs, 4),
	}
}

func micros(d time.Duration) float64 { return round(float64(d)/float64(time.Microsecond), 0) }
func millis(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 1) }
func us(d time.Duration) string      { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
func ms(d time.Duration) string      { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
