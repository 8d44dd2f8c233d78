package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"platformapi/shared/adapters/awsenv"
	"platformapi/shared/adapters/awsenv/sharedconfig"
	"platformapi/shared/adapters/work"
	"platformapi/shared/base/routes"
	"platformapi/shared/harness/lambdarie"
	"platformapi/shared/platform"
)

// buildFlags are the Makefile's build/%/bootstrap flags: the benchmark
// measures the binary that is deployed, and shares its build cache.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// moduleRoot is the directory of go.mod, found upwards from the working
// directory, so that `go run ./functions/local bench` works from anywhere
// in the module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("bench: no go.mod above the working directory")
		}
		dir = parent
	}
}

// functionGroups are the endpoint groups that have a function to build.
func functionGroups(root string) []string {
	var out []string
	for _, g := range routes.Groups() {
		if _, err := os.Stat(filepath.Join(root, "functions", g, "main.go")); err == nil {
			out = append(out, g)
		}
	}
	return out
}

// goBuild builds every group's function into out/<group> in one go build,
// which compiles the shared packages once and links in parallel.
func goBuild(ctx context.Context, root, out, goos, goarch string, groups []string) error {
	args := append([]string{"build"}, buildFlags...)
	args = append(args, "-o", out+string(filepath.Separator))
	for _, g := range groups {
		args = append(args, "./functions/"+g)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s (%s/%s): %v\n%s", strings.Join(args, " "), goos, goarch, err, out)
	}
	return nil
}

// coldEvent is the first event of every started function: a request no
// group routes, answered without storage, so that the first invocation's
// duration is the runtime's and the router's first request, not a handler's.
var coldEvent = []byte(`{"version":"2.0","routeKey":"$default","rawPath":"/v1/cold-start","headers":{},` +
	`"requestContext":{"http":{"method":"GET","path":"/v1/cold-start","sourceIp":"127.0.0.1"},"requestId":"cold-start","stage":"$default"},"isBase64Encoded":false}`)

// coldStart is one cold start under AWS's runtime interface emulator: its
// init phase (INIT REPORT) and its first request (the first REPORT's
// Duration, which on the emulator includes the init it waited for).
type coldStart struct {
	init, firstInvoke time.Duration
}

// coldStarts builds the functions for the host and starts each one n times
// under AWS's runtime interface emulator (lambdarie), invoking it once,
// round-robin so that a burst of machine noise spreads over all functions
// instead of landing on one. It returns every function's init durations and
// first-invocation durations, each sorted.
func coldStarts(ctx context.Context, root, dir string, groups []string, n int, env func(group string) []string) (inits, firsts map[string][]time.Duration, err error) {
	bin := filepath.Join(dir, "host")
	if err := goBuild(ctx, root, bin, runtime.GOOS, runtime.GOARCH, groups); err != nil {
		return nil, nil, err
	}
	rie, err := lambdarie.Binary(root)
	if err != nil {
		return nil, nil, err
	}
	inits, firsts = map[string][]time.Duration{}, map[string][]time.Duration{}
	for range n {
		for _, g := range groups {
			c, err := startOnce(ctx, rie, filepath.Join(bin, g), g, env(g))
			if err != nil {
				return nil, nil, err
			}
			inits[g] = append(inits[g], c.init)
			firsts[g] = append(firsts[g], c.firstInvoke)
		}
	}
	for _, m := range []map[string][]time.Duration{inits, firsts} {
		for _, d := range m {
			slices.Sort(d)
		}
	}
	return inits, firsts, nil
}

// startOnce runs one function under the emulator for one invocation and
// reads both durations from the emulator's reports.
func startOnce(ctx context.Context, rie, path, name string, env []string) (coldStart, error) {
	fn, err := lambdarie.Start(ctx, lambdarie.Config{RIE: rie, Path: path, Name: name, MemoryMB: USEast1.LambdaMemoryMB, Env: env})
	if err != nil {
		return coldStart{}, err
	}
	_, invokeErr := fn.Invoke(ctx, coldEvent)
	// The emulator's log is read from a pipe: its reports may land in the
	// buffer after the response (REPORT is even written after it).
	init, initOK := fn.InitDuration()
	first, firstOK := fn.FirstInvokeDuration()
	for wait := time.Now().Add(5 * time.Second); invokeErr == nil && !(initOK && firstOK) && time.Now().Before(wait); {
		time.Sleep(5 * time.Millisecond)
		init, initOK = fn.InitDuration()
		first, firstOK = fn.FirstInvokeDuration()
	}
	if err := errors.Join(invokeErr, fn.Stop()); err != nil {
		return coldStart{}, fmt.Errorf("bench: cold start of %s: %w\n%s", name, err, fn.Logs())
	}
	if !initOK || !firstOK {
		return coldStart{}, fmt.Errorf("bench: cold start of %s: the emulator reported no init or invocation:\n%s", name, fn.EmulatorLogs())
	}
	return coldStart{init: init, firstInvoke: first}, nil
}

// secretEnv are the functions whose init reads a signing seed from Secrets
// Manager, by the variable that names the secret: keys the credit-token
// seed, databases the archive signing seed.
var secretEnv = map[string]string{"keys": "CREDIT_TOKEN_SECRET_ARN", "databases": "ARCHIVE_SIGNING_SECRET_ARN"}

