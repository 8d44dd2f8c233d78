package credits

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/audit"
)

// Types are the entry types a list may be filtered by.
var Types = []string{TypeGrant, TypeTopUp, TypeCharge, TypeHold, TypeCapture, TypeRelease}

// ListFilter selects entries for a viewer: the audit filter's time range,
// key and operation, and an entry type ("" for all).
type ListFilter struct {
	audit.Filter
	Type string
}

// scanBound is how many entries one page reads at most: a narrow filter
// over a long ledger answers a short page with a cursor instead of reading
// the whole partition.
const scanBound = 1000

// List answers GET /credits/ledger: newest first, the entries the viewer
// sees (a key: those its requests and its descendants' caused; the root
// key: all; a project-bound key: only its project's), one page and the
// cursor of the next. The account's partition is read backwards from the
// range's end; its sort keys are times, so the range bounds the read. A
// sliced account's ledger is read by its cuts (listSliced).
func (l *Ledger) List(ctx context.Context, f ListFilter) ([]Entry, string, error) {
	if f.Type != "" && !slices.Contains(Types, f.Type) {
		return nil, "", apierr.Invalid("Invalid ledger filter.", apierr.Field("query.type", "one of %s", strings.Join(Types, ", ")))
	}
	acct, err := l.st.Get(ctx, accounts.Key(f.AccountID))
	if err != nil {
		return nil, "", fmt.Errorf("credits: list ledger: %w", err)
	}
	if SlicesOf(acct) > 1 {
		return l.listSliced(ctx, f)
	}
	after := fmt.Sprintf("lgr#%013d", f.Until.UnixMilli())
	if f.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || !strings.HasPrefix(string(raw), "lgr#") || string(raw) > after {
			return nil, "", apierr.Invalid("Invalid cursor.", apierr.Field("query.cursor", "not a cursor from this list"))
		}
		after = string(raw)
	}
	floor := fmt.Sprintf("lgr#%013d", f.Since.UnixMilli())
	root := len(f.KeyPath) == 1
	var out []Entry
	for read := 0; read < scanBound; {
		page, err := l.st.Query(ctx, store.Query{PK: "acct#" + f.AccountID, Prefix: "lgr#", After: after, Reverse: true, Limit: min(100, scanBound-read)})
		if err != nil {
			return nil, "", fmt.Errorf("credits: list ledger: %w", err)
		}
		for _, it := range page.Items {
			read++
			after = it.Key().SK
			if after < floor {
				return out, "", nil
			}
			e, err := decodeEntry(it)
			if err != nil {
				return nil, "", err
			}
			if !f.sees(e, root) {
				continue
			}
			out = append(out, e)
			if len(out) == f.Limit {
				return out, base64.RawURLEncoding.EncodeToString([]byte(after)), nil
			}
		}
		if !page.More {
			return out, "", nil
		}
	}
	return out, base64.RawURLEncoding.EncodeToString([]byte(after)), nil
}

func (f ListFilter) sees(e Entry, root bool) bool {
	viewer := f.KeyPath[len(f.KeyPath)-1]
	switch {
	case !root && !slices.Contains(e.KeyPath, viewer):
		return false
	case f.ProjectID != "" && e.ProjectID != f.ProjectID:
		return false
	case f.KeyID != "" && e.KeyID() != f.KeyID:
		return false
	case f.Type != "" && e.Type != f.Type:
		return false
	}
	return f.Operation == "" || audit.OperationCovers(f.Operation, e.Operation)
}
