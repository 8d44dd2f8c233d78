package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"platformapi/shared/app"
	"platformapi/shared/base/jsonlog"
	"platformapi/shared/domain/audit"
	"platformapi/shared/domain/audit/fastdeflate"
)

// The server-alone run (`bench -server-alone`, make bench-server) measures
// what the server process spends per request, apart from the load
// generator: in the ordinary run both share one process, and net/http's
// client side and the load workers are about half of what the process
// spends on a read. Here each server is a child process of its own (the
// same binary, re-executed with -serve), pinned apart from the load
// generator where the machine allows, and its CPU is read from
// /proc/<pid>/stat around each load.
//
// Two children: the API on embedded storage in a temporary directory
// (audited, unaudited on a listener of its own, and the bench's no-op
// handler beside the audited API), and a plain net/http server with a
// trivial handler, the floor that GET /health is compared with. Each load's
// server CPU runs from its first request until the audit flusher has stored
// the events it made (a control listener's /flush), so the flusher's share
// is the audited read's; before each load the child flushes and collects
// its heap uncounted, so that a load does not pay for the garbage of the
// one before.

// The server-alone loads, in the order the first round runs them.
var aloneOrder = []string{loadPlain, loadNoop, loadBare, loadRead, loadReadNoAudit}

// childAddrs is what a child prints on its first line of output once it
// serves.
type childAddrs struct {
	Base      string `json:"base"`      // the audited API, and the no-op handler
	Unaudited string `json:"unaudited"` // the API with auditing off
	Control   string `json:"control"`   // /settle, /flush, /profile/start, /profile/stop
	Secret    string `json:"secret"`    // the measured depth-3 key's
}

// serveChild is a child's whole life: serve, print the addresses, and stop
// when standard input closes (the parent ended or died).
func serveChild(ctx context.Context, kind, dir, cpus string, stdin io.Reader, stdout io.Writer) error {
	if cpus != "" {
		if err := confineTo(cpus); err != nil {
			return err
		}
	}
	var addrs childAddrs
	switch kind {
	case "plain":
		base, stop, err := serve(http.HandlerFunc(noop))
		if err != nil {
			return err
		}
		defer stop()
		addrs.Base = base
		ctl, stopCtl, err := serve(control(nil, nil))
		if err != nil {
			return err
		}
		defer stopCtl()
		addrs.Control = ctl
	case "api":
		cfg, err := aloneConfig(dir)
		if err != nil {
			return err
		}
		rt, err := app.Open(ctx, cfg)
		if err != nil {
			return err
		}
		defer rt.Close()
		// The access line is written as the local server writes it (see
		// aloneConfig), to a file (/dev/null): its formatting and its
		// write(2) are a request's.
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer null.Close()
		logger := slog.New(jsonlog.New(null, nil))
		audited, err := rt.NewServer(logger, nil)
		if err != nil {
			return err
		}
		rec := rt.Audit
		rt.Audit = nil
		unaudited, err := rt.NewServer(logger, nil)
		rt.Audit = rec
		if err != nil {
			return err
		}
		if addrs.Secret, err = leafKey(apiClient{h: audited}, rt.Signer); err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET "+noopPath, noop)
		mux.Handle("/", audited)
		for _, s := range []struct {
			h    http.Handler
			addr *string
		}{{mux, &addrs.Base}, {unaudited, &addrs.Unaudited}, {control(rec.Flush, rec.Timings()), &addrs.Control}} {
			base, stop, err := serve(s.h)
			if err != nil {
				return err
			}
			defer stop()
			*s.addr = base
		}
	default:
		return fmt.Errorf("bench: no child server %q", kind)
	}
	line, err := json.Marshal(addrs)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	return nil
}

// aloneConfig is the API child's configuration: the local server's, as
// functions/local reads its environment (app.ConfigFromEnv) and injects its
// block deflater, on embedded storage in dir. The run measures the process
// the local server is, so its access lines carry the CloudWatch metric
// block only when the local server's would (LOG_EMF=true); the block is
// Lambda's, where CloudWatch reads it.
func aloneConfig(dir string) (app.Config, error) {
	cfg, err := app.ConfigFromEnv()
	cfg.Backend, cfg.DataDir, cfg.BlockDeflater = "embedded", dir, fastdeflate.New
	return cfg, err
}

