package superbrain

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"platformapi/shared/base/apierr"
)

// scopes differ in one component at a time, including end users that a
// naive key concatenation would confuse with a project or each other.
var scopes = []who{
	{account: "acct_alice"},
	{account: "acct_bob"},
	{account: "acct_alice", project: "prj_1"},
	{account: "acct_alice", project: "prj_2"},
	{account: "acct_alice", project: "prj_1", endUser: "u1"},
	{account: "acct_alice", project: "prj_1", endUser: "u2"},
	{account: "acct_alice", project: "prj_2", endUser: "u1"},
	{account: "acct_alice", endUser: "u1"},
	{account: "acct_alice", endUser: "prj_1"},
	{account: "acct_alice", endUser: "u1#prj_1"},
	{account: "acct_bob", endUser: "u1"},
}

func TestScopesNeverSeeEachOthersMemories(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		own := make([]string, len(scopes))
		for i, w := range scopes {
			own[i] = h.write(w, fmt.Sprintf("zebra crossing marker%d", i))
		}
		for i, w := range scopes {
			// A search that matches every scope's memory finds only its own.
			if got := hitIDs(h.search(w, "zebra", 50)); !slices.Equal(got, own[i:i+1]) {
				t.Errorf("scope %+v: search found %v, want only %s", w, got, own[i])
			}
			if got := h.listAll(w); !slices.Equal(got, own[i:i+1]) {
				t.Errorf("scope %+v: list shows %v, want only %s", w, got, own[i])
			}
			for j := range scopes {
				if j == i {
					continue
				}
				if hits := h.search(w, fmt.Sprintf("marker%d", j), 50); len(hits) != 0 {
					t.Errorf("scope %+v found scope %+v's memory", w, scopes[j])
				}
				_, err := h.invoke(w, OpDelete, `{"memoryId":"`+own[j]+`"}`)
				wantAPIError(t, err, apierr.NotFound)
			}
		}
		// Nobody's delete reached a neighbour.
		for i, w := range scopes {
			if got := h.listAll(w); !slices.Equal(got, own[i:i+1]) {
				t.Errorf("scope %+v lost its memory: %v", w, got)
			}
		}
	})
}

func TestACursorCannotLeaveTheCallersScope(t *testing.T) {
	eachBackend(t, func(t *testing.T, h *harness) {
		bob := who{account: "acct_bob"}
		for i := range 3 {
			h.write(bob, fmt.Sprintf("bob %d", i))
		}
		mine := h.write(alice, "alice's only memory")
		page := call[listOutput](h, bob, OpList, `{"limit":1}`)
		if page.NextCursor == nil {
			t.Fatal("bob's first page has no cursor")
		}
		got := call[listOutput](h, alice, OpList, `{"cursor":"`+*page.NextCursor+`"}`)
		for _, m := range got.Data {
			if m.ID != mine {
				t.Fatalf("alice listed %s through bob's cursor", m.ID)
			}
		}
	})
}

func TestRequestWithoutAnAccountIsRefused(t *testing.T) {
	for _, w := range []who{{}, {project: "prj_1"}, {account: "acct#x"}, {account: "acct_a", project: "prj#1"}} {
		_, err := (&harness{t: t, svc: New(nil, time.Now)}).invoke(w, OpList, `{}`)
		if err == nil {
			t.Errorf("%+v: refused nothing", w)
		}
	}
}
