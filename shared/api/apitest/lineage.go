package apitest

import "time"

// Lineage makes, through the API, a new account's keys at every place the
// approval rule names relative to one requester (shared/approvals, "no key
// of the requester's lineage decides a money approval"), and returns their
// secrets by name:
//
//	root (rolled: root′)
//	├─ parent (rolled: parent′)
//	│  ├─ requester (rolled: successor, rolled again: successor²)
//	│  │  ├─ child ─ grandchild
//	│  │  └─ (successor) ─ child of the successor
//	│  └─ sibling
//	└─ uncle ─ cousin
//
// Every key holds the root's scopes; rolled keys keep working for an hour.
func (e *Env) Lineage(credits int64) map[string]string {
	e.T.Helper()
	k := map[string]string{}
	id := map[string]string{}
	var root *Resp
	k["root"], root = e.RootKey(credits, nil)
	id["root"] = root.Str("id")
	mint := func(name, parent string) {
		var rec *Resp
		k[name], rec = e.Child(k[parent], map[string]any{"label": name})
		id[name] = rec.Str("id")
	}
	roll := func(name, into string) {
		r := e.Must(e.Do(Req{Method: "POST", Path: "/v1/api-keys/" + id[name] + "/roll", Key: k["root"], Idem: Idem(),
			Body: map[string]any{"expiresAt": e.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}), 201)
		k[into], id[into] = r.Str("secret"), r.Str("id")
	}
	mint("parent", "root")
	mint("uncle", "root")
	mint("cousin", "uncle")
	mint("requester", "parent")
	mint("sibling", "parent")
	mint("child", "requester")
	mint("grandchild", "child")
	roll("requester", "successor")
	roll("successor", "successor²")
	mint("child of the successor", "successor")
	roll("parent", "parent′")
	roll("root", "root′")
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
