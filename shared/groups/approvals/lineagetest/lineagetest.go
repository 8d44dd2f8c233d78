// Package lineagetest is the key tree the approval rule's tests grow, once
// for the domain (through keys.Repo) and once through the API, so both
// prove the rule on the same places relative to one requester:
//
//	root (rolled: root′)
//	├─ parent (rolled: parent′, which minted "sibling via parent′")
//	│  ├─ requester (rolled: successor, rolled again: successor²)
//	│  │  ├─ child ─ grandchild
//	│  │  └─ (successor) ─ child of the successor
//	│  └─ sibling
//	└─ uncle ─ cousin
package lineagetest

// Step mints Name as a child of From, or, with Roll, rolls From into Name.
type Step struct {
	Name, From string
	Roll       bool
}

// Tree grows the keys from "root", in an order where every From exists.
var Tree = []Step{
	{Name: "parent", From: "root"},
	{Name: "uncle", From: "root"},
	{Name: "cousin", From: "uncle"},
	{Name: "requester", From: "parent"},
	{Name: "sibling", From: "parent"},
	{Name: "child", From: "requester"},
	{Name: "grandchild", From: "child"},
	{Name: "successor", From: "requester", Roll: true},
	{Name: "successor²", From: "successor", Roll: true},
	{Name: "child of the successor", From: "successor"},
	{Name: "parent′", From: "parent", Roll: true},
	{Name: "sibling via parent′", From: "parent′"},
	{Name: "root′", From: "root", Roll: true},
}
