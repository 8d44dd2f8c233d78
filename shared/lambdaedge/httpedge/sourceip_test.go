package httpedge

import (
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// The address keys' allowedIps are checked against is API Gateway's
// sourceIp, whatever X-Forwarded-For the client sends.
func TestSourceIPComesFromTheRequestContextNeverXForwardedFor(t *testing.T) {
	var got netip.Addr
	adapter := httpadapter.NewV2(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = SourceIP(r)
		w.WriteHeader(http.StatusNoContent)
	}))
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RawPath: "/v1/api-keys", Headers: map[string]string{"x-forwarded-for": "127.0.0.1"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
			Method: "GET", Path: "/v1/api-keys", SourceIP: "198.51.100.7",
		}},
	}
	if _, err := adapter.ProxyWithContext(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if got != netip.MustParseAddr("198.51.100.7") {
		t.Fatalf("SourceIP = %v, want 198.51.100.7", got)
	}
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("X-Forwarded-For", "127.0.0.1")
	if a := SourceIP(r); a.IsValid() {
		t.Fatalf("SourceIP without a request context = %v, want none", a)
	}
}
