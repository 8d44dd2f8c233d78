package stackemu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"platformapi/shared/harness/lambdarie"
)

// Options configures Up.
type Options struct {
	// Template is the synthesized template.
	Template *Template
	// Name names the storage stack and prefixes the function names.
	Name string
	// Moto, when set, is the repository's .ci/with-moto: Up starts a
	// private moto through it, creates everything unauthenticated, and then
	// has moto enforce IAM, so that each function and each event source
	// calls with its role's credentials and a missing grant fails as in an
	// account. AWS is then ignored.
	Moto string
	// AWS is the client configuration of the emulator the stack is created
	// in when Moto is not set (moto or LocalStack, through
	// AWS_ENDPOINT_URL); whether it enforces IAM is its own affair.
	AWS aws.Config
	// FunctionEnv is given to every function besides the template's
	// variables and its role's credentials: the SDK's call timeout and
	// development switches. The template cannot say these.
	FunctionEnv []string
	// Bootstraps maps a function's name (its CDK construct id, such as
	// webhook-worker) to its host build.
	Bootstraps func(name string) string
	// RIE is the runtime interface emulator binary.
	RIE string
	// Addr is the HTTP front's listen address; 127.0.0.1:0 by default.
	Addr string
	// ScheduleEvery, when set, replaces every schedule's rate: a test
	// cannot wait the template's minutes.
	ScheduleEvery time.Duration
	// Log receives the stack's own events; discarded by default.
	Log *slog.Logger
}

// Stack is the running stack.
type Stack struct {
	// URL is the HTTP front's base URL.
	URL string
	// Physical maps the storage resources' logical ids to what was created.
	Physical map[string]string
	// AWS calls the stack's emulator as the account's operator, allowed
	// everything: for reading what the functions wrote.
	AWS aws.Config

	functions map[string]*function // by logical id
	srv       *http.Server
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	log       *slog.Logger
	moto      *privateMoto
	account   string // the emulator's account id
}

// function is one AWS::Lambda::Function under the emulator.
type function struct {
	id, name string // logical id; CDK construct id (the binary's name)
	fn       *lambdarie.Function
	lines    chan string // its log, for the log subscription; nil without one
	// aws calls as the function's execution role: what Lambda's pollers
	// and destinations use on its behalf.
	aws aws.Config
}

func (f *function) invoke(ctx context.Context, event []byte) ([]byte, error) {
	return f.fn.Invoke(ctx, event)
}

// Up creates the storage, starts every function and wires the event
// sources. On error everything started is stopped again.
func Up(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	t := o.Template
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Stack{functions: map[string]*function{}, cancel: cancel, log: o.Log}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	// Each phase's time is logged: bringing the stack up is most of a
	// short run's time, and which phase it was is not guessable.
	last := time.Now()
	took := func(phase string) {
		s.log.Info("stack up", "phase", phase, "took", time.Since(last).Round(time.Millisecond))
		last = time.Now()
	}
	if o.Moto != "" {
		if s.moto, err = startMoto(ctx, o.Moto); err != nil {
			return nil, err
		}
		o.AWS = aws.Config{
			Region: "us-east-1", BaseEndpoint: aws.String(s.moto.endpoint), HTTPClient: o.AWS.HTTPClient, Retryer: o.AWS.Retryer,
			Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		}
	}
	took("moto")
	s.AWS = o.AWS
	physical, err := deployStorage(ctx, o.AWS, o.Name, t)
	if err != nil {
		return nil, err
	}
	took("storage")
	s.Physical = physical
	// The account the emulator answers for (moto's 123456789012,
	// LocalStack's 000000000000) names the roles and functions.
	id, err := sts.NewFromConfig(o.AWS).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return nil, fmt.Errorf("stackemu: caller identity: %w", err)
	}
	s.account = aws.ToString(id.Account)
	attrs := &attributes{cfg: o.AWS, t: t, physical: physical, region: o.AWS.Region, account: s.account}
	res := &resolver{ref: attrs.ref, getAtt: attrs.getAtt, pseudo: map[string]string{
		"AWS::Region": o.AWS.Region, "AWS::AccountId": attrs.account, "AWS::StackName": o.Name, "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com",
	}}
	if err := deployRoles(ctx, o.AWS, o.Name, t, res, physical); err != nil {
		return nil, err
	}
	if s.moto != nil {
		if s.AWS, err = operator(ctx, o.AWS, o.Name); err != nil {
			return nil, err
		}
	}
	took("roles")
	subscribed := subscribedLogGroups(t)
	for _, id := range t.ofType("AWS::Lambda::Function") {
		name, err := constructName(t, id)
		if err != nil {
			return nil, err
		}
		physical[id] = o.Name + "-" + name
	}
	if err := s.startFunctions(ctx, o, res, subscribed); err != nil {
		return nil, err
	}
	took("functions")
	if err := s.subscribeLogs(runCtx, t, res); err != nil {
		return nil, err
	}
	if err := s.mapQueues(runCtx, o, res); err != nil {
		return nil, err
	}
	if err := s.mapStreams(runCtx, o, res); err != nil {
		return nil, err
	}
	if err := s.schedule(runCtx, o, res); err != nil {
		return nil, err
	}
	if s.moto != nil {
		if err := s.moto.enforce(ctx); err != nil {
			return nil, err
		}
	}
	fr, err := s.front(t, res)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: fr, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	took("event sources and front")
	return s, nil
}

