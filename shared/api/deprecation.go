package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/base/routes"
)

// announceDeprecation states a deprecated route's policy on a response
// (CHANGELOG.md's policy): Deprecation as an RFC 9745 structured date, Sunset as an
// RFC 8594 HTTP-date, and links to the successor and to the reference.
// The headers come from the route table on every request rather than from
// the stored response, so an idempotent replay carries them as well, with
// the policy as it is now.
func announceDeprecation(h http.Header, rt routes.Route) {
	d := rt.Deprecated
	if d == nil {
		return
	}
	h.Set("Deprecation", "@"+strconv.FormatInt(d.Since.Unix(), 10))
	h.Set("Sunset", d.Sunset.UTC().Format(http.TimeFormat))
	h.Add("Link", "<"+successorURL(d)+`>; rel="successor-version"`)
	h.Add("Link", `</docs>; rel="deprecation"; type="text/html"`)
}

// successorURL is the successor's path under the base URL: every route,
// public ones too, answers under /v1.
func successorURL(d *routes.Deprecation) string { return "/" + APIVersion + d.SuccessorPath() }

// markDeprecated flags a deprecated operation in the document and puts its
// dates and replacement at the top of its description, where a reader of
// the reference sees them before anything else.
func markDeprecated(op *huma.Operation, rt routes.Route) {
	d := rt.Deprecated
	if d == nil {
		return
	}
	op.Deprecated = true
	successor := "`" + successorURL(d) + "`"
	if s, ok := routes.ByID(d.Successor); ok {
		successor = "`" + s.Method + " " + successorURL(d) + "` (`" + s.ID + "`)"
	}
	op.Description = "**Deprecated** since " + d.Since.Format(time.DateOnly) + "; stops working on " + d.Sunset.Format(time.DateOnly) +
		" (`Sunset`). Use " + successor + " instead.\n\n" + op.Description
	op.Extensions["x-deprecated-since"] = d.Since.Format(time.DateOnly)
	op.Extensions["x-sunset"] = d.Sunset.Format(time.DateOnly)
	op.Extensions["x-successor"] = successorURL(d)
}
