package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/routes"
)

type healthBody struct {
	Status     string `json:"status" enum:"ok"`
	APIVersion string `json:"apiVersion" enum:"v1"`
	Backend    string `json:"backend" doc:"Storage backend: embedded or aws"`
	Time       string `json:"time" doc:"Server time, RFC 3339 UTC"`
}

type pricedOperation struct {
	OperationID      string  `json:"operationId"`
	Summary          string  `json:"summary"`
	PriceCredits     float64 `json:"priceCredits" doc:"Maximum charge in credits; the exact charge is what the service reports"`
	RequiresApproval bool    `json:"requiresApproval"`
}

type pricedService struct {
	ServiceID  string            `json:"serviceId"`
	Name       string            `json:"name"`
	Available  bool              `json:"available"`
	Operations []pricedOperation `json:"operations"`
}

type pricingBody struct {
	CreditsPerUSD float64         `json:"creditsPerUsd"`
	Services      []pricedService `json:"services"`
}

type pricingInput struct {
	Service string `query:"service" doc:"Only this service: platform-api, managed-wallets, managed-trading, universal-swaps, managed-agents or managed-workflows"`
}

func publicRoute(op string) routes.Route {
	for _, rt := range routes.Public {
		if rt.Operation == op {
			return rt
		}
	}
	panic("httpapi: no public route " + op)
}

func (s *Server) registerPublic() {
	if !s.mountedGroup("public") {
		return
	}
	huma.Register(s.api, operation(publicRoute("health.read"), true), func(ctx context.Context, _ *struct{}) (*struct{ Body healthBody }, error) {
		return &struct{ Body healthBody }{Body: healthBody{Status: "ok", APIVersion: APIVersion, Backend: s.deps.Backend, Time: s.now().UTC().Format("2006-01-02T15:04:05Z")}}, nil
	})
	huma.Register(s.api, operation(publicRoute("pricing.read"), true), func(ctx context.Context, in *pricingInput) (*struct{ Body pricingBody }, error) {
		if in.Service != "" && !slices.Contains(catalog.PricingServices, in.Service) {
			return nil, apierr.Invalid("Unknown pricing service.", apierr.Field("query.service", "must be one of %s", strings.Join(catalog.PricingServices, ", ")))
		}
		out := pricingBody{CreditsPerUSD: catalog.CreditsPerUSD, Services: []pricedService{}}
		for _, svc := range catalog.Services() {
			if in.Service != "" && svc.ID != in.Service {
				continue
			}
			ps := pricedService{ServiceID: svc.ID, Name: svc.Name, Available: svc.Available, Operations: []pricedOperation{}}
			for _, o := range svc.Operations {
				ps.Operations = append(ps.Operations, pricedOperation{OperationID: o.ID, Summary: o.Summary, PriceCredits: float64(o.PriceMicro) / catalog.MicroPerCredit, RequiresApproval: o.Approval})
			}
			out.Services = append(out.Services, ps)
		}
		return &struct{ Body pricingBody }{Body: out}, nil
	})
	openapiOp := operation(publicRoute("openapi.read"), true)
	openapiOp.Responses = map[string]*huma.Response{"200": {Description: "The OpenAPI 3.1 document", Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: "object"}}}}}
	huma.Register(s.api, openapiOp, func(ctx context.Context, _ *struct{}) (*huma.StreamResponse, error) {
		doc, _ := s.document()
		return rawResponse("application/json", doc), nil
	})
	docsOp := operation(publicRoute("docs.read"), true)
	docsOp.Responses = map[string]*huma.Response{"200": {Description: "An HTML reference generated from the OpenAPI document", Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: "string"}}}}}
	huma.Register(s.api, docsOp, func(ctx context.Context, _ *struct{}) (*huma.StreamResponse, error) {
		_, docs := s.document()
		return rawResponse("text/html; charset=utf-8", docs), nil
	})
}

func rawResponse(contentType string, body []byte) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(ctx huma.Context) {
		ctx.SetHeader("Content-Type", contentType)
		ctx.SetStatus(http.StatusOK)
		_, _ = ctx.BodyWriter().Write(body)
	}}
}
