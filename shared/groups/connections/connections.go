// Package connections holds protected connections: credentials a client
// hands over once so that managed services can use them by reference
// ("connections":{"<slot>":"con_…"} in an invoke or run body). Credentials
// are write-only: they are sealed by the envelope port before they reach
// the store, and opened only by Resolve, for the managed service that uses
// them. Nothing this package returns to a client (records, lists, errors)
// may ever contain a secret or a piece of one, beyond the four-character
// hint of a long secret.
//
// Storage (one item per record, one per sealed version, all in the
// account's partition): see itemKey and versionKey. The previous version of
// rotated credentials is kept for PreviousVersionTTL with an expiry, so the
// store's TTL destroys it and every read treats it as gone afterwards.
package connections

import (
	"encoding/json"
	"time"

	"platformapi/shared/adapters/upstream"
)

// Status values.
const (
	StatusActive   = "active"
	StatusDisabled = "disabled"
)

// Credential types.
const (
	TypeAPIKey = upstream.CredentialAPIKey
	TypeBearer = upstream.CredentialBearer
	TypeBasic  = upstream.CredentialBasic
	TypeOAuth2 = upstream.CredentialOAuth2
)

// ReasonUnauthorized is the status reason of a connection whose current
// credentials a managed service refused with 401. The connection stays
// active (the service may have failed, not the credential); rotating the
// credentials clears the reason.
const ReasonUnauthorized = "upstream_unauthorized"

// Event names the HTTP layer publishes after a committed change; the group
// declares them in the event catalogue (shared/groups/connections/connectionsapi).
const (
	EventCreated  = "connection.created"
	EventRotated  = "connection.rotated"
	EventDisabled = "connection.disabled"
	EventEnabled  = "connection.enabled"
	EventDeleted  = "connection.deleted"
)

// Bounds.
const (
	MaxLabel          = 128  // characters
	MaxMetadata       = 16   // pairs
	MaxMetadataKey    = 64   // characters
	MaxMetadataValue  = 512  // characters
	MaxSecret         = 8192 // bytes, each secret field
	MaxUsername       = 256  // bytes
	MaxServices       = 32
	MaxSlots          = 8 // connections one call may name
	DefaultHeaderName = "X-API-Key"
	// HintMinLength is the shortest secret that gets a hint: the last four
	// characters of a shorter one would give away too much of it.
	HintMinLength = 12
	// PreviousVersionTTL is how long the credentials a rotation replaced
	// stay usable (for runs that resolved them before the rotation).
	PreviousVersionTTL = 24 * time.Hour
	// TouchInterval bounds how often Resolve writes lastUsedAt, so a busy
	// connection costs one write a minute, not one per call.
	TouchInterval = time.Minute
)

// Connection is the resource. It never holds credentials.
type Connection struct {
	ID                string            `json:"id"`
	ProjectID         *string           `json:"projectId" doc:"The project the connection belongs to, or null at account level"`
	Label             string            `json:"label"`
	Type              string            `json:"type" enum:"api_key,bearer,basic,oauth2"`
	Status            string            `json:"status" enum:"active,disabled"`
	StatusReason      *string           `json:"statusReason" doc:"Why the connection needs attention (upstream_unauthorized: a service refused its current credentials), or null"`
	ServiceIDs        []string          `json:"serviceIds"`
	Metadata          map[string]string `json:"metadata"`
	CredentialVersion int64             `json:"credentialVersion"`
	CredentialHint    string            `json:"credentialHint" doc:"The last 4 characters of the secret, empty for a secret shorter than 12 characters"`
	CreatedAt         time.Time         `json:"createdAt"`
	UpdatedAt         time.Time         `json:"updatedAt"`
	RotatedAt         *time.Time        `json:"rotatedAt"`
	DisabledAt        *time.Time        `json:"disabledAt"`
	LastUsedAt        *time.Time        `json:"lastUsedAt"`
}

// CreateRequest is the body of POST /connections. Credentials is decoded
// by Type (see decodeCredentials), never by the HTTP layer, so that no
// generic decoder can echo a secret in an error.
type CreateRequest struct {
	Label       string            `json:"label" minLength:"1" maxLength:"128"`
	Type        string            `json:"type" enum:"api_key,bearer,basic,oauth2"`
	Credentials json.RawMessage   `json:"credentials" doc:"api_key {key, headerName?=X-API-Key}; bearer {token}; basic {username, password}; oauth2 {accessToken, refreshToken?, expiresAt?, tokenUrl?, clientId?, clientSecret?}"`
	ServiceIDs  []string          `json:"serviceIds" minItems:"1" maxItems:"32"`
	Metadata    map[string]string `json:"metadata,omitempty" maxProperties:"16"`
}

// UpdateRequest is the body of PATCH /connections/{connectionId}; absent
// fields stay. Credentials (of the connection's type) rotate.
type UpdateRequest struct {
	Label       *string         `json:"label,omitempty" minLength:"1" maxLength:"128"`
	Status      *string         `json:"status,omitempty" enum:"active,disabled"`
	Credentials json.RawMessage `json:"credentials,omitempty"`
}

// Credential is one opened connection, ready for the upstream call.
type Credential = upstream.Credential