// control is a child's own listener, for the parent only: /settle flushes
// the audit journal and collects the heap (before a load, uncounted),
// /flush stores the events the load made (counted), /profile/start?file=
// and /profile/stop a CPU profile of the child, /trace/start?file= and
// /trace/stop a runtime trace of the child, /stalls/start and
// /stalls/stop the child's stalls over a load (the scheduler's latency,
// the collector's pauses, the audit recorder's steps from timings), the
// latter answered as JSON. The parent asks one thing at a time, each on a
// connection of its own: mu orders what the handlers keep between them.
func control(flush func(context.Context) error, timings *audit.Timings) http.Handler {
	if flush == nil {
		flush = func(context.Context) error { return nil }
	}
	var mu sync.Mutex
	var probe stallProbe
	stops := map[string]func() error{}
	fail := func(w http.ResponseWriter, err error) bool {
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return err != nil
	}
	mux := http.NewServeMux()
	for kind, start := range map[string]func(string) (func() error, error){"profile": startProfile, "trace": startTrace} {
		mux.HandleFunc("POST /"+kind+"/start", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if stop, err := start(r.URL.Query().Get("file")); !fail(w, err) {
				stops[kind] = stop
			}
		})
		mux.HandleFunc("POST /"+kind+"/stop", func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if stop := stops[kind]; stop != nil {
				delete(stops, kind)
				fail(w, stop())
			}
		})
	}
	mux.HandleFunc("POST /stalls/start", func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		probe = startStalls(timings)
	})
	mux.HandleFunc("POST /stalls/stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(probe.stop())
	})
	mux.HandleFunc("POST /settle", func(w http.ResponseWriter, r *http.Request) {
		if !fail(w, flush(r.Context())) {
			runtime.GC()
		}
	})
	mux.HandleFunc("POST /flush", func(w http.ResponseWriter, r *http.Request) { fail(w, flush(r.Context())) })
	return mux
}

// child is a running child server.
type child struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addrs childAddrs
	done  chan error
}

// childCommand is how the bench re-executes itself: the running binary
// with "bench" and the child's flags, as functions/local dispatches them
// (and the bench's test binary, whose TestMain looks for that word).
var childCommand = func(args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, append([]string{"bench"}, args...)...), nil
}

// startChild starts a child server of kind and waits for its addresses.
func startChild(kind, dir, cpus string) (*child, error) {
	cmd, err := childCommand("-serve", kind, "-serve-dir", dir, "-serve-cpus", cpus)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &c.addrs)
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		c.done <- cmd.Wait()
	}()
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("bench: child server %s did not start: %w", kind, err)
	}
	return c, nil
}

// stop closes the child's standard input, which ends it, and waits; a
// child that does not end within ten seconds is killed.
func (c *child) stop() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// call posts to the child's control listener.
func (c *child) call(path string) error {
	_, err := c.ask(path)
	return err
}

// ask posts to the child's control listener and returns its answer.
func (c *child) ask(path string) ([]byte, error) {
	res, err := http.Post(c.addrs.Control+path, "", nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("bench: child %s: %d %s", path, res.StatusCode, body)
	}
	return body, err
}

// stalls is the child's stalls since its last /stalls/start.
func (c *child) stalls() (stalls, error) {
	var s stalls
	body, err := c.ask("/stalls/stop")
	if err == nil {
		err = json.Unmarshal(body, &s)
	}
	return s, err
}

// cpu is the child's user plus system CPU time so far, every thread's.
func (c *child) cpu() (time.Duration, error) {
	return pidCPU(c.cmd.Process.Pid)
}