// coldStartEnv is what the started functions run on: the emulator with the
// AWS backend, as deployed, or else the real AWS endpoints, which no init
// calls. Every function gets what the stack grants the functions (grants):
// the envelope key and the queues' URLs. Init makes no AWS call except the
// reads of secretEnv's seeds: against the emulator the benchmark makes one
// such secret (deleted by cleanup) and names it to every function; without
// one, those functions cannot start and are left out (skipped names them).
func coldStartEnv(ctx context.Context, emulator string) (env func(group string) []string, skipped []string, cleanup func(), err error) {
	queues, err := platform.Queues()
	if err != nil {
		return nil, nil, nil, err
	}
	if emulator == "" {
		base := grants("https://sqs."+envOr("AWS_REGION", "us-east-1")+".amazonaws.com", queues)
		return func(string) []string { return base }, slices.Sorted(maps.Keys(secretEnv)), func() {}, nil
	}
	base := append(grants(emulator, queues),
		"AWS_ENDPOINT_URL="+emulator, "AWS_CALL_TIMEOUT="+os.Getenv("AWS_CALL_TIMEOUT"), "AWS_REGION="+envOr("AWS_REGION", "us-east-1"),
		"AWS_ACCESS_KEY_ID="+envOr("AWS_ACCESS_KEY_ID", "testing"),
		"AWS_SECRET_ACCESS_KEY="+envOr("AWS_SECRET_ACCESS_KEY", "testing"),
	)
	arn, cleanup, err := signingSecret(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range secretEnv {
		base = append(base, name+"="+arn)
	}
	return func(string) []string { return base }, nil, cleanup, nil
}

// grants is the environment the stack gives the functions granted the
// envelope key and the queues (deploy.UseKMS, deploy.Send and so on), for
// every queue of the deployment: a function refuses to start without what
// its group needs (wallets and swaps: the key, the webhook and wallets
// queues). Passing a URL makes init look nothing up, as on Lambda; the
// queues need not exist for a cold start.
func grants(sqsEndpoint string, queues []work.Queue) []string {
	n := awsenv.NamesFromEnv()
	env := []string{"KMS_KEY_ID=" + n.KMSKeyID}
	for _, q := range queues {
		env = append(env, awsenv.QueueURLEnv(q)+"="+sqsEndpoint+"/000000000000/"+n.Queue(q).Name)
	}
	slices.Sort(env)
	return env
}

// signingSecret makes a fresh signing secret on the emulator, as the
// stack's Secrets Manager secrets are in a deployment.
func signingSecret(ctx context.Context) (arn string, cleanup func(), err error) {
	env, err := awsenv.New(ctx, awsenv.WithSource(sharedconfig.Load))
	if err != nil {
		return "", nil, err
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	name, value := "bench-signing-"+hex.EncodeToString(b[:5]), hex.EncodeToString(b[:])
	sm := secretsmanager.NewFromConfig(env.Config)
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value})
	if err != nil {
		return "", nil, fmt.Errorf("bench: credit-token secret on the emulator: %w", err)
	}
	return *out.ARN, func() {
		_, _ = sm.DeleteSecret(context.WithoutCancel(ctx), &secretsmanager.DeleteSecretInput{SecretId: out.ARN, ForceDeleteWithoutRecovery: aws.Bool(true)})
	}, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// bootstraps returns the size of every group's linux/arm64 bootstrap. The
// ones `make build` left in build/ are used when they are newer than every
// source file; otherwise they are built into dir, exactly as make would.
func bootstraps(ctx context.Context, root, dir string, groups []string) (sizes map[string]int64, source string, err error) {
	made := filepath.Join(root, "build")
	if sizes, ok := freshBootstraps(root, made, groups); ok {
		return sizes, "build/*/bootstrap (newer than every source file)", nil
	}
	out := filepath.Join(dir, "arm64")
	if err := goBuild(ctx, root, out, "linux", "arm64", groups); err != nil {
		return nil, "", err
	}
	sizes = map[string]int64{}
	for _, g := range groups {
		st, err := os.Stat(filepath.Join(out, g))
		if err != nil {
			return nil, "", err
		}
		sizes[g] = st.Size()
	}
	return sizes, "built for linux/arm64 with the Makefile's flags", nil
}

// freshBootstraps reads build/<group>/bootstrap for every group, if all of
// them are newer than the newest Go source, go.mod and go.sum.
func freshBootstraps(root, made string, groups []string) (map[string]int64, bool) {
	sizes := map[string]int64{}
	var oldest time.Time
	for _, g := range groups {
		st, err := os.Stat(filepath.Join(made, g, "bootstrap"))
		if err != nil {
			return nil, false
		}
		sizes[g] = st.Size()
		if oldest.IsZero() || st.ModTime().Before(oldest) {
			oldest = st.ModTime()
		}
	}
	newer := errors.New("a source is newer")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "build" || name == "cdk.out" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && name != "go.mod" && name != "go.sum" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(oldest) {
			return newer
		}
		return nil
	})
	return sizes, err == nil
}
