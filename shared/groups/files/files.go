// Package files holds a project's uploaded files: a record in the item store
// and the bytes in the blob store, bound together by a SHA-256 computed while
// the upload streams (and checked against the client's, when it sent one).
// Files belong to an account and to the project of the request ("" for the
// account level); any other account's or project's file does not exist for
// every operation. This package has no HTTP: the files endpoint group parses
// headers with the helpers below and calls Repo.
package files

import (
	"encoding/hex"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"platformapi/shared/base/apierr"
)

// Limits of a file (docs/files.md).
const (
	// MaxSize is the largest body: API Gateway hands Lambda a binary body
	// base64-encoded inside a 6 MB payload.
	MaxSize = 4 << 20
	// MaxFilenameBytes bounds the decoded X-File-Name.
	MaxFilenameBytes = 255
	// maxContentTypeBytes bounds the Content-Type kept with the file.
	maxContentTypeBytes = 255
	// StatusDeleted marks the record returned by Delete.
	StatusDeleted = "deleted"
	// idPrefix is the prefix of file ids.
	idPrefix = "file"
)

// File is the resource.
type File struct {
	ID          string    `json:"id" doc:"File id (file_…)"`
	ProjectID   *string   `json:"projectId" doc:"The project the file belongs to, or null at account level"`
	Filename    string    `json:"filename" doc:"The decoded X-File-Name"`
	ContentType string    `json:"contentType" doc:"The upload's Content-Type, as sent"`
	SizeBytes   int64     `json:"sizeBytes"`
	SHA256      string    `json:"sha256" doc:"Lowercase hex SHA-256 of the bytes, computed by the service while storing them"`
	Purpose     *string   `json:"purpose" doc:"The X-Service-File-Purpose, or null"`
	CreatedAt   time.Time `json:"createdAt"`
	Status      string    `json:"status,omitempty" enum:"deleted" doc:"Only in the answer of a deletion"`
}

// Header names the helpers report errors against.
const (
	HeaderFileName = "X-File-Name"
	HeaderSHA256   = "X-Content-Sha256"
	HeaderPurpose  = "X-Service-File-Purpose"
)

func headerField(name, msg string, args ...any) *apierr.Error {
	return apierr.Invalid("Invalid "+name+" header.", apierr.Field("header."+name, msg, args...))
}

// ParseFileName decodes X-File-Name: plain printable ASCII, or RFC 8187's
// extended notation UTF-8'[language]'percent-encoded (the only way a header
// carries a non-ASCII name intact). The decoded name must be 1–255 bytes of
// UTF-8 without control characters, '/' or '\', so that it can never name
// a path or break a header when it is echoed back.
func ParseFileName(header string) (string, error) {
	if header == "" {
		return "", headerField(HeaderFileName, "required: the file's name, 1–%d bytes", MaxFilenameBytes)
	}
	name := header
	// A plain name may hold apostrophes ("Q3's report.pdf"); only the
	// UTF-8' prefix makes it an extended value.
	if len(header) >= 6 && strings.EqualFold(header[:6], "UTF-8'") {
		_, value, ok := strings.Cut(header[6:], "'")
		if !ok {
			return "", headerField(HeaderFileName, "an extended value is UTF-8'language'percent-encoded (RFC 8187)")
		}
		var err error
		if name, err = decodeExtValue(value); err != nil {
			return "", headerField(HeaderFileName, "%s", err)
		}
	} else {
		if charset, _, ok := strings.Cut(header, "''"); ok && otherCharsets[strings.ToLower(charset)] {
			return "", headerField(HeaderFileName, "an extended value must be UTF-8''percent-encoded (RFC 8187), not %s", charset)
		}
		for i := 0; i < len(name); i++ {
			if name[i] < 0x20 || name[i] > 0x7e {
				return "", headerField(HeaderFileName, "byte %d is not printable ASCII; send other names as UTF-8''percent-encoded (RFC 8187)", i)
			}
		}
	}
	if err := checkFileName(name); err != nil {
		return "", err
	}
	return name, nil
}

