package connections

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
)

func checkLabel(label string) error {
	n := utf8.RuneCountInString(label)
	if n == 0 || n > MaxLabel || checkText(label) != nil {
		return apierr.Invalid("Invalid label.", apierr.Field("body.label", "1 to %d characters, no control characters", MaxLabel))
	}
	return nil
}

func checkMetadata(md map[string]string) error {
	if len(md) > MaxMetadata {
		return apierr.Invalid("Too much metadata.", apierr.Field("body.metadata", "at most %d pairs", MaxMetadata))
	}
	for k, v := range md {
		if n := utf8.RuneCountInString(k); n == 0 || n > MaxMetadataKey || checkText(k) != nil {
			return apierr.Invalid("Invalid metadata key.", apierr.Field("body.metadata", "keys of 1 to %d characters, no control characters", MaxMetadataKey))
		}
		if utf8.RuneCountInString(v) > MaxMetadataValue || checkText(v) != nil {
			return apierr.Invalid("Invalid metadata value.", apierr.Field("body.metadata."+k, "at most %d characters, no control characters", MaxMetadataValue))
		}
	}
	return nil
}

// normalizeServices checks the service ids against the catalogue and drops
// repeats, keeping the client's order.
func normalizeServices(in []string) ([]string, error) {
	if len(in) == 0 || len(in) > MaxServices {
		return nil, apierr.Invalid("Name the services that may use the connection.", apierr.Field("body.serviceIds", "1 to %d service ids", MaxServices))
	}
	out := make([]string, 0, len(in))
	for i, id := range in {
		if _, ok := catalog.Lookup(id); !ok {
			return nil, apierr.Invalid("Unknown service.", apierr.Field(fmt.Sprintf("body.serviceIds[%d]", i), "not a service of GET /services"))
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// checkSlot bounds a slot name: it becomes part of error locations.
func checkSlot(slot string) error {
	if slot == "" || len(slot) > 64 {
		return apierr.Invalid("Invalid connection slot.", apierr.Field("body.connections", "slot names of 1 to 64 letters, digits, - and _"))
	}
	for i := 0; i < len(slot); i++ {
		c := slot[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return apierr.Invalid("Invalid connection slot.", apierr.Field("body.connections", "slot names of 1 to 64 letters, digits, - and _"))
		}
	}
	return nil
}
