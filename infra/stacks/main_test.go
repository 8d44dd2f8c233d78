package stacks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// tmpRoot holds the placeholder assets and cloud assemblies of this run.
var tmpRoot string

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "infra-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	// jsii runs a node child process; close it or the test binary leaks it.
	jsii.Close()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// cdkContext is cdk.json's context, so the tests synthesize with exactly the
// feature flags `cdk synth` uses.
func cdkContext(t testing.TB) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "cdk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("cdk.json: %v", err)
	}
	return doc.Context
}

// newApp is an app configured like cdk.json (no version reporting) with
// extra context on top; outdir is private to the app.
func newApp(t testing.TB, extra map[string]any) awscdk.App {
	t.Helper()
	ctx := cdkContext(t)
	for k, v := range extra {
		ctx[k] = v
	}
	out, err := os.MkdirTemp(tmpRoot, "cdk.out-")
	if err != nil {
		t.Fatal(err)
	}
	return awscdk.NewApp(&awscdk.AppProps{
		Context:            &ctx,
		Outdir:             jsii.String(out),
		AnalyticsReporting: jsii.Bool(false),
		StackTraces:        jsii.Bool(false),
	})
}

// placeholderAssets makes <dir>/<name>/bootstrap for every function: synth
// only needs the directories, not real binaries.
func placeholderAssets(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(tmpRoot, "build")
	for _, f := range Functions {
		if err := os.MkdirAll(filepath.Join(dir, f.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name, "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// synthesized is one stack and its template, both as an assertions.Template
// and as plain JSON for walks the matchers cannot express.
type synthesized struct {
	stack     *PlatformStack
	template  assertions.Template
	resources map[string]resource
	outputs   map[string]any
}

type resource struct {
	Type           string         `json:"Type"`
	Properties     map[string]any `json:"Properties"`
	DeletionPolicy string         `json:"DeletionPolicy"`
}

// synth builds the stack with the settings that context gives (env ignored).
func synth(t testing.TB, context map[string]any) *synthesized {
	t.Helper()
	if context == nil {
		context = map[string]any{}
	}
	if _, ok := context["assetDir"]; !ok {
		context["assetDir"] = placeholderAssets(t)
	}
	app := newApp(t, context)
	settings, err := LoadSettings(app.Node(), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	stack := NewPlatformStack(app, StackID(settings.Stage), &PlatformStackProps{Settings: settings})
	var tmpl assertions.Template
	must(t, func() { tmpl = assertions.Template_FromStack(stack.Stack, nil) })

	raw, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]resource `json:"Resources"`
		Outputs   map[string]any      `json:"Outputs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return &synthesized{stack: stack, template: tmpl, resources: doc.Resources, outputs: doc.Outputs}
}

var (
	defaultOnce  sync.Once
	defaultStack *synthesized
)

// defaults is the stack as `cdk synth` makes it with no settings, built once
// because a synthesis costs seconds.
func defaults(t testing.TB) *synthesized {
	t.Helper()
	defaultOnce.Do(func() { defaultStack = synth(t, nil) })
	if defaultStack == nil {
		t.Fatal("default synthesis failed in an earlier test")
	}
	return defaultStack
}

// must turns a failed CDK assertion, which jsii raises as a panic, into a
// test failure with the matcher's explanation.
func must(t testing.TB, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	f()
}

// logicalID resolves a token such as Table.TableName() ({"Ref": id}) or
// Function.FunctionArn() ({"Fn::GetAtt": [id, "Arn"]}) to the logical id.
func (s *synthesized) logicalID(t testing.TB, token *string) string {
	t.Helper()
	switch v := s.stack.Resolve(token).(type) {
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok {
			return ref
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
			return ga[0].(string)
		}
	}
	t.Fatalf("token %s resolves to no Ref or GetAtt", *token)
	return ""
}

// ofType lists the logical ids of every resource of one type, sorted.
func (s *synthesized) ofType(typ string) []string {
	var ids []string
	for id, r := range s.resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// refersTo reports whether a template fragment mentions a logical id in a
// Ref or GetAtt, however deeply nested (Fn::Join, lists, ...).
func refersTo(fragment any, logicalID string) bool {
	raw, _ := json.Marshal(fragment)
	s := string(raw)
	return strings.Contains(s, `{"Ref":"`+logicalID+`"}`) ||
		strings.Contains(s, `{"Fn::GetAtt":["`+logicalID+`",`)
}

// strs reads a string-or-list IAM field (Action, Resource) as a list.
func strs(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			} else {
				raw, _ := json.Marshal(e)
				out = append(out, string(raw))
			}
		}
		return out
	default:
		raw, _ := json.Marshal(x)
		return []string{string(raw)}
	}
}
