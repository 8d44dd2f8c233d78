package superbrain

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/ids"
)

// The bounds of one scope. Search reads the whole scope (see search.go);
// these keep its store reads, CPU and latency within what one request may
// cost, and turn the limit into a clear 409 rather than ever slower and
// dearer searches. Bytes count a memory's text and metadata as stored
// (UTF-8 and JSON): that, not the count, is what a search reads.
const (
	MaxMemoriesPerScope = 5_000
	MaxScopeBytes       = 2 << 20
)

// memory is one stored memory, as operations return it.
type memory struct {
	ID        string            `json:"memoryId"`
	Text      string            `json:"text"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt time.Time         `json:"createdAt"`
}

// Item attributes of a memory.
const (
	attrText      = "text"
	attrMeta      = "meta"      // JSON object of strings
	attrCreatedAt = "createdAt" // unix milliseconds
	attrCount     = "count"     // on the scope's count item: memories
	attrBytes     = "bytes"     // and their stored size
	attrWritten   = "memoryId"  // on a write record: the memory the write made
)

// writeMemory is how long a write with an idempotency key is remembered:
// longer than the platform keeps an Idempotency-Key (24 hours).
const writeMemory = 48 * time.Hour

func encodeMemory(sc scope, m memory) store.Item {
	it := store.NewItem(sc.memoryKey(m.ID))
	it[attrText] = m.Text
	meta, _ := json.Marshal(m.Metadata) // a map of strings always encodes
	it[attrMeta] = string(meta)
	it[attrCreatedAt] = m.CreatedAt.UnixMilli()
	return it
}

// storedSize is what a memory adds to its scope's byte count.
func storedSize(it store.Item) int64 {
	return int64(len(it.String(attrText)) + len(it.String(attrMeta)))
}

func decodeMemory(it store.Item) (memory, error) {
	m := memory{
		ID:        it.Key().SK[len(memoryPrefix):],
		Text:      it.String(attrText),
		CreatedAt: time.UnixMilli(it.Int(attrCreatedAt)).UTC(),
	}
	if err := json.Unmarshal([]byte(it.String(attrMeta)), &m.Metadata); err != nil {
		return memory{}, fmt.Errorf("superbrain: decode memory %s: %w", m.ID, err)
	}
	return m, nil
}

type writeOutput struct {
	ID        string    `json:"memoryId"`
	CreatedAt time.Time `json:"createdAt"`
}

// write stores a memory and counts it in the same transaction, so the
// counts are exact and the bounds hold under concurrent writes. A call with
// an idempotency key also records which memory it wrote, in that same
// transaction: its retry answers that memory instead of writing another.
func (s *Service) write(ctx context.Context, sc scope, raw json.RawMessage, idemKey string) (writeOutput, error) {
	var in writeInput
	if err := decodeInput(raw, &in); err != nil {
		return writeOutput{}, err
	}
	if err := in.validate(); err != nil {
		return writeOutput{}, err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	m := memory{ID: ids.New("mem", now), Text: in.Text, Metadata: in.Metadata, CreatedAt: now}
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	it := encodeMemory(sc, m)
	size := storedSize(it)
	ops := []store.Op{
		store.PutOp(it, store.NotExists()),
		store.UpdateOp(sc.countKey(), store.Update{Add: map[string]int64{attrCount: 1, attrBytes: size}},
			store.NumBelow(attrCount, MaxMemoriesPerScope), store.NumBelow(attrBytes, MaxScopeBytes-size+1)),
	}
	if idemKey != "" {
		done := store.NewItem(sc.writeKey(idemKey))
		done[attrWritten] = m.ID
		done[attrCreatedAt] = m.CreatedAt.UnixMilli()
		done[store.AttrExpiresAt] = now.Add(writeMemory).Unix()
		ops = append(ops, store.PutOp(done, store.NotExists()))
	}
	err := s.st.Transact(ctx, ops)
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index == 2 {
		prev, gerr := s.st.Get(ctx, sc.writeKey(idemKey))
		if gerr != nil {
			return writeOutput{}, fmt.Errorf("superbrain: read earlier write: %w", gerr)
		}
		return writeOutput{ID: prev.String(attrWritten), CreatedAt: time.UnixMilli(prev.Int(attrCreatedAt)).UTC()}, nil
	}
	if errors.As(err, &tx) && tx.Index == 1 {
		return writeOutput{}, apierr.New(apierr.Conflict,
			"This scope is full: it holds at most %d memories and %d MiB of text and metadata. Delete some first.",
			MaxMemoriesPerScope, MaxScopeBytes>>20)
	}
	if err != nil {
		return writeOutput{}, fmt.Errorf("superbrain: write: %w", err)
	}
	return writeOutput{ID: m.ID, CreatedAt: m.CreatedAt}, nil
}

type listOutput struct {
	Data       []memory `json:"data"`
	NextCursor *string  `json:"nextCursor"`
}

// list pages through the scope newest first. Memory ids sort by creation
// time, so the sort key order is the time order. The cursor is the last
// id returned; it is only a position, and the query stays in the caller's
// partition whatever cursor is sent.
func (s *Service) list(ctx context.Context, sc scope, raw json.RawMessage) (listOutput, error) {
	var in listInput
	if err := decodeInput(raw, &in); err != nil {
		return listOutput{}, err
	}
	var fe fieldErrors
	limit := fe.limit("input.limit", in.Limit, defaultListLimit, maxListLimit)
	after := ""
	if in.Cursor != "" {
		id, err := base64.RawURLEncoding.DecodeString(in.Cursor)
		if err != nil || !ids.Valid("mem", string(id)) {
			fe.add("input.cursor", "is not a cursor from memory.list")
		}
		after = memoryPrefix + string(id)
	}
	if err := fe.err(); err != nil {
		return listOutput{}, err
	}
	page, err := s.st.Query(ctx, store.Query{PK: string(sc), Prefix: memoryPrefix, After: after, Limit: limit, Reverse: true})
	if err != nil {
		return listOutput{}, fmt.Errorf("superbrain: list: %w", err)
	}
	out := listOutput{Data: make([]memory, 0, len(page.Items))}
	for _, it := range page.Items {
		m, err := decodeMemory(it)
		if err != nil {
			return listOutput{}, err
		}
		out.Data = append(out.Data, m)
	}
	if page.More && len(out.Data) > 0 {
		next := base64.RawURLEncoding.EncodeToString([]byte(out.Data[len(out.Data)-1].ID))
		out.NextCursor = &next
	}
	return out, nil
}

type deleteOutput struct {
	ID      string `json:"memoryId"`
	Deleted bool   `json:"deleted"`
}

// delete removes a memory of the scope and uncounts it in one transaction.
// It reads the memory first for its size; memories never change, and the
// delete is conditional on the memory still being there, so two racing
// deletes uncount it once. A memory of another scope is simply not there:
// not_found, as for one that never existed.
func (s *Service) delete(ctx context.Context, sc scope, raw json.RawMessage) (deleteOutput, error) {
	var in deleteInput
	if err := decodeInput(raw, &in); err != nil {
		return deleteOutput{}, err
	}
	var fe fieldErrors
	if in.MemoryID == "" {
		fe.add("input.memoryId", "is required")
	} else if !ids.Valid("mem", in.MemoryID) {
		fe.add("input.memoryId", "must be a memory id (mem_…)")
	}
	if err := fe.err(); err != nil {
		return deleteOutput{}, err
	}
	notFound := apierr.New(apierr.NotFound, "No such memory.")
	it, err := s.st.Get(ctx, sc.memoryKey(in.MemoryID))
	if errors.Is(err, store.ErrNotFound) {
		return deleteOutput{}, notFound
	}
	if err != nil {
		return deleteOutput{}, fmt.Errorf("superbrain: delete: %w", err)
	}
	err = s.st.Transact(ctx, []store.Op{
		store.DeleteOp(it.Key(), store.Exists()),
		store.UpdateOp(sc.countKey(), store.Update{Add: map[string]int64{attrCount: -1, attrBytes: -storedSize(it)}}),
	})
	var tx *store.TxError
	if errors.As(err, &tx) && tx.Index == 0 {
		return deleteOutput{}, notFound
	}
	if err != nil {
		return deleteOutput{}, fmt.Errorf("superbrain: delete: %w", err)
	}
	return deleteOutput{ID: in.MemoryID, Deleted: true}, nil
}
