package lambdaemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxResponse is Lambda's limit on a synchronous invocation's response.
const maxResponse = 6 << 20

// FunctionError is an error the function itself reported, at init (through
// init/error) or for one event (through invocation/{id}/error).
type FunctionError struct {
	Phase   string // "init" or "invoke"
	Type    string // errorType, such as Runtime.InitError
	Message string // errorMessage
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("lambdaemu: function %s error %s: %s", e.Phase, e.Type, e.Message)
}

type invocation struct {
	id    string
	event []byte
	done  chan result // buffered: the function's answer never waits for a reader
}

type result struct {
	payload []byte
	err     error
}

// runtimeAPI is the Runtime API side of one function: one event at a time,
// handed over to the function's poll as Lambda does.
type runtimeAPI struct {
	cfg        Config
	pending    chan *invocation // unbuffered: an event is delivered only to a waiting poll
	ready      chan struct{}    // closed at the first poll
	readyOnce  sync.Once
	firstPoll  time.Time // written before ready is closed
	initFailed chan error
	stopping   chan struct{}

	mu       sync.Mutex
	inflight map[string]*invocation // delivered, not yet answered
}

func newRuntimeAPI(cfg Config) *runtimeAPI {
	return &runtimeAPI{
		cfg: cfg, pending: make(chan *invocation), ready: make(chan struct{}),
		initFailed: make(chan error, 1), stopping: make(chan struct{}),
		inflight: map[string]*invocation{},
	}
}

func (a *runtimeAPI) routes() http.Handler {
	const base = "/2018-06-01/runtime"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+base+"/invocation/next", a.next)
	mux.HandleFunc("POST "+base+"/invocation/{id}/response", a.response)
	mux.HandleFunc("POST "+base+"/invocation/{id}/error", a.invokeError)
	mux.HandleFunc("POST "+base+"/init/error", a.initError)
	return mux
}

func (a *runtimeAPI) newInvocation(event []byte) *invocation {
	return &invocation{id: uuid(), event: event, done: make(chan result, 1)}
}

// next blocks until an event is invoked, then delivers it with the headers
// aws-lambda-go reads. The first call marks the end of init.
func (a *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	a.readyOnce.Do(func() {
		a.firstPoll = time.Now()
		close(a.ready)
	})
	var inv *invocation
	select {
	case inv = <-a.pending:
	case <-r.Context().Done():
		return
	case <-a.stopping:
		return
	}
	a.mu.Lock()
	a.inflight[inv.id] = inv
	a.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(a.cfg.Timeout).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", fmt.Sprintf("arn:aws:lambda:%s:123456789012:function:%s", a.cfg.Region, a.cfg.Name))
	h.Set("Lambda-Runtime-Trace-Id", traceID())
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(inv.event); err != nil {
		a.finish(inv.id, result{err: fmt.Errorf("lambdaemu: deliver event: %w", err)})
	}
}

// finish completes a delivered invocation; false if id is not one.
func (a *runtimeAPI) finish(id string, res result) bool {
	a.mu.Lock()
	inv, ok := a.inflight[id]
	delete(a.inflight, id)
	a.mu.Unlock()
	if ok {
		inv.done <- res
	}
	return ok
}

func (a *runtimeAPI) response(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxResponse+1))
	if err != nil {
		runtimeError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
		return
	}
	if len(body) > maxResponse {
		a.finish(r.PathValue("id"), result{err: &FunctionError{Phase: "invoke", Type: "Function.ResponseSizeTooLarge", Message: "response payload exceeds 6291456 bytes"}})
		runtimeError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "response payload too large")
		return
	}
	a.accept(w, r.PathValue("id"), result{payload: body})
}

func (a *runtimeAPI) invokeError(w http.ResponseWriter, r *http.Request) {
	a.accept(w, r.PathValue("id"), result{err: readFunctionError(r, "invoke")})
}

func (a *runtimeAPI) initError(w http.ResponseWriter, r *http.Request) {
	select {
	case a.initFailed <- readFunctionError(r, "init"):
	default: // only the first init error counts
	}
	w.WriteHeader(http.StatusAccepted)
}

func (a *runtimeAPI) accept(w http.ResponseWriter, id string, res result) {
	if !a.finish(id, res) {
		runtimeError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation "+id+" in flight")
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// readFunctionError reads the error document a runtime posts; the type
// header wins, as it does on Lambda.
func readFunctionError(r *http.Request, phase string) *FunctionError {
	var doc struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxResponse))
	if json.Unmarshal(body, &doc) != nil {
		doc.ErrorMessage = string(body)
	}
	fe := &FunctionError{Phase: phase, Type: doc.ErrorType, Message: doc.ErrorMessage}
	if t := r.Header.Get("Lambda-Runtime-Function-Error-Type"); t != "" {
		fe.Type = t
	}
	return fe
}

func runtimeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": msg})
}

func uuid() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func traceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), hex.EncodeToString(randomBytes(12)), hex.EncodeToString(randomBytes(8)))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}
