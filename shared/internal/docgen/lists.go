package main

import (
	"fmt"
	"strings"

	"platformapi/shared/base/routes"
	"platformapi/shared/groups/webhooks"
)

// routesFragment is every route of shared/base/routes, one table per group (the
// Lambda function that serves it), in the table's order.
func routesFragment() string {
	var b strings.Builder
	b.WriteString("Authenticated paths are under `/v1`; the public routes and `/mcp` are served at the root and under `/v1`.\n")
	for _, group := range append(routes.Groups(), "mcp") {
		fmt.Fprintf(&b, "\n## %s\n\n", group)
		b.WriteString("| method | path | operation id | scopes | `Idempotency-Key` | summary |\n|---|---|---|---|---|---|\n")
		for _, rt := range routes.OfGroup(group) {
			path := rt.Path
			if rt.Group != "public" && rt.Group != "mcp" {
				path = "/v1" + path
			}
			scopes := "—"
			if len(rt.Scopes) > 0 {
				scopes = "`" + strings.Join(rt.Scopes, "`, `") + "`"
			}
			if rt.CreditToken {
				scopes += " (or a credit token)"
			}
			idem := ""
			if rt.Idem {
				idem = "required"
			}
			summary := rt.Summary
			if rt.Deprecated != nil {
				summary += fmt.Sprintf(" (deprecated since %s, sunset %s)", rt.Deprecated.Since.Format("2006-01-02"), rt.Deprecated.Sunset.Format("2006-01-02"))
			}
			fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s | %s |\n", rt.Method, path, rt.ID, scopes, idem, cell(summary))
		}
	}
	return b.String()
}

// eventsFragment is the webhook event catalogue of shared/groups/webhooks.
func eventsFragment() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events. A webhook subscribed to `%s` receives each one its creator key may read.\n\n", len(webhooks.Catalogue), webhooks.AllEvents)
	b.WriteString("| event | emitted by | its creator must be able to call | description |\n|---|---|---|---|\n")
	for _, e := range webhooks.Catalogue {
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s |\n", e.Name, e.EmittedBy, e.ReadBy, cell(e.Description))
	}
	return b.String()
}
