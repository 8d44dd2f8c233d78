package connections

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"platformapi/shared/adapters/upstream"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/strictjson"
)

// secret is what is sealed: the whole credentials object of one version.
// It never leaves the package except as an upstream.Credential.
type secret struct {
	Key          string     `json:"key,omitempty"`
	HeaderName   string     `json:"headerName,omitempty"`
	Token        string     `json:"token,omitempty"`
	Username     string     `json:"username,omitempty"`
	Password     string     `json:"password,omitempty"`
	AccessToken  string     `json:"accessToken,omitempty"`
	RefreshToken string     `json:"refreshToken,omitempty"`
	ExpiresAt    *time.Time `json:"expiresAt,omitempty"`
	TokenURL     string     `json:"tokenUrl,omitempty"`
	ClientID     string     `json:"clientId,omitempty"`
	ClientSecret string     `json:"clientSecret,omitempty"`
}

// fieldKind says how a credentials field is checked.
type fieldKind int

const (
	headerSecret fieldKind = iota + 1 // sent in a header: visible ASCII and inner spaces
	anySecret                         // never sent as is: any text without control characters
	username                          // basic: no colon
	headerName
	httpsURL
	timestamp
	plainText // not secret, bounded like a username
)

type field struct {
	name     string
	kind     fieldKind
	required bool
	set      func(*secret, string)
}

// fields lists each type's credentials; nothing else is accepted.
var fields = map[string][]field{
	TypeAPIKey: {
		{"key", headerSecret, true, func(s *secret, v string) { s.Key = v }},
		{"headerName", headerName, false, func(s *secret, v string) { s.HeaderName = v }},
	},
	TypeBearer: {
		{"token", headerSecret, true, func(s *secret, v string) { s.Token = v }},
	},
	TypeBasic: {
		{"username", username, true, func(s *secret, v string) { s.Username = v }},
		{"password", anySecret, true, func(s *secret, v string) { s.Password = v }},
	},
	TypeOAuth2: {
		{"accessToken", headerSecret, true, func(s *secret, v string) { s.AccessToken = v }},
		{"refreshToken", anySecret, false, func(s *secret, v string) { s.RefreshToken = v }},
		{"expiresAt", timestamp, false, nil},
		{"tokenUrl", httpsURL, false, func(s *secret, v string) { s.TokenURL = v }},
		{"clientId", plainText, false, func(s *secret, v string) { s.ClientID = v }},
		{"clientSecret", anySecret, false, func(s *secret, v string) { s.ClientSecret = v }},
	},
}

func checkType(t string) error {
	if _, ok := fields[t]; !ok {
		return apierr.Invalid("Unknown connection type.", apierr.Field("body.type", "one of api_key, bearer, basic, oauth2"))
	}
	return nil
}

// repeatedField is the refusal of credentials that hold a field twice (or
// two fields that differ only in case). It names neither field: a client
// may paste a secret where a name belongs, and a 400 is stored in clear for
// idempotent replay.
func repeatedField() error {
	return apierr.Invalid("Credentials repeat a field.", apierr.Field("body.credentials",
		"each field at most once, and no two fields that differ only in case (the field is not named: it may be a secret)"))
}

// CheckBody refuses a create or update body whose credentials repeat a
// field, before a generic strict decoder reports the collision by the
// key's name. Every other fault is left to that decoder: outside the
// credentials nothing is secret. Each top-level member that encoding/json
// would read as the credentials (its name equal under Unicode case
// folding, as the decoder matches fields) is checked, a repeated one too.
func CheckBody(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		var ke *strictjson.KeyError
		if name, _ := tok.(string); strings.EqualFold(name, "credentials") && errors.As(strictjson.Check(value), &ke) {
			return repeatedField()
		}
	}
	return nil
}

