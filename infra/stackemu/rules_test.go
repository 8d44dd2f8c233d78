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

// The role policies loaded into moto keep what moto can check as AWS
// would: resources of S3 and SQS statements resolved, other statements'
// resources widened to "*" (moto asks about "*" for them), and moto's names
// for the calls IAM authorises by other actions (transactions, SQS
// batches) added where those actions are allowed.
func TestRolePoliciesAreLoadedAsMotoCanCheckThem(t *testing.T) {
	res := &resolver{
		ref:    func(id string) (string, error) { return "ref-" + id, nil },
		getAtt: func(id, attr string) (string, error) { return "arn:" + id + ":" + attr, nil },
	}
	for _, tc := range []struct {
		name, statement, want string
	}{
		{"an SQS statement keeps its resolved resource, with the batch send",
			`{"Effect":"Allow","Action":["sqs:GetQueueUrl","sqs:SendMessage"],"Resource":{"Fn::GetAtt":["Queue","Arn"]}}`,
			`{"Action":["sqs:GetQueueUrl","sqs:SendMessage","sqs:SendMessageBatch"],"Effect":"Allow","Resource":["arn:Queue:Arn"]}`},
		{"an S3 statement keeps its resolved resources",
			`{"Effect":"Allow","Action":"s3:GetObject*","Resource":[{"Fn::GetAtt":["Bucket","Arn"]},{"Fn::Join":["",[{"Fn::GetAtt":["Bucket","Arn"]},"/*"]]}]}`,
			`{"Action":"s3:GetObject*","Effect":"Allow","Resource":["arn:Bucket:Arn","arn:Bucket:Arn/*"]}`},
		{"a DynamoDB statement is widened and allows the transactions its item actions allow",
			`{"Effect":"Allow","Action":["dynamodb:ConditionCheckItem","dynamodb:DeleteItem","dynamodb:GetItem","dynamodb:PutItem","dynamodb:UpdateItem"],"Resource":{"Fn::GetAtt":["Table","Arn"]}}`,
			`{"Action":["dynamodb:ConditionCheckItem","dynamodb:DeleteItem","dynamodb:GetItem","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:TransactWriteItems","dynamodb:TransactGetItems"],"Effect":"Allow","Resource":"*"}`},
		{"reads alone allow no write transaction",
			`{"Effect":"Allow","Action":["dynamodb:GetItem","dynamodb:Query"],"Resource":{"Fn::GetAtt":["Table","Arn"]}}`,
			`{"Action":["dynamodb:GetItem","dynamodb:Query","dynamodb:TransactGetItems"],"Effect":"Allow","Resource":"*"}`},
		{"a secret's statement is widened",
			`{"Effect":"Allow","Action":["secretsmanager:GetSecretValue"],"Resource":{"Ref":"Seed"}}`,
			`{"Action":["secretsmanager:GetSecretValue"],"Effect":"Allow","Resource":"*"}`},
		{"a statement mixing an unchecked service with SQS is widened",
			`{"Effect":"Allow","Action":["sqs:SendMessage","kms:Decrypt"],"Resource":{"Fn::GetAtt":["Queue","Arn"]}}`,
			`{"Action":["sqs:SendMessage","kms:Decrypt","sqs:SendMessageBatch"],"Effect":"Allow","Resource":"*"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st map[string]any
			if err := json.Unmarshal([]byte(tc.statement), &st); err != nil {
				t.Fatal(err)
			}
			got, err := renderPolicy(res, map[string]any{"Statement": []any{st}})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"Statement":[` + tc.want + `],"Version":"2012-10-17"}`
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}
