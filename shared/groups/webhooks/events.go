package webhooks

import (
	"encoding/json"
	"slices"
	"time"

	"platformapi/shared/groups/webhooks/eventdef"
)

// AllEvents subscribes a webhook to every event, including ones added later.
const AllEvents = "*"

// EventNames lists the catalogue's names in order.
func EventNames() []string {
	out := make([]string, len(Catalogue))
	for i, e := range Catalogue {
		out[i] = e.Name
	}
	return out
}

// KnownEvent reports whether name is in the catalogue.
func KnownEvent(name string) bool {
	return slices.ContainsFunc(Catalogue, func(e eventdef.Def) bool { return e.Name == name })
}

// Payload is the body of every delivery.
type Payload struct {
	ID        string          `json:"id" doc:"Event id (evt_…); a replay carries the same id, so receivers can deduplicate"`
	Type      string          `json:"type" doc:"Event name, also in X-Service-Event"`
	CreatedAt time.Time       `json:"createdAt"`
	AccountID string          `json:"accountId"`
	ProjectID *string         `json:"projectId" doc:"The project the event happened in, or null at account level"`
	Data      json.RawMessage `json:"data"`
}