// checkFileName holds the rules of a decoded name.
func checkFileName(name string) error {
	switch {
	case name == "":
		return headerField(HeaderFileName, "the decoded name is empty")
	case len(name) > MaxFilenameBytes:
		return headerField(HeaderFileName, "the decoded name is %d bytes; at most %d", len(name), MaxFilenameBytes)
	case !utf8.ValidString(name):
		return headerField(HeaderFileName, "the decoded name is not UTF-8")
	case strings.ContainsAny(name, `/\`):
		return headerField(HeaderFileName, `a file name contains neither "/" nor "\"`)
	}
	for _, r := range name {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return headerField(HeaderFileName, "the name contains the control character U+%04X", r)
		}
		// "evil\u202efdp.exe" displays as "evilexe.pdf": a name that reorders
		// itself on screen lies about what the file is.
		if unicode.Is(unicode.Bidi_Control, r) {
			return headerField(HeaderFileName, "the name contains the bidirectional control character U+%04X; file names may not hold bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which make a name display as another", r)
		}
	}
	return nil
}

// otherCharsets are those RFC 8187 allows besides UTF-8: a name sent in one
// is refused, not kept with its encoding as if it were the name.
var otherCharsets = map[string]bool{"iso-8859-1": true, "us-ascii": true}

// decodeExtValue decodes RFC 8187's value-chars: attr-chars and %XX, nothing
// else (a raw space or quote means the client did not encode the name).
func decodeExtValue(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '%':
			if i+2 >= len(v) {
				return "", fmt.Errorf("truncated percent-encoding at byte %d", i)
			}
			x, err := hex.DecodeString(v[i+1 : i+3])
			if err != nil {
				return "", fmt.Errorf("invalid percent-encoding %q at byte %d", v[i:i+3], i)
			}
			b.WriteByte(x[0])
			i += 2
		case isAttrChar(c):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("byte %d (%q) must be percent-encoded", i, c)
		}
	}
	return b.String(), nil
}

// isAttrChar is RFC 8187's attr-char.
func isAttrChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// ContentDisposition is the RFC 6266 attachment header of a download:
// filename* carries the exact name (RFC 8187), filename an ASCII stand-in
// for clients that ignore filename*, with every character that is not
// plain printable ASCII, and '"', '\' and '%' (which some clients decode),
// replaced by '_'.
func ContentDisposition(filename string) string {
	var fallback, ext strings.Builder
	for _, r := range filename {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' {
			fallback.WriteByte('_')
		} else {
			fallback.WriteRune(r)
		}
	}
	for i := 0; i < len(filename); i++ {
		if c := filename[i]; isAttrChar(c) {
			ext.WriteByte(c)
		} else {
			fmt.Fprintf(&ext, "%%%02X", c)
		}
	}
	return `attachment; filename="` + fallback.String() + `"; filename*=UTF-8''` + ext.String()
}

var purposePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ParsePurpose checks X-Service-File-Purpose; "" (absent) is no purpose.
func ParsePurpose(header string) (string, error) {
	if header != "" && !purposePattern.MatchString(header) {
		return "", headerField(HeaderPurpose, "must match [a-z0-9][a-z0-9._-]{0,63}")
	}
	return header, nil
}

// ParseSHA256 checks X-Content-Sha256 (64 hex digits, either case) and
// returns it in lowercase; "" (absent) asks for no check.
func ParseSHA256(header string) (string, error) {
	if header == "" {
		return "", nil
	}
	if _, err := hex.DecodeString(header); err != nil || len(header) != 64 {
		return "", headerField(HeaderSHA256, "must be the SHA-256 of the body as 64 hexadecimal digits")
	}
	return strings.ToLower(header), nil
}

// ParseContentType keeps the upload's Content-Type as sent, provided it is a
// media type at all and short enough to store; absent is
// application/octet-stream.
func ParseContentType(header string) (string, error) {
	if header == "" {
		return "application/octet-stream", nil
	}
	if len(header) > maxContentTypeBytes {
		return "", apierr.Invalid("Invalid Content-Type header.", apierr.Field("header.Content-Type", "at most %d bytes", maxContentTypeBytes))
	}
	if _, _, err := mime.ParseMediaType(header); err != nil {
		return "", apierr.Invalid("Invalid Content-Type header.", apierr.Field("header.Content-Type", "not a media type: %v", err))
	}
	return header, nil
}
