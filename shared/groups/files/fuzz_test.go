package files_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"platformapi/shared/groups/files"
)

// An accepted X-File-Name is a name the rules allow, and its
// Content-Disposition can never split or inject a header.
func FuzzParseFileName(f *testing.F) {
	for _, seed := range []string{"report.pdf", "UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt", "utf-8'en'%E2%82%AC.txt", "a/b", "..", "UTF-8''%00", "UTF-8''%2F", "UTF-8''evil%E2%80%AEfdp.exe"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		name, err := files.ParseFileName(header)
		if err != nil {
			return
		}
		if len(name) < 1 || len(name) > 255 || !utf8.ValidString(name) {
			t.Fatalf("%q accepted as %q", header, name)
		}
		for _, r := range name {
			if r == '/' || r == '\\' || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("%q accepted with %q in it", header, r)
			}
		}
		cd := files.ContentDisposition(name)
		if strings.ContainsAny(cd, "\r\n\x00") || !strings.HasPrefix(cd, "attachment;") {
			t.Fatalf("Content-Disposition %q for %q", cd, name)
		}
		if again, err := files.ParseFileName(header); err != nil || again != name {
			t.Fatalf("%q parsed twice: %q, %q %v", header, name, again, err)
		}
	})
}
