package filesapi

import "platformapi/shared/groups/webhooks/eventdef"

// Event names the group publishes, each after its operation committed.
const (
	eventFileCreated = "file.created"
	eventFileDeleted = "file.deleted"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventFileCreated, EmittedBy: "files.create", ReadBy: "files.read", Subject: eventdef.SubjectNone,
		Description: "A file was uploaded (data: the file record, never its bytes)."},
	{Name: eventFileDeleted, EmittedBy: "files.delete", ReadBy: "files.read", Subject: eventdef.SubjectNone,
		Description: "A file was deleted (data: the file record with status deleted)."},
}
