package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"platformapi/shared/base/apierr"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testRequest() Request {
	return Request{
		ServiceID: "core-research", OperationID: "research.query",
		Input:     json.RawMessage(`{"question":"why?"}`),
		AccountID: "acct_1", ProjectID: "prj_1", EndUser: "user-7",
		RequestID: "req_123", MaxChargeMicro: 20_000,
	}
}

func newTestHTTP(t *testing.T, handler http.HandlerFunc, cfg HTTPConfig) *HTTP {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL + "/svc/"
	h, err := NewHTTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.now = func() time.Time { return testNow }
	return h
}

// answer200 answers a well-formed success with the given charge header.
func answer200(charged string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if charged != "" {
			w.Header().Set(HeaderChargedCredits, charged)
		}
		w.Header().Set(HeaderUpstreamRequestID, "up-42")
		io.WriteString(w, `{"output": {"answer": 42}, "extra": "ignored"}`)
	}
}

func status(code int, hdr map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// waitForCaller holds the answer until the client gives up, so a timeout
// test neither sleeps nor leaks a handler. (The server notices a closed
// connection only once the request body has been read.)
func waitForCaller(afterHeaders bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if afterHeaders {
			w.Header().Set(HeaderChargedCredits, "0.01")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"output":`)
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// outcome checks an Invoke result.
type outcome func(t *testing.T, res Result, err error)

func charged(micro int64) outcome {
	return func(t *testing.T, res Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("want success, got %v", err)
		}
		if res.ChargedMicro != micro || string(res.Output) != `{"answer": 42}` || res.UpstreamRequestID != "up-42" {
			t.Fatalf("got %+v (output %s), want charge %d", res, res.Output, micro)
		}
	}
}

func badUpstream(t *testing.T, res Result, err error) {
	t.Helper()
	if !errors.Is(err, ErrBadUpstream) {
		t.Fatalf("want ErrBadUpstream, got %v (%+v)", err, res)
	}
}

func rateLimited(wait time.Duration) outcome {
	return func(t *testing.T, _ Result, err error) {
		t.Helper()
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != wait {
			t.Fatalf("want RateLimitedError{%s}, got %v", wait, err)
		}
	}
}

func unavailable(wait time.Duration) outcome {
	return func(t *testing.T, _ Result, err error) {
		t.Helper()
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.RetryAfter != wait {
			t.Fatalf("want UnavailableError{%s}, got %v", wait, err)
		}
	}
}

func refused(code apierr.Code, detail string, fields int) outcome {
	return func(t *testing.T, _ Result, err error) {
		t.Helper()
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != code || ae.Detail != detail || len(ae.Errors) != fields {
			t.Fatalf("want %s %q with %d field errors, got %#v", code, detail, fields, err)
		}
	}
}

func TestHTTPMapsEveryUpstreamAnswer(t *testing.T) {
	problemBody := `{"detail":"text too long","errors":[{"location":"input.text","message":"at most 10"}]}`
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		cfg     HTTPConfig
		want    outcome
	}{
		{"200 reports its exact charge", answer200("0.015"), HTTPConfig{}, charged(15_000)},
		{"200 may charge nothing", answer200("0"), HTTPConfig{}, charged(0)},
		{"200 may charge exactly the maximum", answer200("0.02"), HTTPConfig{}, charged(20_000)},
		{"200 charging above the maximum is bad", answer200("0.020001"), HTTPConfig{}, badUpstream},
		{"200 without a charge is bad", answer200(""), HTTPConfig{}, badUpstream},
		{"200 with a negative charge is bad", answer200("-0.01"), HTTPConfig{}, badUpstream},
		{"200 with an exponent charge is bad", answer200("1e-2"), HTTPConfig{}, badUpstream},
		{"200 with sub-micro precision is bad", answer200("0.0100001"), HTTPConfig{}, badUpstream},
		{"200 with a body that is not JSON is bad", status(200, map[string]string{HeaderChargedCredits: "0"}, "<html>oops</html>"), HTTPConfig{}, badUpstream},
		{"200 without output is bad", status(200, map[string]string{HeaderChargedCredits: "0"}, `{"result": 1}`), HTTPConfig{}, badUpstream},
		{"200 with trailing data is bad", status(200, map[string]string{HeaderChargedCredits: "0"}, `{"output": 1} {}`), HTTPConfig{}, badUpstream},
		{"200 with a truncated body is bad", status(200, map[string]string{HeaderChargedCredits: "0"}, `{"output": {"a":`), HTTPConfig{}, badUpstream},
		{"oversized answer is bad", status(200, map[string]string{HeaderChargedCredits: "0"}, `{"output":"`+strings.Repeat("x", 200)+`"}`), HTTPConfig{MaxResponseBytes: 100}, badUpstream},
		{"429 passes Retry-After seconds", status(429, map[string]string{"Retry-After": "7"}, ""), HTTPConfig{}, rateLimited(7 * time.Second)},
		{"429 without Retry-After waits one second", status(429, nil, ""), HTTPConfig{}, rateLimited(time.Second)},
		{"429 with Retry-After 0 waits one second", status(429, map[string]string{"Retry-After": "0"}, ""), HTTPConfig{}, rateLimited(time.Second)},
		{"503 passes an HTTP-date Retry-After", status(503, map[string]string{"Retry-After": testNow.Add(30 * time.Second).Format(http.TimeFormat)}, ""), HTTPConfig{}, unavailable(30 * time.Second)},
		{"503 caps a huge Retry-After", status(503, map[string]string{"Retry-After": "99999999999999999999"}, ""), HTTPConfig{}, unavailable(MaxRetryAfter)},
		{"503 with an unreadable Retry-After waits one second", status(503, map[string]string{"Retry-After": "soon"}, ""), HTTPConfig{}, unavailable(time.Second)},
		{"503 with an oversized body is still unavailable", status(503, map[string]string{"Retry-After": "2"}, strings.Repeat("<p>", 100)), HTTPConfig{MaxResponseBytes: 100}, unavailable(2 * time.Second)},
		{"400 with an oversized body is refused without its detail", status(400, nil, `{"detail":"`+strings.Repeat("x", 200)+`"}`), HTTPConfig{MaxResponseBytes: 100}, refused(apierr.ValidationFailed, "The service rejected the input.", 0)},
		{"502 is unavailable", status(502, nil, ""), HTTPConfig{}, unavailable(time.Second)},
		{"504 is unavailable", status(504, map[string]string{"Retry-After": "3"}, ""), HTTPConfig{}, unavailable(3 * time.Second)},
		{"slow answer times out as unavailable", waitForCaller(false), HTTPConfig{Timeout: 100 * time.Millisecond}, unavailable(time.Second)},
		{"answer stalling mid-body times out as unavailable", waitForCaller(true), HTTPConfig{Timeout: 100 * time.Millisecond}, unavailable(time.Second)},
		{"400 passes the service's field errors", status(400, nil, problemBody), HTTPConfig{}, refused(apierr.ValidationFailed, "text too long", 1)},
		{"422 without a problem body is a validation failure", status(422, nil, "nope"), HTTPConfig{}, refused(apierr.ValidationFailed, "The service rejected the input.", 0)},
		{"404 is not found", status(404, nil, `{"detail":"no such memory"}`), HTTPConfig{}, refused(apierr.NotFound, "no such memory", 0)},
		{"409 is a conflict", status(409, nil, ""), HTTPConfig{}, refused(apierr.Conflict, "The service refused the operation in its current state.", 0)},
		{"500 is bad", status(500, nil, "boom"), HTTPConfig{}, badUpstream},
		{"401 (our credential) is bad", status(401, nil, ""), HTTPConfig{}, badUpstream},
		{"a redirect is not followed", status(302, map[string]string{"Location": "https://example.com/"}, ""), HTTPConfig{}, badUpstream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHTTP(t, tc.handler, tc.cfg)
			res, err := h.Invoke(context.Background(), testRequest())
			tc.want(t, res, err)
		})
	}
}

func TestHTTPSendsTheDocumentedRequest(t *testing.T) {
	var got *http.Request
	var body map[string]any
	h := newTestHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		answer200("0.01")(w, r)
	}, HTTPConfig{CredentialHeader: "X-Api-Key", Credential: "s3cret"})
	if _, err := h.Invoke(context.Background(), testRequest()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"method": http.MethodPost, "path": "/svc/operations/research.query",
		"Content-Type": "application/json", "X-Api-Key": "s3cret",
		HeaderRequestID: "req_123", HeaderMaxChargeCredits: "0.02",
	} {
		v := got.Header.Get(name)
		switch name {
		case "method":
			v = got.Method
		case "path":
			v = got.URL.Path
		}
		if v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	want := map[string]any{
		"input":   map[string]any{"question": "why?"},
		"context": map[string]any{"accountId": "acct_1", "projectId": "prj_1", "endUser": "user-7"},
	}
	if g, w := mustJSON(t, body), mustJSON(t, want); g != w {
		t.Errorf("body %s, want %s", g, w)
	}
}

func TestHTTPOmitsAbsentProjectAndEndUser(t *testing.T) {
	var body map[string]any
	h := newTestHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		answer200("0")(w, r)
	}, HTTPConfig{})
	r := testRequest()
	r.ProjectID, r.EndUser = "", ""
	if _, err := h.Invoke(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if g := mustJSON(t, body["context"]); g != `{"accountId":"acct_1"}` {
		t.Errorf("context %s", g)
	}
}

func TestHTTPDropsAnUnsafeUpstreamRequestID(t *testing.T) {
	for _, id := range []string{"has space", strings.Repeat("x", 201), "naïve"} {
		h := newTestHTTP(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(HeaderChargedCredits, "0")
			w.Header().Set(HeaderUpstreamRequestID, id)
			io.WriteString(w, `{"output":null}`)
		}, HTTPConfig{})
		res, err := h.Invoke(context.Background(), testRequest())
		if err != nil || res.UpstreamRequestID != "" || string(res.Output) != "null" {
			t.Errorf("id %q: got %+v, %v", id, res, err)
		}
	}
}

func TestHTTPUnreachableServiceIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	h, err := NewHTTP(HTTPConfig{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Invoke(context.Background(), testRequest())
	unavailable(time.Second)(t, Result{}, err)
}

func TestHTTPCallerGoingAwayIsNotAnOutage(t *testing.T) {
	h := newTestHTTP(t, waitForCaller(false), HTTPConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := h.Invoke(ctx, testRequest())
	var ue *UnavailableError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ue) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestHTTPCapsAServiceFloodingFieldErrors(t *testing.T) {
	var p problem
	p.Detail = strings.Repeat("d", 2000)
	for range 50 {
		p.Errors = append(p.Errors, struct {
			Location string `json:"location"`
			Message  string `json:"message"`
		}{"input.x", strings.Repeat("m", 1000)})
	}
	h := newTestHTTP(t, status(400, nil, mustJSON(t, p)), HTTPConfig{})
	_, err := h.Invoke(context.Background(), testRequest())
	var ae *apierr.Error
	if !errors.As(err, &ae) || len(ae.Errors) != 20 || len([]rune(ae.Detail)) != 501 || len([]rune(ae.Errors[0].Message)) != 501 {
		t.Fatalf("got %v", err)
	}
}

func TestNewHTTPRefusesUnsafeConfiguration(t *testing.T) {
	for _, cfg := range []HTTPConfig{
		{BaseURL: "http://upstream.example.com"},
		{BaseURL: "ftp://127.0.0.1"},
		{BaseURL: "https://user:pw@upstream.example.com"},
		{BaseURL: "https://upstream.example.com/?q=1"},
		{BaseURL: "/relative"},
		{BaseURL: "https://upstream.example.com", Credential: "no-header"},
		{BaseURL: "https://upstream.example.com", CredentialHeader: "X-Api-Key"},
	} {
		if _, err := NewHTTP(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	for _, base := range []string{"https://upstream.example.com/v1/", "http://127.0.0.1:9000", "http://localhost", "http://[::1]:80"} {
		if _, err := NewHTTP(HTTPConfig{BaseURL: base}); err != nil {
			t.Errorf("%s refused: %v", base, err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
