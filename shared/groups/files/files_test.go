package files

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"platformapi/shared/base/apierr"
)

func TestFileNamesArePlainASCIIOrRFC8187(t *testing.T) {
	for _, c := range []struct {
		header, want string
	}{
		{"report.pdf", "report.pdf"},
		{"Q3's report (final).pdf", "Q3's report (final).pdf"},
		{"UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"},
		{"utf-8'de'Gr%C3%BC%C3%9Fe.txt", "Grüße.txt"},
		{"UTF-8''plain-name_1.txt", "plain-name_1.txt"},
		{strings.Repeat("a", 255), strings.Repeat("a", 255)},
		{"UTF-8''" + strings.Repeat("%C3%A9", 127), strings.Repeat("é", 127)},
	} {
		got, err := ParseFileName(c.header)
		if err != nil || got != c.want {
			t.Errorf("ParseFileName(%q) = %q, %v; want %q", c.header, got, err, c.want)
		}
	}
}

func TestInvalidFileNamesAreValidationErrorsOnTheHeader(t *testing.T) {
	for _, header := range []string{
		"",
		strings.Repeat("a", 256),
		"UTF-8''" + strings.Repeat("%C3%A9", 128), // 256 bytes decoded
		"UTF-8''",
		"dir/file", `dir\file`, "UTF-8''dir%2Ffile", "UTF-8''dir%5Cfile",
		"tab\tname", "UTF-8''line%0Abreak", "UTF-8''del%7F", "UTF-8''c1%C2%85",
		"caf\xc3\xa9", // raw UTF-8 in a plain header
		"UTF-8''%FF%FE", "UTF-8''bad%G1", "UTF-8''cut%4", "UTF-8''raw space",
		"ISO-8859-1''caf%E9", "us-ascii''cafe", "UTF-8'no-second-quote",
	} {
		_, err := ParseFileName(header)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed || len(ae.Errors) != 1 || ae.Errors[0].Location != "header.X-File-Name" {
			t.Errorf("ParseFileName(%q) = %v; want validation_failed on header.X-File-Name", header, err)
		}
	}
}

// "evil\u202efdp.exe" displays as "evilexe.pdf". Every
// bidirectional control is refused, percent-encoded or not, with a message
// naming the rule.
func TestBidiControlsAreRefusedInFileNames(t *testing.T) {
	for _, r := range []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069} {
		header := "UTF-8''evil" + url.PathEscape(string(r)) + "fdp.exe"
		_, err := ParseFileName(header)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != apierr.ValidationFailed || len(ae.Errors) != 1 || ae.Errors[0].Location != "header.X-File-Name" ||
			!strings.Contains(ae.Errors[0].Message, fmt.Sprintf("bidirectional control character U+%04X", r)) {
			t.Errorf("ParseFileName(%q) = %v; want validation_failed naming the bidirectional control U+%04X", header, err, r)
		}
	}
}

func TestContentDispositionCarriesTheExactNameAndASafeFallback(t *testing.T) {
	for _, c := range []struct{ name, fallback string }{
		{"report.pdf", "report.pdf"},
		{"€ rates.txt", "_ rates.txt"},
		{`say "hi" 100%.txt`, "say _hi_ 100_.txt"},
		{"Q3's; report=1.pdf", "Q3's; report=1.pdf"},
	} {
		got := ContentDisposition(c.name)
		head, ext, ok := strings.Cut(got, "; filename*=")
		if !ok || head != `attachment; filename="`+c.fallback+`"` {
			t.Errorf("ContentDisposition(%q) = %s; want fallback %q", c.name, got, c.fallback)
			continue
		}
		if back, err := ParseFileName(ext); err != nil || back != c.name {
			t.Errorf("filename* of %q decodes to %q, %v", c.name, back, err)
		}
	}
}

func TestPurposeAndChecksumHeaders(t *testing.T) {
	for _, c := range []struct {
		purpose string
		ok      bool
	}{
		{"", true}, {"fine-tune", true}, {"a", true}, {"v1.2_x", true}, {"0" + strings.Repeat("a", 63), true},
		{"0" + strings.Repeat("a", 64), false}, {"Fine", false}, {"-x", false}, {".x", false}, {"a b", false}, {"a/b", false},
	} {
		if _, err := ParsePurpose(c.purpose); (err == nil) != c.ok {
			t.Errorf("ParsePurpose(%q) = %v; want ok=%v", c.purpose, err, c.ok)
		}
	}
	sum := hexSHA([]byte("x"))
	if got, err := ParseSHA256(strings.ToUpper(sum)); err != nil || got != sum {
		t.Errorf("ParseSHA256(upper) = %q, %v; want %q", got, err, sum)
	}
	for _, bad := range []string{sum[:63], sum + "0", "z" + sum[1:], "sha256:" + sum} {
		_, err := ParseSHA256(bad)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Errors[0].Location != "header.X-Content-Sha256" {
			t.Errorf("ParseSHA256(%q) = %v; want validation_failed on header.X-Content-Sha256", bad, err)
		}
	}
}
