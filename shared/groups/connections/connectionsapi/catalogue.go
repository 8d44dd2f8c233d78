package connectionsapi

import (
	"platformapi/shared/groups/connections"
	"platformapi/shared/groups/webhooks/eventdef"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: connections.EventCreated, EmittedBy: "connections.create", ReadBy: "connections.read", Subject: eventdef.SubjectNone,
		Description: "A protected connection was created (data: the connection record, never its credentials)."},
	{Name: connections.EventRotated, EmittedBy: "connections.update", ReadBy: "connections.read", Subject: eventdef.SubjectNone,
		Description: "A connection's credentials were rotated; the previous version works for 24 hours more (data: the connection record)."},
	{Name: connections.EventDisabled, EmittedBy: "connections.update", ReadBy: "connections.read", Subject: eventdef.SubjectNone,
		Description: "A connection was disabled; calls naming it are refused (data: the connection record)."},
	{Name: connections.EventEnabled, EmittedBy: "connections.update", ReadBy: "connections.read", Subject: eventdef.SubjectNone,
		Description: "A disabled connection was enabled again (data: the connection record)."},
	{Name: connections.EventDeleted, EmittedBy: "connections.delete", ReadBy: "connections.read", Subject: eventdef.SubjectNone,
		Description: "A connection and every sealed version of its credentials were destroyed (data: the connection record as it was)."},
}
