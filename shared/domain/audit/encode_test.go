package audit_test

import (
	"math"
	"testing"
	"time"

	"platformapi/shared/domain/audit"
)

// The journal's hand-written document is byte for byte encoding/json's, so
// a journal line, a stored item and a replay read alike whichever wrote it.
func TestTheJournalDocumentIsWhatEncodingJSONWrites(t *testing.T) {
	s := func(v string) *string { return &v }
	base := audit.Event{
		ID: "aud_01JX0000000000000000000000", OccurredAt: time.Date(2026, 11, 26, 13, 4, 5, 123_000_000, time.UTC),
		RequestID: "req_0123456789abcdef01234567", KeyID: "key_B", Operation: "credits.balance.read",
		Method: "GET", Path: "/v1/credits/balance", Status: 200,
		AccountID: "acct_A", KeyPath: []string{"key_R", "key_B"},
	}
	for name, edit := range map[string]func(e *audit.Event){
		"a plain read": func(*audit.Event) {},
		"every optional set": func(e *audit.Event) {
			e.ProjectID, e.Code, e.EndUser, e.ServiceID = s("prj_1"), s("limit_exceeded"), s("user@example.com"), "cloud-superbrain"
		},
		"a replay": func(e *audit.Event) { e.IdempotentReplayed = true },
		"characters to escape": func(e *audit.Event) {
			e.Path, e.EndUser, e.Operation = "/v1/a\"b\\c<d>&e\u2028f\x01g\n", s("é ü 日本 \xff"), "op\t"
		},
		"charges":              func(e *audit.Event) { e.ChargedMicro, e.ChargedCredits = 1_234_567, 1.234567 },
		"a tiny charge":        func(e *audit.Event) { e.ChargedMicro, e.ChargedCredits = 0, 1e-7 },
		"a huge charge":        func(e *audit.Event) { e.ChargedCredits = 2.5e22 },
		"a negative charge":    func(e *audit.Event) { e.ChargedCredits = -3.5 },
		"no key path":          func(e *audit.Event) { e.KeyPath = nil },
		"an empty key path":    func(e *audit.Event) { e.KeyPath = []string{} },
		"nanoseconds and zone": func(e *audit.Event) { e.OccurredAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)) },
		"a whole second":       func(e *audit.Event) { e.OccurredAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		"the largest int":      func(e *audit.Event) { e.ChargedMicro, e.Status = math.MaxInt64, 599 },
	} {
		e := base
		edit(&e)
		got, want, err := audit.StoredDocuments(e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
