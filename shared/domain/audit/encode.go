package audit

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendStored appends the event's stored document (toStored) to b, byte
// for byte what json.Marshal writes for it (a test holds them equal): the
// journal writes one per request before the answer, where encoding/json's
// reflection was half of the append's CPU (docs/benchmarks.md).
func appendStored(b []byte, e *Event) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"occurredAt":`...)
	b = appendTime(b, e.OccurredAt)
	b = append(b, `,"requestId":`...)
	b = appendJSONString(b, e.RequestID)
	b = append(b, `,"projectId":`...)
	b = appendOptional(b, e.ProjectID)
	b = append(b, `,"keyId":`...)
	b = appendJSONString(b, e.KeyID)
	b = append(b, `,"operation":`...)
	b = appendJSONString(b, e.Operation)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, e.Method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, e.Path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"code":`...)
	b = appendOptional(b, e.Code)
	b = append(b, `,"chargedCredits":`...)
	b = appendFloat(b, e.ChargedCredits)
	b = append(b, `,"endUser":`...)
	b = appendOptional(b, e.EndUser)
	b = append(b, `,"idempotentReplayed":`...)
	b = strconv.AppendBool(b, e.IdempotentReplayed)
	b = append(b, `,"accountId":`...)
	b = appendJSONString(b, e.AccountID)
	b = append(b, `,"keyPath":`...)
	if e.KeyPath == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, k := range e.KeyPath {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
		}
		b = append(b, ']')
	}
	if e.ServiceID != "" {
		b = append(b, `,"serviceId":`...)
		b = appendJSONString(b, e.ServiceID)
	}
	b = append(b, `,"chargedMicro":`...)
	b = strconv.AppendInt(b, e.ChargedMicro, 10)
	return append(b, '}')
}

func appendOptional(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONString copies plain printable ASCII as it is and leaves any
// string that needs escaping (quotes, controls, HTML characters, non-ASCII)
// to encoding/json, so that the rules are its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime writes t as time.Time's MarshalJSON does; an unrepresentable
// time (outside years 0–9999) is left to it.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		q, _ := json.Marshal(t)
		return append(b, q...)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendFloat writes f as encoding/json does in its plain notation, and
// leaves the exponent form (tiny or huge values) to it.
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) || math.IsInf(f, 0) {
		q, _ := json.Marshal(f)
		return append(b, q...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
