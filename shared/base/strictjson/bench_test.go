package strictjson_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"platformapi/shared/base/strictjson"
)

// benchDoc is a body of about size bytes: an array of small objects, the
// shape of most inputs, with nested metadata.
func benchDoc(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"mem_%08d","text":"a memory about things number %d","score":%d.5,"metadata":{"Source":"bench","kind":"note","tags":["a","b"]}}`, i, i, i)
	}
	b.WriteString(`],"memoryId":"mem_1","limit":10}`)
	return []byte(b.String())
}

// BenchmarkCheck compares the strict check with what decoding costs anyway.
func BenchmarkCheck(b *testing.B) {
	for _, size := range []int{200, 16 << 10, 1 << 20} {
		doc := benchDoc(size)
		b.Run(fmt.Sprintf("Check/%dB", len(doc)), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := strictjson.Check(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("json.Unmarshal/%dB", len(doc)), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(doc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
