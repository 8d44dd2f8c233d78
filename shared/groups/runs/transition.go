package runs

import (
	"context"
	"errors"
	"fmt"

	"platformapi/shared/adapters/store"
)

// errUnchanged is what a change's mutation returns to leave the run as is.
var errUnchanged = errors.New("runs: unchanged")

// maxRaces bounds how often change re-reads a run that others keep writing.
const maxRaces = 8

// change applies mutate to run and writes the result, with the extra
// transaction members, only if nobody wrote the run since it was read (its
// version). On a lost race it re-reads the run and applies mutate again, so
// mutate decides on the latest state: that is what makes every transition
// happen once.
func (r *Repo) change(ctx context.Context, run *Run, mutate func(*Run) error, extra ...store.Op) (*Run, error) {
	for range maxRaces {
		next := *run
		if err := mutate(&next); err != nil {
			if errors.Is(err, errUnchanged) {
				return run, nil
			}
			return nil, err
		}
		next.version = run.version + 1
		cond := store.AttrEquals(attrVersion, run.version)
		var err error
		if len(extra) == 0 {
			err = r.st.Put(ctx, encode(&next), cond)
		} else {
			err = r.st.Transact(ctx, append([]store.Op{store.PutOp(encode(&next), cond)}, extra...))
		}
		var tx *store.TxError
		switch {
		case err == nil:
			return &next, nil
		case !errors.Is(err, store.ErrConditionFailed) || errors.As(err, &tx) && tx.Index != 0:
			return nil, fmt.Errorf("runs: write %s: %w", run.ID, err)
		}
		if run, err = r.load(ctx, run.AccountID, run.ID); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("runs: %s kept changing concurrently", run.ID)
}
