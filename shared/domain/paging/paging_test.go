package paging_test

import (
	"errors"
	"testing"

	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/paging"
)

func TestACursorReadsBackAsItsPosition(t *testing.T) {
	for _, pos := range []string{"", "prj#01JZ3NDEKTSV4RRFFQ69G5FAVA", "a\x00b", "é🧀"} {
		got, err := paging.After(paging.Cursor(pos))
		if err != nil || got != pos {
			t.Errorf("After(Cursor(%q)) = %q, %v", pos, got, err)
		}
	}
}

func TestACursorThatIsNotOursIsAValidationError(t *testing.T) {
	for _, c := range []string{"not*base64", "a", "AB==", "a b"} {
		_, err := paging.After(c)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.ValidationFailed || e.Errors[0].Location != "query.cursor" {
			t.Errorf("After(%q) = %v", c, err)
		}
	}
}

// FuzzCursor: positions round trip, and any cursor either reads back as a
// position whose own cursor reads back the same, or is a validation error.
func FuzzCursor(f *testing.F) {
	f.Add("prj#01JZ3NDEKTSV4RRFFQ69G5FAVA", "cHJqIzAx")
	f.Add("", "=")
	f.Add("\xff", "AB\nCD")
	f.Fuzz(func(t *testing.T, pos, cursor string) {
		if got, err := paging.After(paging.Cursor(pos)); err != nil || got != pos {
			t.Fatalf("position %q: read back %q, %v", pos, got, err)
		}
		got, err := paging.After(cursor)
		var e *apierr.Error
		if err != nil {
			if !errors.As(err, &e) || e.Code != apierr.ValidationFailed {
				t.Fatalf("After(%q) = %v, want validation_failed", cursor, err)
			}
			return
		}
		if again, err := paging.After(paging.Cursor(got)); err != nil || again != got {
			t.Fatalf("After(%q) = %q does not round trip", cursor, got)
		}
	})
}
