package keysapi

import "platformapi/shared/groups/webhooks/eventdef"

// Event names the group publishes, each after its operation committed.
const (
	eventAPIKeyCreated = "api_key.created"
	eventAPIKeyRevoked = "api_key.revoked"
	eventAPIKeyRolled  = "api_key.rolled"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventAPIKeyCreated, EmittedBy: "apiKeys.create", ReadBy: "apiKeys.list", Subject: eventdef.SubjectKey,
		Description: "A child key was created (data: the key record, never its secret)."},
	{Name: eventAPIKeyRevoked, EmittedBy: "apiKeys.revoke", ReadBy: "apiKeys.list", Subject: eventdef.SubjectKey,
		Description: "A key was revoked, and with it its descendants (data: the key record)."},
	{Name: eventAPIKeyRolled, EmittedBy: "apiKeys.roll", ReadBy: "apiKeys.list", Subject: eventdef.SubjectKey,
		Description: "A key was rolled (data: id and key, the successor's record, never its secret; previousKey, the rolled key with its new expiry)."},
}
