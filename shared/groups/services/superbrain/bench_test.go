package superbrain

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/shared/adapters/store/boltstore"
	"platformapi/shared/adapters/upstream"
)

// BenchmarkSearch searches one scope of 1000 memories, and one at the
// MaxMemoriesPerScope bound, of 20–60 words drawn from a 2000-word
// vocabulary (Zipf-distributed, like natural text), on the embedded store,
// with a query of a common, a middling and a rare word. It measures the
// whole operation: store scan, tokenising, scoring, output.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, MaxMemoriesPerScope} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) { benchmarkSearch(b, n) })
	}
}

func benchmarkSearch(b *testing.B, memories int) {
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := New(st, func() time.Time { return now })
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, 1999)
	ctx := context.Background()
	r := upstream.Request{ServiceID: ServiceID, AccountID: "acct_bench", MaxChargeMicro: prices[OpSearch]}
	totalBytes := 0
	for range memories {
		now = now.Add(time.Millisecond)
		words := make([]string, 20+rng.IntN(41))
		for i := range words {
			words[i] = "term" + strconv.FormatUint(zipf.Uint64(), 10)
		}
		text := strings.Join(words, " ")
		totalBytes += len(text)
		in, _ := json.Marshal(map[string]string{"text": text})
		r.OperationID, r.Input = OpWrite, in
		if _, err := svc.Invoke(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	r.OperationID, r.Input = OpSearch, json.RawMessage(`{"query":"term1 term40 term900","limit":10}`)
	b.ResetTimer()
	for b.Loop() {
		res, err := svc.Invoke(ctx, r)
		if err != nil || len(res.Output) < 100 {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(totalBytes)/float64(memories), "text-bytes/memory")
}
