package databasesapi

import (
	"platformapi/shared/base/catalog"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/webhooks/eventdef"
)

// Event names the group publishes, each after its operation committed.
const (
	eventDatabaseProvisioned   = "database.provisioned"
	eventDatabaseDeprovisioned = "database.deprovisioned"
)

// events are the webhook events the group emits; the catalogue generator
// gathers every group's into the catalogue webhooks delivers from
// (docs/structure.md).
var events = []eventdef.Def{
	{Name: eventDatabaseProvisioned, EmittedBy: "databases.account.provision", ReadBy: "databases.account.read", Subject: eventdef.SubjectNone,
		Description: "A managed database was provisioned for the account or project (data: the database)."},
	{Name: eventDatabaseDeprovisioned, EmittedBy: "databases.account.deprovision", ReadBy: "databases.account.read", Subject: eventdef.SubjectNone,
		Description: "A managed database and its data were deleted (data: id, status deleted)."},
	{Name: databases.EventTransferCompleted, EmittedBy: "databases.transfers.create", ReadBy: "databases.transfers.read", Subject: eventdef.SubjectNone,
		Description: "An export's archive is ready to download, or an import replaced the database (data: the transfer). Sent by the worker, after POST /databases/transfers (export) or …/complete (import)."},
	{Name: databases.EventTransferFailed, EmittedBy: "databases.transfers.create", ReadBy: "databases.transfers.read", Subject: eventdef.SubjectNone,
		Description: "A transfer failed and the database is unchanged; the reason is in error (data: the transfer)."},
}

// services are the managed services the group sells; the catalogue
// generator gathers every group's into the one catalogue (docs/structure.md).
var services = []catalog.Service{
	{ID: ServiceID, Name: "Managed Databases", Description: "One managed SQLite database per account or project, with signed portable archives.", Available: true,
		Operations: []catalog.Operation{
			{ID: "databases.query", Summary: "Run a read query: per row read, at most 50,000 rows' worth", PriceMicro: catalog.Credits(0.05),
				Rates: []catalog.Rate{{Unit: catalog.UnitRowRead, PriceMicro: 1}}},
			{ID: "databases.actions", Summary: "Change structure or records: per row read and per row written, at most 0.1 credits", PriceMicro: catalog.Credits(0.1),
				Rates: []catalog.Rate{{Unit: catalog.UnitRowRead, PriceMicro: 1}, {Unit: catalog.UnitRowWritten, PriceMicro: 10}}},
		}},
}
