package projectsapi

import "platformapi/shared/groups/webhooks/eventdef"

// Event names the group publishes, each after its operation committed.
const (
	eventProjectCreated  = "project.created"
	eventProjectUpdated  = "project.updated"
	eventProjectArchived = "project.archived"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventProjectCreated, EmittedBy: "projects.create", ReadBy: "projects.read", Subject: eventdef.SubjectNone,
		Description: "A project was created (data: the project)."},
	{Name: eventProjectUpdated, EmittedBy: "projects.update", ReadBy: "projects.read", Subject: eventdef.SubjectNone,
		Description: "A project's name, description or metadata changed (data: the project)."},
	{Name: eventProjectArchived, EmittedBy: "projects.archive", ReadBy: "projects.read", Subject: eventdef.SubjectNone,
		Description: "A project was archived (data: the project)."},
}
