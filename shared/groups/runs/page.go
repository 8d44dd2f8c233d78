package runs

import (
	"context"

	"platformapi/shared/adapters/store"
	"platformapi/shared/domain/paging"
)

// scan reads the account's items under prefix, newest first, and keeps
// those keep accepts until limit are kept; the cursor is the last sort key
// read, so a page never skips or repeats an item.
func scan[T any](ctx context.Context, st store.Store, accountID, prefix string, limit int, cursor string, keep func(store.Item) (T, bool, error)) ([]T, string, error) {
	after, err := paging.After(cursor)
	if err != nil {
		return nil, "", err
	}
	var out []T
	for {
		page, err := st.Query(ctx, store.Query{PK: "acct#" + accountID, Prefix: prefix, After: after, Limit: limit, Reverse: true})
		if err != nil {
			return nil, "", err
		}
		for i, it := range page.Items {
			after = it.Key().SK
			v, ok, err := keep(it)
			if err != nil {
				return nil, "", err
			}
			if !ok {
				continue
			}
			out = append(out, v)
			if len(out) == limit {
				if page.More || i < len(page.Items)-1 {
					return out, paging.Cursor(after), nil
				}
				return out, "", nil
			}
		}
		if !page.More {
			return out, "", nil
		}
	}
}
