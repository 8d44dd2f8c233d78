package stackemu

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// API Gateway picks an exact method over ANY, literal segments over
// parameters, parameters over a greedy {proxy+}, and $default last.
func TestFrontChoosesTheRouteAPIGatewayWould(t *testing.T) {
	mk := func(key string) route {
		r := route{key: key, fn: &function{name: key}}
		if key != "$default" {
			r.method, _, _ = strings.Cut(key, " ")
			_, path, _ := strings.Cut(key, " ")
			r.segments = strings.Split(strings.Trim(path, "/"), "/")
		}
		return r
	}
	f := &front{routes: []route{
		mk("ANY /"), mk("ANY /v1/things/{id}"), mk("GET /v1/things/{id}"), mk("GET /v1/things/special"),
		mk("ANY /v1/files/{proxy+}"), mk("GET /v1/files/{id}/meta"), mk("$default"),
	}}
	for _, c := range []struct {
		method, path, want string
		params             map[string]string
	}{
		{"GET", "/", "ANY /", nil},
		{"GET", "/v1/things/t1", "GET /v1/things/{id}", map[string]string{"id": "t1"}},
		{"DELETE", "/v1/things/t1", "ANY /v1/things/{id}", map[string]string{"id": "t1"}},
		{"GET", "/v1/things/special", "GET /v1/things/special", map[string]string{}},
		{"GET", "/v1/files/f1/meta", "GET /v1/files/{id}/meta", map[string]string{"id": "f1"}},
		{"PUT", "/v1/files/a/b/c", "ANY /v1/files/{proxy+}", map[string]string{"proxy": "a/b/c"}},
		{"GET", "/v1/nothing", "$default", nil},
		{"GET", "/v1/things", "$default", nil},
	} {
		r, params := f.match(c.method, c.path)
		if r == nil || r.key != c.want {
			t.Errorf("%s %s: route %v, want %s", c.method, c.path, r, c.want)
			continue
		}
		if c.params != nil {
			got, _ := json.Marshal(params)
			want, _ := json.Marshal(c.params)
			if string(got) != string(want) {
				t.Errorf("%s %s: params %s, want %s", c.method, c.path, got, want)
			}
		}
	}
}

// The stream mapping's filter passes what Lambda's event filtering would:
// here the audit rollup's, inserts of aud# items only.
func TestStreamFilterPassesWhatLambdasFilteringWould(t *testing.T) {
	var pattern any
	if err := json.Unmarshal([]byte(`{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"aud#"}]}}},"eventName":["INSERT"]}`), &pattern); err != nil {
		t.Fatal(err)
	}
	rec := func(event, pk string) map[string]any {
		var r map[string]any
		_ = json.Unmarshal([]byte(`{"eventName":"`+event+`","dynamodb":{"Keys":{"pk":{"S":"`+pk+`"},"sk":{"S":"x"}}}}`), &r)
		return r
	}
	for _, c := range []struct {
		rec  map[string]any
		want bool
	}{
		{rec("INSERT", "aud#acct_1"), true},
		{rec("MODIFY", "aud#acct_1"), false},
		{rec("INSERT", "acct#acct_1"), false},
		{map[string]any{"eventName": "INSERT"}, false},
	} {
		if got := matchesAny([]any{pattern}, c.rec); got != c.want {
			t.Errorf("%v: %v, want %v", c.rec, got, c.want)
		}
	}
	if !matchesAny(nil, rec("REMOVE", "x")) {
		t.Error("a mapping without filters must pass every record")
	}
}

// Schedules run at the rate the rule says; other expressions are refused,
// not guessed at.
func TestScheduleRatesAreReadFromTheRule(t *testing.T) {
	for expr, want := range map[string]time.Duration{
		"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute, "rate(1 hour)": time.Hour, "rate(2 days)": 48 * time.Hour,
	} {
		if got, err := parseRate(expr); err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", expr, got, err, want)
		}
	}
	if _, err := parseRate("cron(0 12 * * ? *)"); err == nil {
		t.Error("a cron expression was accepted")
	}
}

// Ref, Fn::GetAtt, Fn::Join and Fn::Sub resolve to the created resources.
func TestIntrinsicsResolveToTheCreatedResources(t *testing.T) {
	r := &resolver{
		ref:    func(id string) (string, error) { return "phys-" + id, nil },
		getAtt: func(id, attr string) (string, error) { return id + "." + attr, nil },
		pseudo: map[string]string{"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012"},
	}
	for in, want := range map[string]string{
		`{"Ref":"Table"}`:                                              "phys-Table",
		`{"Fn::GetAtt":["Queue","Arn"]}`:                               "Queue.Arn",
		`{"Fn::Join":["",["integrations/",{"Ref":"Integ"}]]}`:          "integrations/phys-Integ",
		`{"Fn::Sub":"cdk-${AWS::AccountId}-${AWS::Region}-${Bucket}"}`: "cdk-123456789012-us-east-1-phys-Bucket",
		`"plain"`: "plain",
		`10`:      "10",
	} {
		got, err := r.resolve(json.RawMessage(in))
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := r.resolve(json.RawMessage(`{"Fn::ImportValue":"x"}`)); err == nil {
		t.Error("an unsupported intrinsic resolved")
	}
}
