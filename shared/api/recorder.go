package api

import (
	"bytes"
	"net/http"
)

// recorder is the kernel's one ResponseWriter wrapper. The access line
// (edge), the audit event (auditing) and the idempotency layer
// (idempotent) each need to know how a response ended, and the last of
// them must also keep the response back until it is stored; one type with
// one meaning of status and bytes keeps the three in agreement.
//
// A passing recorder (passing) hands every call on as it comes. A holding
// recorder (holding) keeps the header, the status and the body to itself
// until release sends them, so a response can be stored before, and
// exactly as, it is sent.
type recorder struct {
	w http.ResponseWriter
	// held is the header of a holding recorder until release; nil when
	// the recorder passes everything on.
	held http.Header
	// status is the first status written: WriteHeader's, or 200 on a
	// Write without one; 0 while nothing is written.
	status int
	// bytes counts the body written through the recorder.
	bytes int
	body  bytes.Buffer
	// audit, when set, records the request's audit event once, after
	// status is known and before the status line reaches the client, so
	// no answer is ever seen without its event.
	audit *auditHook
	// failed is the first error of a write to the client (gone, reset).
	failed error
}

// committing records the audit event once, as the response leaves.
func (r *recorder) committing() {
	if h := r.audit; h != nil {
		r.audit = nil
		h.record()
	}
}

// passing wraps w to watch its response go by.
func passing(w http.ResponseWriter) *recorder { return &recorder{w: w} }

// holding wraps w to keep its response back until release.
func holding(w http.ResponseWriter) *recorder { return &recorder{w: w, held: http.Header{}} }

func (r *recorder) Header() http.Header {
	if r.held != nil {
		return r.held
	}
	return r.w.Header()
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	if r.held == nil {
		r.committing()
		r.w.WriteHeader(code)
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.held != nil {
		return r.body.Write(b)
	}
	r.committing()
	n, err := r.w.Write(b)
	r.bytes += n
	if err != nil && r.failed == nil {
		r.failed = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the writer below a passing
// recorder (deadlines, flushing). A holding recorder answers nil, which
// the controller reports as not supported: nothing may reach the client
// before the response is stored.
func (r *recorder) Unwrap() http.ResponseWriter {
	if r.held != nil {
		return nil
	}
	return r.w
}

// replayed tells whether the response is an idempotent replay of a stored
// one (idempotent marks those).
func (r *recorder) replayed() bool { return r.Header().Get("Idempotent-Replayed") == "true" }

// release sends a holding recorder's response: its header, its status (200
// when nothing set one) and its body.
func (r *recorder) release() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	dst := r.w.Header()
	for h, v := range r.held {
		dst[h] = v
	}
	r.w.WriteHeader(r.status)
	n, _ := r.w.Write(r.body.Bytes())
	r.bytes += n
}
