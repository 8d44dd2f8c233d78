package publicapi

import (
	"net/http"
	"strings"

	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/console"
)

// consoleCSP is stricter than the reference page's: the console's own
// script and style sheet, calls to this origin only (where the key goes),
// no inline script or style, no frames around it. Its charts set styles
// through the CSSOM, which style-src does not govern.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// registerConsole serves the browser console (docs/console.md) as pages,
// not operations: it is a client of the API, so the OpenAPI document and
// the SDKs do not list it.
func registerConsole(k *api.Kernel) {
	k.Page("/console", "console.read", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		serveFile(w, r, console.Page())
	}))
	k.Page("/console/assets/{name}", "console.assets.read", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := console.Asset(r.PathValue("name"))
		if !ok {
			api.WriteProblem(w, r, apierr.New(apierr.NotFound, "No such console asset: the console serves console.js and console.css."))
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		serveFile(w, r, f)
	}))
}

// serveFile answers the file gzipped to every client that accepts gzip
// (every browser) and plain to the rest, under the console's policy.
func serveFile(w http.ResponseWriter, r *http.Request, f *console.File) {
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Vary", "Accept-Encoding")
	body := f.Plain
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = f.Gzipped()
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
