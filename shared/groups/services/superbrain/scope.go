package superbrain

import (
	"encoding/base64"
	"errors"
	"strings"

	"platformapi/shared/adapters/store"
	"platformapi/shared/adapters/upstream"
)

// scope is the item-store partition of one caller's memories:
//
//	sb#<accountId>#<projectId or empty>#<base64url(endUser) or empty>
//
// Account and project ids are platform ids, which never hold "#"; the end
// user is the client's own string, so it is encoded into an alphabet
// without "#". Each component therefore has one reading, and two scopes
// share a partition only if they are the same scope. The partition holds
// the memories ("m#<memoryId>") and their count ("count").
type scope string

func scopeOf(r upstream.Request) (scope, error) {
	if r.AccountID == "" {
		return "", errors.New("superbrain: a request without an account has no scope")
	}
	if strings.Contains(r.AccountID, "#") || strings.Contains(r.ProjectID, "#") {
		return "", errors.New("superbrain: account and project ids may not contain '#'")
	}
	return scope("sb#" + r.AccountID + "#" + r.ProjectID + "#" + base64.RawURLEncoding.EncodeToString([]byte(r.EndUser))), nil
}

const memoryPrefix = "m#"

func (sc scope) memoryKey(id string) store.Key {
	return store.Key{PK: string(sc), SK: memoryPrefix + id}
}

func (sc scope) countKey() store.Key { return store.Key{PK: string(sc), SK: "count"} }

// writeKey records which memory a write with an idempotency key made.
func (sc scope) writeKey(idemKey string) store.Key {
	return store.Key{PK: string(sc), SK: "w#" + idemKey}
}