// decodeCredentials reads the credentials of type t strictly: a JSON object
// holding exactly the type's fields, each a string. Its errors name the
// field and the rule, never a value, not even an unknown field's name (a
// client may paste a secret where a name belongs).
func decodeCredentials(t string, raw json.RawMessage) (secret, error) {
	const loc = "body.credentials"
	var s secret
	spec := fields[t]
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return s, apierr.Invalid("Credentials are required.", apierr.Field(loc, "an object with the fields of type %s", t))
	}
	var ke *strictjson.KeyError
	if errors.As(strictjson.Check(raw), &ke) {
		return s, repeatedField()
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if dec.Decode(&obj) != nil {
		return s, apierr.Invalid("Credentials are not a JSON object.", apierr.Field(loc, "an object with the fields of type %s", t))
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, apierr.Invalid("Credentials are not a JSON object.", apierr.Field(loc, "an object with the fields of type %s", t))
	}
	names := make([]string, len(spec))
	for i, f := range spec {
		names[i] = f.name
	}
	for name := range obj {
		if !slices.Contains(names, name) {
			return s, apierr.Invalid("Unknown credentials field.", apierr.Field(loc, "type %s accepts only %s", t, strings.Join(names, ", ")))
		}
	}
	for _, f := range spec {
		v, present := obj[f.name]
		at := loc + "." + f.name
		if !present || string(v) == "null" {
			if f.required {
				return s, apierr.Invalid("Missing credentials field.", apierr.Field(at, "required for type %s", t))
			}
			continue
		}
		var str string
		if json.Unmarshal(v, &str) != nil {
			return s, apierr.Invalid("Credentials fields are strings.", apierr.Field(at, "a string"))
		}
		if err := checkField(f.kind, str); err != nil {
			return s, apierr.Invalid("Invalid credentials field.", apierr.Field(at, "%s", err))
		}
		if f.kind == timestamp {
			ts, _ := time.Parse(time.RFC3339, str)
			ts = ts.UTC()
			s.ExpiresAt = &ts
			continue
		}
		f.set(&s, str)
	}
	if t == TypeAPIKey && s.HeaderName == "" {
		s.HeaderName = DefaultHeaderName
	}
	return s, nil
}

// checkField applies a field's rule. Its message describes the rule only.
func checkField(kind fieldKind, v string) error {
	switch kind {
	case headerSecret:
		if v == "" || len(v) > MaxSecret {
			return fmt.Errorf("1 to %d bytes", MaxSecret)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < ' ' || v[i] > '~' {
				return fmt.Errorf("printable ASCII only (it is sent in an HTTP header)")
			}
		}
		if v[0] == ' ' || v[len(v)-1] == ' ' {
			return fmt.Errorf("no leading or trailing spaces")
		}
	case anySecret:
		if v == "" || len(v) > MaxSecret {
			return fmt.Errorf("1 to %d bytes", MaxSecret)
		}
		return checkText(v)
	case username, plainText:
		if v == "" || len(v) > MaxUsername {
			return fmt.Errorf("1 to %d bytes", MaxUsername)
		}
		if kind == username && strings.Contains(v, ":") {
			return fmt.Errorf("no colon (basic authentication separates the password with one)")
		}
		return checkText(v)
	case headerName:
		return upstream.CheckHeaderName(v)
	case httpsURL:
		u, err := url.Parse(v)
		if err != nil || len(v) > 2048 || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
			return fmt.Errorf("an https URL of at most 2048 bytes, without user information or fragment")
		}
	case timestamp:
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return fmt.Errorf("an RFC 3339 timestamp")
		}
	}
	return nil
}

// checkText refuses invalid UTF-8 and control characters.
func checkText(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("valid UTF-8")
	}
	for _, r := range v {
		if r < ' ' || r == 0x7f {
			return fmt.Errorf("no control characters")
		}
	}
	return nil
}

// presented is the secret the service receives; its tail is the hint.
func (s secret) presented(t string) string {
	switch t {
	case TypeAPIKey:
		return s.Key
	case TypeBearer:
		return s.Token
	case TypeBasic:
		return s.Password
	}
	return s.AccessToken
}

// hint is the last four characters of a long enough presented secret.
func (s secret) hint(t string) string {
	r := []rune(s.presented(t))
	if len(r) < HintMinLength {
		return ""
	}
	return string(r[len(r)-4:])
}

func (s secret) credential(c *Connection, version int64) Credential {
	return Credential{ConnectionID: c.ID, Version: version, Type: c.Type, HeaderName: s.HeaderName, Username: s.Username, Secret: s.presented(c.Type)}
}