// constructName is the function's CDK construct id, from its metadata
// path (PlatformApi-dev/webhook-worker/Resource): the functions/ directory
// its bootstrap is built from.
func constructName(t *Template, id string) (string, error) {
	path, _ := t.Resources[id].Metadata["aws:cdk:path"].(string)
	parts := strings.Split(path, "/")
	if len(parts) < 3 {
		return "", fmt.Errorf("stackemu: function %s has no aws:cdk:path metadata to name its bootstrap", id)
	}
	return parts[len(parts)-2], nil
}

// startConcurrency bounds the emulators started at once: each start is a
// role assumed on the emulator and a process awaited, mostly waiting.
const startConcurrency = 8

// startFunctions starts every function, several at once. Those started
// are in s.functions even when another failed, so that Close stops them.
func (s *Stack) startFunctions(ctx context.Context, o Options, res *resolver, subscribed map[string]bool) error {
	ids := o.Template.ofType("AWS::Lambda::Function")
	errs := make([]error, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, startConcurrency)
	for i, id := range ids {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			f, err := s.startFunction(ctx, o, res, id, subscribed)
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			s.functions[id] = f
			mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Stack) startFunction(ctx context.Context, o Options, res *resolver, id string, subscribed map[string]bool) (*function, error) {
	t := o.Template
	name, _ := constructName(t, id)
	var env struct{ Variables map[string]any }
	if _, err := t.prop(id, "Environment", &env); err != nil {
		return nil, err
	}
	vars := make([]string, 0, len(env.Variables))
	for k, v := range env.Variables {
		val, err := res.value(v)
		if err != nil {
			return nil, fmt.Errorf("stackemu: %s's %s: %w", name, k, err)
		}
		vars = append(vars, k+"="+val)
	}
	sort.Strings(vars)
	var timeout, memory float64
	if _, err := t.prop(id, "Timeout", &timeout); err != nil {
		return nil, err
	}
	if _, err := t.prop(id, "MemorySize", &memory); err != nil {
		return nil, err
	}
	if timeout == 0 {
		timeout = 3 // CloudFormation's default
	}
	if memory == 0 {
		memory = 128
	}
	f := &function{id: id, name: name}
	var logGroup struct{ LogGroup map[string]string }
	if _, err := t.prop(id, "LoggingConfig", &logGroup); err != nil {
		return nil, err
	}
	var onLine func(string)
	if subscribed[logGroup.LogGroup["Ref"]] {
		f.lines = make(chan string, 4096)
		onLine = func(l string) {
			select {
			case f.lines <- l:
			default:
				s.log.Warn("log subscription fell behind; line dropped", "function", name)
			}
		}
	}
	role, err := res.resolve(t.Resources[id].Properties["Role"])
	if err != nil {
		return nil, fmt.Errorf("stackemu: %s's role: %w", name, err)
	}
	var creds aws.Credentials
	f.aws, creds, err = assumeRole(ctx, o.AWS, res.pseudo["AWS::AccountId"], role[strings.LastIndex(role, "/")+1:], s.physicalName(o, id))
	if err != nil {
		return nil, err
	}
	fenv := append(vars, "AWS_ENDPOINT_URL="+aws.ToString(o.AWS.BaseEndpoint),
		"AWS_ACCESS_KEY_ID="+creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+creds.SecretAccessKey, "AWS_SESSION_TOKEN="+creds.SessionToken)
	for _, kv := range o.FunctionEnv {
		if !ownVariable(kv) {
			fenv = append(fenv, kv)
		}
	}
	fn, err := lambdarie.Start(ctx, lambdarie.Config{
		RIE: o.RIE, Path: o.Bootstraps(name), Name: s.physicalName(o, id), MemoryMB: int(memory), Region: o.AWS.Region,
		Timeout: time.Duration(timeout) * time.Second, Env: fenv, OnLine: onLine,
	})
	if err != nil {
		return nil, err
	}
	f.fn = fn
	return f, nil
}

// ownVariable: the stack sets this variable for each function itself (its
// role's credentials, the emulator's endpoint); the caller's is ignored.
func ownVariable(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	switch k {
	case "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE":
		return true
	}
	return false
}

func (s *Stack) physicalName(o Options, id string) string {
	name, _ := constructName(o.Template, id)
	return o.Name + "-" + name
}

// functionByArn finds the function a resolved ARN or name points at.
func (s *Stack) functionByArn(arn string) (*function, error) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	for _, f := range s.functions {
		if f.fn.Name() == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("stackemu: no function %s", arn)
}

// front builds the HTTP API from the template's routes and integrations.
func (s *Stack) front(t *Template, res *resolver) (*front, error) {
	fr := &front{apiID: "local", account: s.account, log: s.log}
	integrations := map[string]*function{}
	for _, id := range t.ofType("AWS::ApiGatewayV2::Integration") {
		var typ, version string
		_, _ = t.prop(id, "IntegrationType", &typ)
		_, _ = t.prop(id, "PayloadFormatVersion", &version)
		if typ != "AWS_PROXY" || version != "2.0" {
			return nil, fmt.Errorf("stackemu: integration %s is %s payload %s; only AWS_PROXY 2.0 is emulated", id, typ, version)
		}
		arn, err := res.resolve(t.Resources[id].Properties["IntegrationUri"])
		if err != nil {
			return nil, err
		}
		fn, err := s.functionByArn(arn)
		if err != nil {
			return nil, err
		}
		integrations[id] = fn
	}
	for _, id := range t.ofType("AWS::ApiGatewayV2::Route") {
		var key string
		_, _ = t.prop(id, "RouteKey", &key)
		var target any
		_, _ = t.prop(id, "Target", &target)
		// Target is "integrations/<Ref integration>": the Ref names the
		// integration's logical id, which is all the lookup needs.
		tres := &resolver{ref: func(id string) (string, error) { return id, nil }, getAtt: res.getAtt, pseudo: res.pseudo}
		tgt, err := tres.value(target)
		if err != nil {
			return nil, fmt.Errorf("stackemu: route %s: %w", id, err)
		}
		fn := integrations[strings.TrimPrefix(tgt, "integrations/")]
		if fn == nil {
			return nil, fmt.Errorf("stackemu: route %s targets %s, not an integration here", id, tgt)
		}
		r := route{key: key, fn: fn}
		if key != "$default" {
			method, path, ok := strings.Cut(key, " ")
			if !ok {
				return nil, fmt.Errorf("stackemu: route key %q", key)
			}
			r.method, r.segments = method, strings.Split(strings.Trim(path, "/"), "/")
		}
		fr.routes = append(fr.routes, r)
	}
	return fr, nil
}

// Close stops the front, the event sources and every function.
func (s *Stack) Close() error {
	if s.srv != nil {
		_ = s.srv.Close()
	}
	s.cancel()
	s.wg.Wait()
	var errs []error
	for _, f := range s.functions {
		errs = append(errs, f.fn.Stop())
	}
	if s.moto != nil {
		s.moto.stop()
	}
	return errors.Join(errs...)
}

// InitDurations reports each function's init as the emulator timed it,
// for the functions that have been invoked.
func (s *Stack) InitDurations() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, f := range s.functions {
		if d, ok := f.fn.InitDuration(); ok {
			out[f.name] = d
		}
	}
	return out
}

// Logs returns a function's log by its construct name.
func (s *Stack) Logs(name string) string {
	for _, f := range s.functions {
		if f.name == name {
			return f.fn.Logs()
		}
	}
	return ""
}

// bootstrapsIn is the usual Bootstraps: <dir>/<name>.
func BootstrapsIn(dir string) func(string) string {
	return func(name string) string { return filepath.Join(dir, name) }
}
