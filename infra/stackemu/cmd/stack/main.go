// Command stack runs the synthesized stack locally (make stack): storage
// in a private moto enforcing IAM (or, with AWS_ENDPOINT_URL set, in that
// emulator, such as LocalStack), every function under AWS's runtime
// interface emulator with its role's credentials, the HTTP API on ADDR. It
// runs until interrupted.
//
//	stack [-template cdk.out/PlatformApi-dev.template.json] [-addr 127.0.0.1:8080]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"platformapi/infra/stackemu"
	"platformapi/shared/harness/lambdarie"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stack:", err)
		os.Exit(1)
	}
}

// functionEnv is the SDK's call bound, and ALLOW_PRIVATE_WEBHOOKS when
// set: a development switch the template never carries.
func functionEnv() []string {
	env := stackemu.FunctionEnv()
	if v := os.Getenv("ALLOW_PRIVATE_WEBHOOKS"); v != "" {
		env = append(env, "ALLOW_PRIVATE_WEBHOOKS="+v)
	}
	return env
}

func run() error {
	matches, _ := filepath.Glob("cdk.out/PlatformApi-*.template.json")
	def := ""
	if len(matches) > 0 {
		def = matches[0]
	}
	tmplPath := flag.String("template", def, "the synthesized template")
	addr := flag.String("addr", "127.0.0.1:8080", "the HTTP API's listen address")
	root := flag.String("root", ".", "the module root (functions/ and .cache/)")
	flag.Parse()
	if *tmplPath == "" {
		return fmt.Errorf("no template: run make synth, or pass -template")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	began := time.Now()
	tmpl, err := stackemu.LoadTemplate(*tmplPath)
	if err != nil {
		return err
	}
	names, err := tmpl.FunctionNames()
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(filepath.Join(*root, ".cache", "stack-bin"))
	if err != nil {
		return err
	}
	if err := stackemu.BuildBootstraps(*root, bin, names); err != nil {
		return err
	}
	rie, err := lambdarie.Binary(*root)
	if err != nil {
		return err
	}
	built := time.Since(began)
	ctx := context.Background()
	opts := stackemu.Options{
		Template: tmpl, Name: fmt.Sprintf("stack-%d", time.Now().Unix()), FunctionEnv: functionEnv(),
		Bootstraps: stackemu.BootstrapsIn(bin), RIE: rie, Addr: *addr, Log: log,
	}
	// Without an emulator named, the stack starts its own moto and has it
	// enforce IAM; a named one (LocalStack) is used as it is.
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		opts.Moto = filepath.Join(*root, ".ci", "with-moto")
	} else if opts.AWS, err = config.LoadDefaultConfig(ctx); err != nil {
		return err
	}
	up := time.Now()
	s, err := stackemu.Up(ctx, opts)
	if err != nil {
		return err
	}
	log.Info("stack up", "url", s.URL, "iamEnforced", opts.Moto != "", "functions", len(names), "build", built.Round(time.Millisecond), "up", time.Since(up).Round(time.Millisecond))
	fmt.Println("listening on " + s.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	inits := s.InitDurations()
	keys := make([]string, 0, len(inits))
	for k := range inits {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		log.Info("init", "function", k, "duration", inits[k])
	}
	return s.Close()
}
