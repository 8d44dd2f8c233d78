package superbrain

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"platformapi/shared/adapters/store"
)

// BM25 parameters: the usual defaults (Robertson et al.; Lucene's too).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scanPage is how many memories one store query reads while searching:
// a bounded slice of the scope in memory at a time.
const scanPage = 250

type searchOutput struct {
	Results []hit `json:"results"`
}

// hit is a search result: a memory and its BM25 score.
type hit struct {
	memory
	Score float64 `json:"score"`
}

// candidate is a memory that contains at least one query term.
type candidate struct {
	item   store.Item
	length int   // tokens in the memory
	tf     []int // occurrences of each query term
	score  float64
}

// search ranks the scope's memories against the query with Okapi BM25:
//
//	score(D) = Σ_t idf(t) · tf(t,D)·(k1+1) / (tf(t,D) + k1·(1 − b + b·|D|/avgdl))
//	idf(t)   = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// over the distinct query terms t, with N the scope's memory count, df(t)
// how many contain t, |D| a memory's token count and avgdl the mean. The
// idf is Lucene's, which stays positive for terms in most memories. Equal
// scores go to the newer memory first (ids sort by creation time).
//
// Cost: the scope is read and tokenised in full on every search, since N,
// df and avgdl are scope-wide: O(bytes in the scope) time and store reads,
// O(matching memories) memory. BenchmarkSearch (2 shared cores, embedded
// store, ~280-byte memories): about 9 ms for 1000 memories and 37 ms for
// 5000, linear. On DynamoDB each search also pays read units for the whole
// scope (strongly consistent: one per 4 KB, so 512 for a full 2 MiB scope)
// and one round trip per 250 memories. That is fine up to a few thousand
// short memories, which is why MaxMemoriesPerScope and MaxScopeBytes stop a
// scope there. Beyond that, the replacement is an inverted index
// maintained at write time in the same transaction: one item per (scope,
// term) holding its postings and df, with N and the total length on the
// count item, so that a search reads only the postings of its own terms;
// or an external engine (OpenSearch) fed from the store.
func (s *Service) search(ctx context.Context, sc scope, raw json.RawMessage) (searchOutput, error) {
	var in searchInput
	if err := decodeInput(raw, &in); err != nil {
		return searchOutput{}, err
	}
	var fe fieldErrors
	fe.text("input.query", in.Query, maxQueryChars)
	limit := fe.limit("input.limit", in.Limit, defaultSearchHits, maxSearchHits)
	if err := fe.err(); err != nil {
		return searchOutput{}, err
	}
	terms := map[string]int{} // distinct query term → index
	tokenize(in.Query, func(tok string) {
		if _, seen := terms[tok]; !seen {
			terms[tok] = len(terms)
		}
	})
	out := searchOutput{Results: []hit{}}
	if len(terms) == 0 {
		return out, nil // only stop words and punctuation: nothing can match
	}
	cands, n, totalLen, df, err := s.scan(ctx, sc, terms)
	if err != nil || len(cands) == 0 {
		return out, err
	}
	avgdl := float64(totalLen) / float64(n)
	idf := make([]float64, len(df))
	for i, d := range df {
		idf[i] = math.Log(1 + (float64(n)-float64(d)+0.5)/(float64(d)+0.5))
	}
	for i := range cands {
		c := &cands[i]
		norm := bm25K1 * (1 - bm25B + bm25B*float64(c.length)/avgdl)
		for t, f := range c.tf {
			if f > 0 {
				c.score += idf[t] * float64(f) * (bm25K1 + 1) / (float64(f) + norm)
			}
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.item.Key().SK, a.item.Key().SK)
	})
	for _, c := range cands[:min(limit, len(cands))] {
		m, err := decodeMemory(c.item)
		if err != nil {
			return searchOutput{}, err
		}
		out.Results = append(out.Results, hit{memory: m, Score: c.score})
	}
	return out, nil
}

// scan reads the whole scope once and returns the memories containing a
// query term, with the collection statistics BM25 needs: the memory count,
// the total token count and each term's document frequency.
func (s *Service) scan(ctx context.Context, sc scope, terms map[string]int) (cands []candidate, n, totalLen int, df []int, err error) {
	df = make([]int, len(terms))
	tf := make([]int, len(terms)) // reused across memories; copied on a match
	after := ""
	for {
		page, err := s.st.Query(ctx, store.Query{PK: string(sc), Prefix: memoryPrefix, After: after, Limit: s.scanPage})
		if err != nil {
			return nil, 0, 0, nil, fmt.Errorf("superbrain: search: %w", err)
		}
		for _, it := range page.Items {
			clear(tf)
			length, matched := 0, false
			tokenize(it.String(attrText), func(tok string) {
				length++
				if t, ok := terms[tok]; ok {
					tf[t]++
					matched = true
				}
			})
			n++
			totalLen += length
			if !matched {
				continue
			}
			for t, f := range tf {
				if f > 0 {
					df[t]++
				}
			}
			cands = append(cands, candidate{item: it, length: length, tf: slices.Clone(tf)})
		}
		if !page.More {
			return cands, n, totalLen, df, nil
		}
		after = page.Items[len(page.Items)-1].Key().SK
	}
}
