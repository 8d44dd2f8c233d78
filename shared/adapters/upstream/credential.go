package upstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"platformapi/shared/base/apierr"
)

// Credential types: how a protected connection's secret is presented to a
// managed service.
const (
	CredentialAPIKey = "api_key" // HeaderName: Secret
	CredentialBearer = "bearer"  // Authorization: Bearer Secret
	CredentialBasic  = "basic"   // Authorization: Basic base64(Username:Secret)
	CredentialOAuth2 = "oauth2"  // Authorization: Bearer Secret (the access token)
)

// Credential is a protected connection's secret, opened for one call. Only
// the HTTP invoker sends it, as one header chosen by its type, and only to
// the service being called. It redacts itself when printed, logged or
// encoded as JSON, so a Request can be logged without leaking it; Secret is
// read nowhere but in header.
type Credential struct {
	ConnectionID string
	Version      int64
	Type         string
	HeaderName   string // api_key only
	Username     string // basic only
	Secret       string // the key, token, password or access token
}

func (c Credential) String() string {
	return "Credential{" + c.ConnectionID + " v" + strconv.FormatInt(c.Version, 10) + " " + c.Type + " [redacted]}"
}

// GoString keeps %#v from printing the fields.
func (c Credential) GoString() string { return c.String() }

// LogValue keeps slog from printing the fields.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("connectionId", c.ConnectionID), slog.Int64("version", c.Version), slog.String("type", c.Type))
}

// MarshalJSON keeps encoders from printing the secret.
func (c Credential) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ConnectionID string `json:"connectionId"`
		Version      int64  `json:"version"`
		Type         string `json:"type"`
	}{c.ConnectionID, c.Version, c.Type})
}

// header is the header that presents the credential.
func (c Credential) header() (name, value string, err error) {
	switch c.Type {
	case CredentialAPIKey:
		return c.HeaderName, c.Secret, nil
	case CredentialBearer, CredentialOAuth2:
		return "Authorization", "Bearer " + c.Secret, nil
	case CredentialBasic:
		return "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Secret)), nil
	}
	return "", "", fmt.Errorf("upstream: connection %s has unknown credential type %q", c.ConnectionID, c.Type)
}

// reservedHeaders are the headers a connection may not set: the wire
// protocol's own, and those that would change how the request is framed or
// routed rather than who it is from.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Encoding", "Content-Length", "Content-Type", "Cookie", "Expect", "Host",
	"Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	HeaderRequestID, HeaderMaxChargeCredits, HeaderChargedCredits, HeaderUpstreamRequestID,
}

// CheckHeaderName reports whether a connection may carry its secret in the
// header name: an RFC 9110 token of at most 64 characters that is not one
// the wire protocol or HTTP framing uses. Connections check it when they
// are created, so a call never fails on it.
func CheckHeaderName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("a header name of 1 to 64 characters")
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("a header name of letters, digits and !#$%%&'*+-.^_`|~")
		}
	}
	canon := http.CanonicalHeaderKey(name)
	for _, r := range reservedHeaders {
		if canon == http.CanonicalHeaderKey(r) {
			return fmt.Errorf("a header other than %s, which the platform sets itself", canon)
		}
	}
	return nil
}

func isTokenChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// setCredentials adds the call's credentials to hdr. Two credentials (or a
// credential and the operator's own service credential) never share a
// header: one would silently replace the other, so the call is refused
// instead, naming the slot and header, never a value.
func (h *HTTP) setCredentials(hdr http.Header, creds map[string]Credential) error {
	slots := make([]string, 0, len(creds))
	for slot := range creds {
		slots = append(slots, slot)
	}
	sort.Strings(slots)
	usedBy := map[string]string{}
	for _, slot := range slots {
		name, value, err := creds[slot].header()
		if err != nil {
			return err
		}
		if err := CheckHeaderName(name); err != nil {
			return fmt.Errorf("upstream: connection %s: header: want %v", creds[slot].ConnectionID, err)
		}
		canon := http.CanonicalHeaderKey(name)
		location := "body.connections." + slot
		if h.header != "" && canon == http.CanonicalHeaderKey(h.header) {
			return apierr.Invalid("A connection would replace the platform's own credential for this service.",
				apierr.Field(location, "this service reserves the header %s", canon))
		}
		if other, ok := usedBy[canon]; ok {
			return apierr.Invalid("Two connections would send the same header.",
				apierr.Field(location, "uses header %s, as slot %q does", canon, other))
		}
		usedBy[canon] = slot
		hdr.Set(canon, value)
	}
	return nil
}
