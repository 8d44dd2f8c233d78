// Command local runs every endpoint group, queue worker and scheduled pass
// (package work runs the last two) in one process on embedded storage:
// `make run`. With BACKEND=aws it runs against DynamoDB/S3/SQS/KMS (or
// LocalStack/moto through AWS_ENDPOINT_URL).
// `local help` lists its commands (see commands). The server and the
// development commands read the same DATA_DIR (default .data; --data-dir
// overrides it) and ADDR (default 127.0.0.1:8080), and the development
// commands refuse a data directory no server has written, so that they never
// mint with, or fund, a second signing key or chain that no server uses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"platformapi/shared/adapters/work"
	"platformapi/shared/app"
	"platformapi/shared/base/catalog"
	"platformapi/shared/domain/audit/fastdeflate"
	"platformapi/shared/harness/bench"
	"platformapi/shared/harness/soak/faults"
	"platformapi/shared/platform"
)

func main() {
	tuneGC()
	err := run(os.Args[1:])
	var unknown unknownCommand
	switch {
	case errors.As(err, &unknown):
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", string(unknown), usage())
		os.Exit(2)
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// command is one word of local.
type command struct {
	name, help string
	run        func(cfg app.Config, args []string) error
}

// commands are the words local understands, in the order help lists them;
// help itself is the last.
var commands = []command{
	{"serve", "serve every group on ADDR with DATA_DIR (the default without a command)", serveCommand},
	{"wait", "wait until the server of DATA_DIR answers, then print its URL; fail at once when another process answers there", waitCommand},
	{"mint-credit-token", "print a credit token the server on DATA_DIR redeems for a first key (--credits N)", mint},
	{"secret", "print the secret of the key in key.json (or the file named), the answer of POST /v1/api-keys", secretCommand},
	{"fund", "fund an address on the server's local chain (--address 0x… --asset USDC|WETH|ETH --amount N)", fund},
	{"sign-payment", "sign an x402 challenge with PAYER_PRIVATE_KEY (--payment-required …), or print a new payer key (--new-key)", func(_ app.Config, args []string) error { return signPayment(args) }},
	{"print-openapi", "print the OpenAPI 3.1 document (make openapi)", func(app.Config, []string) error { return printOpenAPI() }},
	{"bench", "measure what a request costs on fresh servers of its own (make bench)", func(_ app.Config, args []string) error { return bench.Main(os.Stdout, args) }},
}

// unknownCommand is a word that names no command: main exits 2 with the list.
type unknownCommand string

func (u unknownCommand) Error() string { return "unknown command " + string(u) }

// usage is what help prints: every command with one line.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: go run ./functions/local [command] [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-18s %s\n", c.name, c.help)
	}
	fmt.Fprintf(&b, "  %-18s %s\n", "help", "print this list")
	b.WriteString("\nserve, wait, mint-credit-token and fund use the server's DATA_DIR (default .data;\n" +
		"--data-dir overrides it); the server listens on ADDR (default 127.0.0.1:8080).\n" +
		"`<command> -h` lists a command's flags.\n")
	return b.String()
}

// localConfig is the process's configuration: its environment's, and the
// faster deflater for the audit store's blocks, which only this process
// writes (the Lambda functions do not link it).
func localConfig() (app.Config, error) {
	cfg, err := app.ConfigFromEnv()
	cfg.BlockDeflater = fastdeflate.New
	return cfg, err
}

func run(args []string) error {
	cfg, err := localConfig()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return serveCommand(cfg, nil)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Print(usage())
		return nil
	}
	if strings.HasPrefix(args[0], "-") {
		return serveCommand(cfg, args)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(cfg, args[1:])
		}
	}
	return unknownCommand(args[0])
}

// dataDirFlag adds --data-dir, defaulting to DATA_DIR.
func dataDirFlag(fs *flag.FlagSet, cfg *app.Config) {
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "the server's data directory (default $DATA_DIR, else .data)")
}

// listenAddr is the server's address: ADDR, or 127.0.0.1:8080.
func listenAddr() string {
	if addr := os.Getenv("ADDR"); addr != "" {
		return addr
	}
	return "127.0.0.1:8080"
}

// absDir is dir as an absolute path, for messages that must say exactly
// which directory was used.
func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// serverData refuses a data directory the server has not written (marker,
// a file the server creates at its first start, is missing): a development
// command there would create a second signing key or chain no server uses.
// The message says what is wrong with the directory given, and where it
// came from (--data-dir, DATA_DIR or the default).
func serverData(fs *flag.FlagSet, dir, marker string) error {
	source := "DATA_DIR " + absDir(dir)
	switch {
	case flagGiven(fs, "data-dir"):
		source = "--data-dir " + absDir(dir)
	case os.Getenv("DATA_DIR") == "":
		source = absDir(dir) + " (the default DATA_DIR)"
	}
	info, err := os.Stat(dir)
	switch {
	case err != nil && flagGiven(fs, "data-dir"):
		return fmt.Errorf("%s: no such directory; pass the data directory the server's banner prints", source)
	case err != nil:
		return fmt.Errorf("%s: no such directory, so no server data in %s; start the server first or pass --data-dir", source, absDir(dir))
	case !info.IsDir():
		return fmt.Errorf("%s is not a directory", source)
	}
	if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
		if flagGiven(fs, "data-dir") {
			return fmt.Errorf("%s: no server data there (no %s); pass the data directory the server's banner prints", source, marker)
		}
		return fmt.Errorf("no server data in %s; start the server first or pass --data-dir", absDir(dir))
	}
	return nil
}

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func serveCommand(cfg app.Config, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	dataDirFlag(fs, &cfg)
	fs.BoolVar(&cfg.CreateResources, "create-resources", false, "create missing AWS resources first (LocalStack, moto)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unknownCommand(fs.Arg(0))
	}
	return serve(cfg)
}

