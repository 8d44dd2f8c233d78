package stackemu

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"platformapi/shared/harness/lambdarie"
)

// route is one AWS::ApiGatewayV2::Route: its key and the function its
// integration (AWS_PROXY, payload format 2.0) names.
type route struct {
	key      string // "GET /v1/things/{id}", "ANY /", "$default"
	method   string
	segments []string
	fn       *function
}

// maxRequest is API Gateway's limit on a request's payload.
const maxRequest = 10 << 20

// front is the HTTP API: it chooses a route as API Gateway does, sends the
// function a payload 2.0 event and writes back the response it returns.
type front struct {
	routes  []route
	apiID   string
	account string
	log     *slog.Logger
}

// match picks the route API Gateway would: an exact method over ANY, the
// most specific path (literal segments over {param}, {param} over
// {proxy+}), and $default when nothing else matches.
func (f *front) match(method, path string) (*route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *route
	var bestParams map[string]string
	bestScore := -1
	for i := range f.routes {
		r := &f.routes[i]
		if r.key == "$default" || (r.method != "ANY" && r.method != method) {
			continue
		}
		params, score, ok := matchPath(r.segments, segs)
		if !ok {
			continue
		}
		score = score*2 + map[bool]int{true: 1}[r.method == method]
		if score > bestScore {
			best, bestParams, bestScore = r, params, score
		}
	}
	if best != nil {
		return best, bestParams
	}
	for i := range f.routes {
		if f.routes[i].key == "$default" {
			return &f.routes[i], nil
		}
	}
	return nil, nil
}

// matchPath scores a match: 3 per literal segment, 2 per {param}, 1 for a
// greedy {proxy+}.
func matchPath(pattern, segs []string) (map[string]string, int, bool) {
	params := map[string]string{}
	score := 0
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "+}") {
			if i >= len(segs) || segs[i] == "" {
				return nil, 0, false
			}
			params[p[1:len(p)-2]] = strings.Join(segs[i:], "/")
			return params, score + 1, true
		}
		if i >= len(segs) {
			return nil, 0, false
		}
		switch {
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			if segs[i] == "" {
				return nil, 0, false
			}
			params[p[1:len(p)-1]] = segs[i]
			score += 2
		case p == segs[i]:
			score += 3
		default:
			return nil, 0, false
		}
	}
	if len(pattern) != len(segs) {
		return nil, 0, false
	}
	return params, score, true
}

func (f *front) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r, params := f.match(req.Method, req.URL.Path)
	if r == nil {
		writeGatewayError(w, http.StatusNotFound, "Not Found")
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRequest+1))
	if err != nil || len(body) > maxRequest {
		writeGatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	ev := f.event(req, r, params, body)
	payload, err := json.Marshal(ev)
	if err != nil {
		writeGatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second) // API Gateway's integration timeout
	defer cancel()
	out, err := r.fn.invoke(ctx, payload)
	if err != nil {
		var fe *lambdarie.FunctionError
		if !errors.As(err, &fe) {
			f.log.Error("integration failed", "function", r.fn.name, "error", err.Error())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			writeGatewayError(w, http.StatusServiceUnavailable, "Service Unavailable")
			return
		}
		writeGatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	writeResponse(w, out)
}

// event is the payload format 2.0 request API Gateway sends.
func (f *front) event(req *http.Request, r *route, params map[string]string, body []byte) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, v := range req.Header {
		if strings.EqualFold(k, "Cookie") {
			continue
		}
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	headers["host"] = req.Host
	var query map[string]string
	for k, v := range req.URL.Query() {
		if query == nil {
			query = map[string]string{}
		}
		query[k] = strings.Join(v, ",")
	}
	var cookies []string
	for _, c := range req.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	now := time.Now()
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: r.key, RawPath: req.URL.EscapedPath(), RawQueryString: req.URL.RawQuery,
		Cookies: cookies, Headers: headers, QueryStringParameters: query,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: r.key, AccountID: f.account, Stage: "$default", RequestID: requestID(),
			APIID: f.apiID, DomainName: req.Host, DomainPrefix: strings.Split(req.Host, ".")[0],
			Time: now.UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: req.Method, Path: req.URL.Path, Protocol: req.Proto, SourceIP: sourceIP(req.RemoteAddr), UserAgent: req.UserAgent(),
			},
		},
	}
	if len(params) > 0 {
		ev.PathParameters = params
	}
	if len(body) > 0 {
		if utf8.Valid(body) && !strings.HasPrefix(req.Header.Get("Content-Type"), "application/octet-stream") {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// writeResponse writes a payload 2.0 response. A payload without a
// statusCode is, as API Gateway reads it, a 200 whose body is the payload.
func writeResponse(w http.ResponseWriter, out []byte) {
	var probe map[string]json.RawMessage
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(out, &probe) != nil || probe["statusCode"] == nil || json.Unmarshal(out, &resp) != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	keys := make([]string, 0, len(resp.Headers))
	for k := range resp.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.Header().Set(k, resp.Headers[k])
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			writeGatewayError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		body = decoded
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// writeGatewayError answers as API Gateway does when it, not the function,
// fails the request.
func writeGatewayError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func sourceIP(remote string) string {
	if i := strings.LastIndexByte(remote, ':'); i > 0 {
		return strings.Trim(remote[:i], "[]")
	}
	return remote
}

func requestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
