package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestARecorderKeepsTheFirstStatusAndCountsTheBody: whether it passes the
// response on or holds it back, the status it reports is the first one
// written (200 for a body without one) and its byte count is what reached
// the writer below.
func TestARecorderKeepsTheFirstStatusAndCountsTheBody(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wrap       func(http.ResponseWriter) *recorder
		write      func(w http.ResponseWriter)
		wantStatus int
		wantBody   string
	}{
		{"passing, explicit status", passing, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("made"))
		}, http.StatusCreated, "made"},
		{"passing, body only", passing, func(w http.ResponseWriter) { _, _ = w.Write([]byte("ok")) }, http.StatusOK, "ok"},
		{"passing, status twice", passing, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusConflict)
			w.WriteHeader(http.StatusOK)
		}, http.StatusConflict, ""},
		{"holding, explicit status", holding, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte("later"))
		}, http.StatusAccepted, "later"},
		{"holding, nothing written", holding, func(http.ResponseWriter) {}, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			below := httptest.NewRecorder()
			rec := tc.wrap(below)
			tc.write(rec)
			if rec.held != nil {
				rec.release()
			}
			if rec.status != tc.wantStatus || below.Code != tc.wantStatus {
				t.Errorf("status: recorded %d, sent %d, want %d", rec.status, below.Code, tc.wantStatus)
			}
			if got := below.Body.String(); got != tc.wantBody || rec.bytes != len(tc.wantBody) {
				t.Errorf("body %q (%d bytes counted), want %q", got, rec.bytes, tc.wantBody)
			}
		})
	}
}

// TestAHoldingRecorderSendsNothingUntilReleased: the idempotency layer stores
// a response before it is sent, so no header, status, body or flush may
// reach the client first; release then sends exactly what was held.
func TestAHoldingRecorderSendsNothingUntilReleased(t *testing.T) {
	below := httptest.NewRecorder()
	below.Header().Set("X-Request-Id", "req_1")
	rec := holding(below)
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(http.StatusCreated)
	_, _ = rec.Write([]byte(`{"id":`))
	_, _ = rec.Write([]byte(`"prj_1"}`))
	if err := http.NewResponseController(rec).Flush(); !errors.Is(err, http.ErrNotSupported) {
		t.Errorf("flushing a held response: %v, want ErrNotSupported", err)
	}
	if below.Flushed || below.Body.Len() != 0 || below.Header().Get("Content-Type") != "" {
		t.Fatalf("before release the client got flushed=%v body=%q header=%v", below.Flushed, below.Body, below.Header())
	}
	rec.release()
	res := below.Result()
	if res.StatusCode != http.StatusCreated || below.Body.String() != `{"id":"prj_1"}` ||
		res.Header.Get("Content-Type") != "application/json" || res.Header.Get("X-Request-Id") != "req_1" {
		t.Errorf("released %d %v %q", res.StatusCode, res.Header, below.Body)
	}
}

// TestAPassingRecorderLetsTheResponseControllerThrough: deadlines and
// flushing reach the writer below the access line's and the audit's
// recorders.
func TestAPassingRecorderLetsTheResponseControllerThrough(t *testing.T) {
	below := httptest.NewRecorder()
	rec := passing(passing(below))
	if err := http.NewResponseController(rec).Flush(); err != nil {
		t.Fatal(err)
	}
	if !below.Flushed {
		t.Error("the flush did not reach the writer below")
	}
}