func mint(cfg app.Config, args []string) error {
	fs := flag.NewFlagSet("mint-credit-token", flag.ContinueOnError)
	credits := fs.Float64("credits", 0, "credits the token grants (required, > 0)")
	ttl := fs.Duration("ttl", 7*24*time.Hour, "how long the token stays redeemable")
	dataDirFlag(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *credits <= 0 || math.IsInf(*credits, 0) || *credits > 1e9 {
		return errors.New("--credits must be a positive number of credits")
	}
	key := "CREDIT_TOKEN_SECRET_ARN"
	if cfg.Backend != "aws" || os.Getenv(key) == "" {
		if err := serverData(fs, cfg.DataDir, "credit-token.key"); err != nil {
			return err
		}
		key = filepath.Join(absDir(cfg.DataDir), "credit-token.key")
	}
	// The token alone goes to stdout, so that $(…) captures it.
	where := "no server of " + absDir(cfg.DataDir) + " runs now; start it (make run) to redeem the token"
	if rec, ok := readRecord(cfg.DataDir); ok {
		where = "the server of " + absDir(cfg.DataDir) + " redeems it at " + rec.URL + "/v1/api-keys"
	}
	fmt.Fprintf(os.Stderr, "minted with the signing key of %s; %s\n", key, where)
	signer, err := app.Signer(context.Background(), cfg)
	if err != nil {
		return err
	}
	tok, err := signer.Mint(int64(math.Round(*credits*catalog.MicroPerCredit)), time.Now(), *ttl)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// printOpenAPI writes the document of every group: what `make openapi`
// embeds in the public function.
func printOpenAPI() error {
	doc, err := platform.Document()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(doc, '\n'))
	return err
}

func serve(cfg app.Config) error {
	logger := cfg.Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The port first: a taken port must end the process at once, before
	// anything starts that only a signal would stop.
	addr := listenAddr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (another process holds it: stop it, or set ADDR, e.g. ADDR=127.0.0.1:8081)", addr, err)
	}
	defer ln.Close()
	rt, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer rt.Close()
	dev, err := openChain(ctx, cfg, rt)
	if err != nil {
		return err
	}
	defer dev.Close()
	faults.Apply(rt)
	api, err := rt.NewServer(logger, nil)
	if err != nil {
		return err
	}
	workers, passes, err := rt.Work(logger)
	if err != nil {
		return err
	}
	// The workers poll the durable embedded queues until shutdown; each
	// finishes what it holds before rt.Close (deferred earlier, so run later).
	var running sync.WaitGroup
	defer running.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before running.Wait: a failed Serve must stop them too
	running.Go(func() { work.Run(ctx, logger, workers, passes) })
	base := "http://" + ln.Addr().String()
	rec, err := writeRecord(cfg.DataDir, base)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Join(absDir(cfg.DataDir), recordFile), err)
	}
	defer removeRecord(cfg.DataDir, rec)
	srv := httpServer(withInstance(faults.Wrap(api, rt), rec.Instance), cfg.RequestTimeout)
	logger.Info("listening", "addr", ln.Addr().String(), "backend", cfg.Backend, "dataDir", cfg.DataDir)
	// The test harness reads this line to find the port when ADDR ends in :0.
	fmt.Fprintf(os.Stdout, "listening on %s\n", base)
	fmt.Fprint(os.Stdout, banner(base, cfg.DataDir, dev.Endpoint()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return nil
}

// banner is what a newcomer needs once the server listens: where it keeps
// its data, where its chain answers, where the reference and the console
// are, and the exact command that makes a first key against this server
// (its data directory and its URL), so no command in it can reach another
// server's key.
func banner(base, dataDir, chainRPC string) string {
	dir := absDir(dataDir)
	mintCmd := "go run ./functions/local mint-credit-token --data-dir " + shellQuote(dir) + " --credits 50"
	return fmt.Sprintf(`  data directory  %s
  chain RPC       %s
  API reference   %s/docs
  console         %s/console
  first key       curl -sS --fail-with-body -X POST %s/v1/api-keys -H "X-Service-Credit-Token: $(%s)" -H 'Idempotency-Key: first-key-0001' -H 'Content-Type: application/json' -d '{"label": "root"}' | tee key.json
`, dir, chainRPC, base, base, base, mintCmd)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell, unless it needs no quoting.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// httpServer is the local server's listener. Its read and write timeouts
// outlast every request's deadline (REQUEST_TIMEOUT, 30 s unless set):
// net/http cancels a request's context once its connection's read
// deadline passes, however long ago the body was read, and fails a
// response written after the write deadline, so either one shorter than
// the request's deadline would stop a request the kernel still allows.
func httpServer(h http.Handler, requestTimeout time.Duration) *http.Server {
	limit := max(60*time.Second, requestTimeout+10*time.Second)
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: limit, WriteTimeout: limit, IdleTimeout: 120 * time.Second}
}