// pidCPU reads a process's utime and stime from /proc/<pid>/stat, in the
// kernel's USER_HZ ticks (100 a second on every Linux ABI).
func pidCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: the fields
	// follow its last ')'. utime and stime are the 14th and 15th fields,
	// the 12th and 13th after the name.
	i := strings.LastIndexByte(string(raw), ')')
	f := strings.Fields(string(raw[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("bench: unreadable /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * (time.Second / 100), nil
}

// aloneResult is one server-alone load in one round: the load's own result
// and the server process's CPU over it.
type aloneResult struct {
	result
	ServerCPU time.Duration
}

// ServerCPUPerRequest is the server process's CPU over the requests
// answered.
func (r aloneResult) ServerCPUPerRequest() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.ServerCPU / time.Duration(len(r.Latencies))
}

// aloneRun is every round's server-alone loads, and what the runs were on.
type aloneRun struct {
	rounds  []map[string]aloneResult
	pinning string
	// loadAverage is /proc/loadavg's first three figures before and after.
	loadBefore, loadAfter string
}

// measureAlone starts the two children, loads each endpoint in turn in
// alternating rounds (every other round reversed), and reads each load's
// server CPU. profile, when set, names the CPU profiles of the first
// round's loads, each of its server's process: profile.read is the audited
// read's, profile.bare GET /health's, and so on.
func measureAlone(ctx context.Context, dir string, o options, profile string) (aloneRun, error) {
	run := aloneRun{loadBefore: loadAverage()}
	cpus := ""
	if pin, ok := newPinning(); ok {
		cpus = pin.serverCPUs()
		pin.confineClient()
		defer pin.release()
		run.pinning = "server processes on CPUs " + cpus + ", load generator on CPU " + pin.clientCPU()
	}
	if o.rate > 0 {
		// The open loop's pacer sleeps in a system call, which holds
		// its P: the workers need another, pinned to one CPU or not.
		prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2))
		defer runtime.GOMAXPROCS(prev)
	}
	api, err := startChild("api", filepath.Join(dir, "alone"), cpus)
	if err != nil {
		return run, err
	}
	defer api.stop()
	plain, err := startChild("plain", "", cpus)
	if err != nil {
		return run, err
	}
	defer plain.stop()

	auth := http.Header{"Authorization": {"Bearer " + api.addrs.Secret}}
	loads := map[string]load{
		loadPlain:       {url: plain.addrs.Base + noopPath, header: http.Header{}},
		loadNoop:        {url: api.addrs.Base + noopPath, header: http.Header{}},
		loadBare:        {url: api.addrs.Base + "/health", header: http.Header{}},
		loadRead:        {url: api.addrs.Base + balancePath, header: auth},
		loadReadNoAudit: {url: api.addrs.Unaudited + balancePath, header: auth},
	}
	server := func(name string) *child {
		if name == loadPlain {
			return plain
		}
		return api
	}
	for name, l := range loads {
		l.rate = o.rate
		loads[name] = l
	}
	if err := warm(ctx, loads, o.concurrency, o.warmup); err != nil {
		return run, err
	}
	each := o.duration / time.Duration(o.rounds)
	for round := range o.rounds {
		order := inRound(aloneOrder, round)
		got := map[string]aloneResult{}
		for _, name := range order {
			s := server(name)
			if err := s.call("/settle"); err != nil {
				return run, err
			}
			// What the child writes over this load: a CPU profile of
			// each load of the first round, a trace of its audited read.
			var captures [][2]string
			if profile != "" && round == 0 {
				captures = append(captures, [2]string{"profile", profile + "." + name})
			}
			if o.trace != "" && round == 0 && name == loadRead {
				captures = append(captures, [2]string{"trace", o.trace})
			}
			for _, c := range captures {
				if err := s.call("/" + c[0] + "/start?file=" + url.QueryEscape(c[1])); err != nil {
					return run, err
				}
			}
			if err := s.call("/stalls/start"); err != nil {
				return run, err
			}
			cpu0, err := s.cpu()
			if err != nil {
				return run, err
			}
			res := loads[name].run(ctx, each)
			if res.Stalls, err = s.stalls(); err != nil {
				return run, err
			}
			if err := s.call("/flush"); err != nil {
				return run, err
			}
			cpu1, err := s.cpu()
			if err != nil {
				return run, err
			}
			for _, c := range captures {
				if err := s.call("/" + c[0] + "/stop"); err != nil {
					return run, err
				}
			}
			if err := ctx.Err(); err != nil {
				return run, err
			}
			got[name] = aloneResult{result: res, ServerCPU: cpu1 - cpu0}
		}
		run.rounds = append(run.rounds, got)
	}
	run.loadAfter = loadAverage()
	return run, nil
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// AloneReport is the server-alone run's result, printed as the last line
// of output.
type AloneReport struct {
	// Load holds each load's figures by name: plainNetHTTP, noop, bare
	// (GET /health), read (audited), readWithoutAudit.
	Load map[string]aloneFigures `json:"load"`
	// BareCPUOverPlainNetHTTP is GET /health's server CPU per request over
	// the plain net/http server's: the median of the rounds' ratios and
	// their spread.
	BareCPUOverPlainNetHTTP aloneSpread `json:"bareServerCpuOverPlainNetHTTP"`
	// ReadP99OverP50 is the audited read's p99 over its p50 in each round:
	// the median of the rounds and their spread, the tail a client of the
	// server alone sees (the target is at most 3).
	ReadP99OverP50 aloneSpread `json:"readP99OverP50"`
	Rounds         int         `json:"rounds"`
	Pinning        string      `json:"pinning"`
	// MetricBlock tells whether the API's access lines carried their
	// CloudWatch metric block (LOG_EMF=true), which the local server
	// leaves out by default.
	MetricBlock bool `json:"metricBlock"`
	// LoadAverage is the machine's before and after the loads.
	LoadAverage string `json:"loadAverage"`
	Concurrency int    `json:"concurrency"`
	// Rate is the open loop's requests a second (-rate); absent for the
	// closed loop.
	Rate        float64 `json:"rate,omitempty"`
	LoadSeconds float64 `json:"loadSeconds"` // per endpoint, over every round
	Machine     string  `json:"machine"`
	Date        string  `json:"date"`
}

// aloneFigures are one load's server-alone figures.
type aloneFigures struct {
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	RPS       float64 `json:"rps"`
	P50Micros float64 `json:"p50Micros"`
	P99Micros float64 `json:"p99Micros"`
	// P999Micros is the 99.9th percentile: at 5,000 requests a second, five
	// requests a second are slower than it.
	P999Micros float64 `json:"p999Micros"`
	// ServerCPUMicrosPerRequest is the median of the rounds' server CPU
	// per request, with the spread of the rounds.
	ServerCPUMicrosPerRequest aloneSpread `json:"serverCpuMicrosPerRequest"`
	// The server process's stalls over the load, its worst round's.
	stallFigures
}

// aloneSpread is a figure's median over the rounds and its least and
// greatest round.
type aloneSpread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spreadOf(xs []float64) aloneSpread {
	if len(xs) == 0 {
		return aloneSpread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return aloneSpread{Median: med, Min: s[0], Max: s[len(s)-1]}
}

func aloneReport(o options, run aloneRun) AloneReport {
	r := AloneReport{
		Load: map[string]aloneFigures{}, Rounds: len(run.rounds), Pinning: run.pinning,
		LoadAverage: run.loadBefore + " → " + run.loadAfter, Concurrency: o.concurrency, Rate: o.rate, LoadSeconds: o.duration.Seconds(),
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
		Date:    time.Now().UTC().Format(time.RFC3339),
	}
	if cfg, err := aloneConfig(""); err == nil {
		r.MetricBlock = !cfg.NoMetrics
	}
	var health, tail []float64
	for _, name := range aloneOrder {
		var merged result
		var per []float64
		for _, l := range run.rounds {
			res := l[name]
			merged = merged.merge(res.result)
			per = append(per, micros1(float64(res.ServerCPUPerRequest())/float64(time.Microsecond)))
		}
		cpu := spreadOf(per)
		r.Load[name] = aloneFigures{
			Requests: len(merged.Latencies), Errors: merged.Errors, RPS: round(merged.RPS(), 0),
			P50Micros: micros(merged.Percentile(50)), P99Micros: micros(merged.Percentile(99)), P999Micros: micros(merged.Percentile(99.9)),
			ServerCPUMicrosPerRequest: aloneSpread{Median: micros1(cpu.Median), Min: cpu.Min, Max: cpu.Max},
			stallFigures:              stallsFigures(merged.Stalls),
		}
	}
	for _, l := range run.rounds {
		health = append(health, round(ratio(l[loadBare].ServerCPUPerRequest(), l[loadPlain].ServerCPUPerRequest()), 2))
		read := l[loadRead].result
		tail = append(tail, round(ratio(read.Percentile(99), read.Percentile(50)), 2))
	}
	r.BareCPUOverPlainNetHTTP = spreadOf(health)
	r.ReadP99OverP50 = spreadOf(tail)
	return r
}

// micros1 rounds microseconds to a tenth.
func micros1(x float64) float64 { return round(x, 1) }

// mainAlone is `bench -server-alone`: the server-alone loads only, their
// table, then the report as one JSON line.
func mainAlone(ctx context.Context, w io.Writer, o options, profile string) error {
	dir, err := os.MkdirTemp("", "platformapi-bench-alone-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(os.Stderr, "bench: loading child servers: %s per endpoint in %d rounds at concurrency %d\n", o.duration, o.rounds, o.concurrency)
	run, err := measureAlone(ctx, dir, o, profile)
	if err != nil {
		return err
	}
	r := aloneReport(o, run)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }
	p("Platform API server alone, %s, %s, load average %s", r.Date, r.Machine, r.LoadAverage)
	loop := fmt.Sprintf("closed loop, concurrency %d", o.concurrency)
	if o.rate > 0 {
		loop = fmt.Sprintf("open loop, %.0f requests a second over at most %d connections, each latency from its request's due time", o.rate, o.concurrency)
	}
	p("Each server a process of its own on embedded storage; %s, %s per endpoint in %d alternating rounds after %s warm-up", loop, o.duration, o.rounds, o.warmup)
	if r.Pinning != "" {
		p("pinned: %s", r.Pinning)
	} else {
		p("not pinned: fewer than two allowed CPUs, or not Linux")
	}
	if r.MetricBlock {
		p("access lines: with their CloudWatch metric block (LOG_EMF=true)")
	} else {
		p("access lines: as the local server writes them, without the CloudWatch metric block (LOG_EMF=true adds it)")
	}
	p("endpoint\trequests\terrors\treq/s\tp50\tp99\tp99.9\tserver CPU/request median [least, greatest round]")
	labels := map[string]string{
		loadPlain: "GET " + noopPath + " (plain net/http server, trivial handler)", loadNoop: "GET " + noopPath + " (no-op handler, API's listener)",
		loadBare: "GET /health", loadRead: readLabel, loadReadNoAudit: readLabel + withoutAuditSuffix,
	}
	for _, name := range aloneOrder {
		f := r.Load[name]
		c := f.ServerCPUMicrosPerRequest
		p("%s\t%d\t%d\t%.0f\t%.0f µs\t%.0f µs\t%.0f µs\t%.1f µs [%.1f, %.1f]", labels[name], f.Requests, f.Errors, f.RPS, f.P50Micros, f.P99Micros, f.P999Micros, c.Median, c.Min, c.Max)
	}
	p("")
	stallTable(p, "the server process's stalls during each load (the worst round's; µs)", aloneOrder, labels, func(name string) stallFigures { return r.Load[name].stallFigures })
	p("")
	h := r.BareCPUOverPlainNetHTTP
	p("GET /health server CPU over plain net/http's\t%.2f [%.2f, %.2f]\t(target ≤ 1.3)", h.Median, h.Min, h.Max)
	p("audited read server CPU\t%.1f µs\t(target ≤ 60)", r.Load[loadRead].ServerCPUMicrosPerRequest.Median)
	t := r.ReadP99OverP50
	p("audited read p99 over p50\t%.2f [%.2f, %.2f]\t(target ≤ 3)", t.Median, t.Min, t.Max)
	p("Server CPU is the server process's utime+stime (/proc/<pid>/stat) from a load's first request until the audit flusher has stored its events.")
	p("")
	if err := tw.Flush(); err != nil {
		return err
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", line)
	return err
}
