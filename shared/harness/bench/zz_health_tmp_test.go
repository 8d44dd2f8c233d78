package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func BenchmarkHealthTmp(b *testing.B) {
	h, _ := benchServer(b, true)
	req := httptest.NewRequest(http.MethodGet, "/health", nil)
	b.ReportAllocs()
	for b.Loop() {
		serveOK(b, h, req, http.StatusOK)
	}
}
