package apitime

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// firstSeen is a webhook event's data as a fresh process encodes it: a
// time beside fields of kinds no encoder walks (a string, an integer, a
// bool, a json.Number).
type firstSeen struct {
	ID        string      `json:"id"`
	Nonce     uint64      `json:"nonce"`
	Reserved  bool        `json:"reserved"`
	Charged   json.Number `json:"chargedCredits"`
	CreatedAt time.Time   `json:"createdAt"`
}

// A type the process has not encoded yet, met by several encoders at once
// (a life's first requests and its worker's first events), encodes whole
// in every one of them: what one encoder assumes about a type while it
// works out whether the type can hold a time is never what another reads.
// A string field written as an array of its bytes was a webhook event whose
// data named no id.
func TestATypeFirstMetByConcurrentEncodersEncodesAsEncodingJSONDoes(t *testing.T) {
	v := firstSeen{ID: "wtx_01J9Z3K4M5N6P7Q8R9S0T1V2W3", Nonce: 7, Reserved: true, Charged: "0.1",
		CreatedAt: time.Date(2026, 11, 29, 13, 4, 0, 0, time.UTC)}
	want := `{"id":"wtx_01J9Z3K4M5N6P7Q8R9S0T1V2W3","nonce":7,"reserved":true,"chargedCredits":0.1,"createdAt":"2026-11-29T13:04:00.000Z"}`
	encoders := max(8, 4*runtime.GOMAXPROCS(0))
	for round := range 1000 {
		holds.Clear()
		fieldCache.Clear()
		plains.Clear()
		var start, done sync.WaitGroup
		start.Add(1)
		got := make([]string, encoders)
		for i := range encoders {
			done.Go(func() {
				defer func() {
					if p := recover(); p != nil {
						got[i] = fmt.Sprint("panic: ", p)
					}
				}()
				start.Wait()
				b, err := Marshal(&v)
				got[i] = string(b)
				if err != nil {
					got[i] = "error: " + err.Error()
				}
			})
		}
		start.Done()
		done.Wait()
		for i, g := range got {
			if g != want {
				t.Fatalf("round %d, encoder %d wrote\n%s\nwant\n%s", round, i, g, want)
			}
		}
	}
}
