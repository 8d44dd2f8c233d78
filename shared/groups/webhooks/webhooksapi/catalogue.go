package webhooksapi

import "platformapi/shared/groups/webhooks/eventdef"

// Event names the group publishes, each after its operation committed.
const (
	eventWebhookCreated       = "webhook.created"
	eventWebhookUpdated       = "webhook.updated"
	eventWebhookDisabled      = "webhook.disabled"
	eventWebhookSecretRotated = "webhook.secret_rotated"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventWebhookCreated, EmittedBy: "webhooks.create", ReadBy: "webhooks.list", Subject: eventdef.SubjectWebhook,
		Description: "A webhook was created; a new webhook subscribed to it receives its own, a ready-made test (data: the webhook)."},
	{Name: eventWebhookUpdated, EmittedBy: "webhooks.update", ReadBy: "webhooks.list", Subject: eventdef.SubjectWebhook,
		Description: "A webhook's URL, events, description or status changed (data: the webhook)."},
	{Name: eventWebhookDisabled, EmittedBy: "webhooks.disable", ReadBy: "webhooks.list", Subject: eventdef.SubjectWebhook,
		Description: "A webhook was disabled (data: the webhook)."},
	{Name: eventWebhookSecretRotated, EmittedBy: "webhooks.rotate", ReadBy: "webhooks.list", Subject: eventdef.SubjectWebhook,
		Description: "A webhook's signing secret was rotated (data: the webhook, never a secret)."},
}
