package awsenv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Fault is an injected failure.
type Fault int

const (
	// Throttle answers as the service does when it sheds load
	// (ThrottlingException; SlowDown for S3).
	Throttle Fault = iota + 1
	// ServerError answers 500 Internal Server Error.
	ServerError
	// LostAnswer lets a call's first attempt reach the service and then
	// answers 500 in place of what the service said, as when a connection
	// drops after a write was applied: the SDK sends the call again.
	LostAnswer
)

// Faults makes chosen operations fail as if the service had answered with an
// error, for tests proving that writes answer "unavailable" and leave no
// partial state. The failure is a real HTTP response handed to the SDK's own
// deserializers and retryer, so adapters see exactly the errors AWS produces.
type Faults struct {
	mu    sync.Mutex
	rules map[string]Fault
	hits  map[string]int
}

func NewFaults() *Faults { return &Faults{rules: map[string]Fault{}, hits: map[string]int{}} }

// Set makes every attempt of op ("DynamoDB.TransactWriteItems") fail with f
// (LostAnswer: the first attempt of every call) until Clear.
func (f *Faults) Set(op string, fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules[op] = fault
}

// Clear removes every fault.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.rules)
}

// Hits returns how many attempts of op were failed.
func (f *Faults) Hits(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[op]
}

func (f *Faults) match(op string, req *smithyhttp.Request) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fault, ok := f.rules[op]
	if ok && fault == LostAnswer && (req == nil || !strings.HasPrefix(req.Header.Get("Amz-Sdk-Request"), "attempt=1;")) {
		return 0, false
	}
	if ok {
		f.hits[op]++
	}
	return fault, ok
}

// APIOption installs the injector at the very end of the Deserialize step,
// where the request would otherwise go on the wire.
func (f *Faults) APIOption() func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("awsenvFaults",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				req, _ := in.Request.(*smithyhttp.Request)
				fault, ok := f.match(opName(ctx), req)
				if !ok {
					return next.HandleDeserialize(ctx, in)
				}
				if fault == LostAnswer {
					out, _, err := next.HandleDeserialize(ctx, in)
					if resp, isHTTP := out.RawResponse.(*smithyhttp.Response); err == nil && isHTTP {
						resp.Body.Close()
					}
				}
				return middleware.DeserializeOutput{RawResponse: faultResponse(ctx, fault, req)}, middleware.Metadata{}, nil
			}), middleware.After)
	}
}

func faultResponse(ctx context.Context, fault Fault, req *smithyhttp.Request) *smithyhttp.Response {
	xml := strings.HasPrefix(opName(ctx), "S3.")
	status, code := http.StatusInternalServerError, "InternalFailure"
	if fault == Throttle {
		status, code = http.StatusBadRequest, "ThrottlingException"
		if xml {
			status, code = http.StatusServiceUnavailable, "SlowDown"
		}
	}
	h := http.Header{}
	var body string
	if xml {
		h.Set("Content-Type", "application/xml")
		body = "<Error><Code>" + code + "</Code><Message>injected fault</Message></Error>"
	} else {
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("X-Amzn-ErrorType", code)
		body = `{"__type":"` + code + `","message":"injected fault"}`
	}
	resp := &http.Response{
		StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
	if req != nil {
		resp.Request = req.Request
	}
	return &smithyhttp.Response{Response: resp}
}
