// Package eventdef is what a group declares of a webhook event: its name,
// the operation that emits it, and who may read it. It imports nothing, so
// a group declares its events without linking the webhook domain, and the
// catalogue generator (shared/internal/catalogen) reads every group's
// declarations to write the one catalogue package webhooks delivers from
// (docs/structure.md).
package eventdef

// Def is one event of the catalogue.
type Def struct {
	Name        string
	EmittedBy   string // the operation id that emits it
	Description string
	// ReadBy is the route id of the operation that reads the event's
	// resource. A webhook receives the event only if its creator key could
	// call that operation right now: its scopes, its fixed service (e.g.
	// core-database) and operation access (docs/webhooks.md).
	ReadBy string
	// Subject is what of the event's data the creator must also be allowed
	// to see, beyond what ReadBy demands.
	Subject Subject
}

// Subject names the part of an event's data whose visibility depends on
// the reader, and how to find it in the data.
type Subject int

const (
	// SubjectNone: the reading operation's scopes, service and the
	// webhook's project decide alone.
	SubjectNone Subject = iota
	// SubjectService: data.serviceId names a managed service; the creator
	// needs access to it.
	SubjectService
	// SubjectKey: data.id is an API key; the creator must be that key or
	// one of its ancestors (no sibling branch: docs/webhooks.md).
	SubjectKey
	// SubjectWebhook: data.id is a webhook; the creator must be able to
	// manage it (it or a descendant created it, in its project scope).
	SubjectWebhook
)

var subjectNames = [...]string{"SubjectNone", "SubjectService", "SubjectKey", "SubjectWebhook"}

// String is the constant's Go name, as the generated catalogue spells it.
func (s Subject) String() string {
	if s < 0 || int(s) >= len(subjectNames) {
		return ""
	}
	return subjectNames[s]
}
