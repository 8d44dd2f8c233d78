package publicapi

import (
	"compress/gzip"
	"context"
	"embed"
	"io"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/base/apierr"
)

// assets holds the reference renderer: Redoc's standalone bundle at the
// version pinned in mk/docs.mk (make docs-assets), gzipped. It is served by
// this function itself, so the page needs no CDN and works offline; kept
// compressed it adds a third of a megabyte to the function, not one.
//
//go:embed assets/redoc.standalone.js.gz
var assets embed.FS

// docsPage loads Redoc, which renders the OpenAPI document: one section per
// tag (endpoint group), each operation's description (scopes, idempotency,
// limit operation, service access), its errors, and its x-codeSamples. The
// URLs are relative so the page works at /docs and /v1/docs alike, and
// behind a path prefix. No inline script: the <redoc> element is found by
// the bundle itself.
const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Platform API reference</title>
<style>body{margin:0}</style></head>
<body>
<noscript><p>This reference needs JavaScript. The contract itself is <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p></noscript>
<redoc spec-url="openapi.json" path-in-middle-panel="true" required-props-first="true" sort-tags-alphabetically="true" expand-single-schema-field="true" hide-hostname="true"></redoc>
<script src="docs/assets/redoc.standalone.js"></script>
</body></html>
`

// redocLogo is the one resource the bundle loads from elsewhere: the
// Redocly logo of its sidebar's footer, an image (it hides the image when
// the load fails, offline).
const redocLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

// docsCSP allows what Redoc needs and nothing else from elsewhere: its own
// script, the inline styles it generates, its search worker (a blob URL),
// data: images and its logo, that one file by its full URL.
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: " + redocLogo + "; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

type assetInput struct {
	Name           string `path:"name" doc:"The asset's file name: redoc.standalone.js"`
	AcceptEncoding string `header:"Accept-Encoding"`
}

func docs(ctx context.Context, _ *struct{}) (*huma.StreamResponse, error) {
	return &huma.StreamResponse{Body: func(ctx huma.Context) {
		ctx.SetHeader("Content-Type", "text/html; charset=utf-8")
		ctx.SetHeader("Content-Security-Policy", docsCSP)
		ctx.SetHeader("Cache-Control", "public, max-age=300")
		ctx.SetStatus(http.StatusOK)
		_, _ = io.WriteString(ctx.BodyWriter(), docsPage)
	}}, nil
}

// asset answers the bundle gzipped to every client that accepts gzip (every
// browser) and unpacks it for the rest.
func asset(ctx context.Context, in *assetInput) (*huma.StreamResponse, error) {
	f, err := assets.Open("assets/" + in.Name + ".gz")
	if err != nil {
		return nil, apierr.New(apierr.NotFound, "No asset %q.", in.Name)
	}
	gzipped := strings.Contains(in.AcceptEncoding, "gzip")
	return &huma.StreamResponse{Body: func(ctx huma.Context) {
		defer f.Close()
		ctx.SetHeader("Content-Type", "text/javascript; charset=utf-8")
		ctx.SetHeader("Cache-Control", "public, max-age=86400")
		ctx.SetHeader("Vary", "Accept-Encoding")
		var body io.Reader = f
		if gzipped {
			ctx.SetHeader("Content-Encoding", "gzip")
		} else if zr, err := gzip.NewReader(f); err == nil {
			body = zr
		}
		ctx.SetStatus(http.StatusOK)
		_, _ = io.Copy(ctx.BodyWriter(), body)
	}}, nil
}
