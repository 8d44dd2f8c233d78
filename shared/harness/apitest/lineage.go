package apitest

import (
	"time"

	"platformapi/shared/groups/approvals/lineagetest"
)

// Lineage makes, through the API, a new account's keys at every place the
// approval rule names relative to one requester (lineagetest.Tree), and
// returns their secrets by name. Every key holds the root's scopes; rolled
// keys keep working for an hour.
func (e *Env) Lineage(credits int64) map[string]string {
	e.T.Helper()
	k := map[string]string{}
	id := map[string]string{}
	var root *Resp
	k["root"], root = e.RootKey(credits, nil)
	id["root"] = root.Str("id")
	for _, s := range lineagetest.Tree {
		if s.Roll {
			r := e.Must(e.Do(Req{Method: "POST", Path: "/v1/api-keys/" + id[s.From] + "/roll", Key: k["root"], Idem: Idem(),
				Body: map[string]any{"expiresAt": e.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}), 201)
			k[s.Name], id[s.Name] = r.Str("secret"), r.Str("id")
			continue
		}
		var rec *Resp
		k[s.Name], rec = e.Child(k[s.From], map[string]any{"label": s.Name})
		id[s.Name] = rec.Str("id")
	}
	return k
}

// A LineageCase is a requester, the keys of its lineage that must be
// refused its money approvals, and one key outside it that may decide them
// (none for the root: every key of the account is in its lineage).
type LineageCase struct {
	Requester string
	Refused   []string
	Allowed   string
}

// LineageCases are the places of Lineage the rule refuses and allows.
var LineageCases = []LineageCase{
	{"requester", []string{"requester", "successor", "successor²", "parent", "parent′", "root", "root′", "child", "grandchild", "child of the successor"}, "sibling"},
	{"successor²", []string{"successor²", "successor", "requester", "child", "child of the successor"}, "cousin"},
	{"root", []string{"root", "root′", "sibling", "cousin"}, ""},
}
