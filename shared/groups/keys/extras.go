package keys

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"platformapi/shared/base/apierr"
)

// Bounds of the optional create fields. They keep a key record
// small (it is read on every request) and the per-request network check a
// short scan.
const (
	MaxAllowedIPs    = 64
	MaxMetadata      = 16
	MaxMetadataKey   = 40
	MaxMetadataValue = 256
)

// Metadata is a key's free-form labels: shown in listings, never consulted
// by any access decision.
type Metadata map[string]string

var metadataKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// checkExtras validates the shape of allowedIps, notBefore and metadata.
func checkExtras(req CreateKeyRequest, now time.Time) []apierr.FieldError {
	var fields []apierr.FieldError
	switch {
	case req.AllowedIPs == nil:
	case len(req.AllowedIPs) == 0:
		fields = append(fields, apierr.Field("body.allowedIps", "at least one network; omit the field to inherit the parent's"))
	case len(req.AllowedIPs) > MaxAllowedIPs:
		fields = append(fields, apierr.Field("body.allowedIps", "at most %d entries, got %d", MaxAllowedIPs, len(req.AllowedIPs)))
	default:
		for i, s := range req.AllowedIPs {
			if _, err := ParseNetwork(s); err != nil {
				fields = append(fields, apierr.Field(fmt.Sprintf("body.allowedIps[%d]", i), "%s", err.Error()))
			}
		}
	}
	if req.NotBefore != nil && req.ExpiresAt != nil && !req.NotBefore.Before(*req.ExpiresAt) {
		fields = append(fields, apierr.Field("body.notBefore", "must be before expiresAt"))
	}
	if len(req.Metadata) > MaxMetadata {
		fields = append(fields, apierr.Field("body.metadata", "at most %d entries, got %d", MaxMetadata, len(req.Metadata)))
		return fields
	}
	for _, name := range slices.Sorted(maps.Keys(req.Metadata)) {
		loc := "body.metadata." + name
		if len(name) > MaxMetadataKey || !metadataKeyRE.MatchString(name) {
			fields = append(fields, apierr.Field("body.metadata", "key %q: 1-%d characters of A-Z a-z 0-9 _ . -", name, MaxMetadataKey))
			continue
		}
		v := req.Metadata[name]
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxMetadataValue {
			fields = append(fields, apierr.Field(loc, "at most %d characters of valid UTF-8", MaxMetadataValue))
		}
	}
	return fields
}

// ParseNetwork reads a CIDR (or a single address, as /32 or /128) into its
// normalised form: host bits cleared, an IPv4-mapped IPv6 network as IPv4.
func ParseNetwork(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 or IPv6 CIDR", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// within reports whether network c lies entirely inside network p.
func within(c, p netip.Prefix) bool {
	return c.Addr().Is4() == p.Addr().Is4() && p.Bits() <= c.Bits() && p.Contains(c.Addr())
}

// applyNetworks sets the requested allowlist after checking that every
// network of it lies inside some network of each ancestor that has a list:
// a child can narrow where its key is usable from, never widen it.
func applyNetworks(k *Key, chain []*Key, req CreateKeyRequest) error {
	if req.AllowedIPs == nil {
		return nil
	}
	var out []string
	for _, s := range req.AllowedIPs {
		c, _ := ParseNetwork(s) // validated
		for _, a := range chain {
			if a.AllowedIPs != nil && !insideAny(c, a.AllowedIPs) {
				return denied("Network %s is outside the allowedIps of ancestor %s.", c, a.ID)
			}
		}
		out = append(out, c.String())
	}
	k.AllowedIPs = sortedUnique(out)
	return nil
}

func insideAny(c netip.Prefix, list []string) bool {
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil && within(c, p) {
			return true
		}
	}
	return false
}

// applyNotBefore sets the requested start after checking that no ancestor
// starts later: a child cannot be usable before its parent is.
func applyNotBefore(k *Key, chain []*Key, req CreateKeyRequest) error {
	if req.NotBefore == nil {
		return nil
	}
	t := req.NotBefore.UTC()
	for _, a := range chain {
		if a.NotBefore != nil && t.Before(*a.NotBefore) {
			return denied("notBefore %s is earlier than ancestor %s's notBefore %s.", t.Format(time.RFC3339), a.ID, a.NotBefore.UTC().Format(time.RFC3339))
		}
	}
	if k.ExpiresAt != nil && !t.Before(*k.ExpiresAt) {
		return apierr.Invalid("The key request is invalid.", apierr.Field("body.notBefore", "must be before the key's expiry %s", k.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	k.NotBefore = &t
	return nil
}

// AllowsAddr reports whether a request from addr may use the key: the key
// has no network list, or addr is inside one of its networks. An unknown
// (invalid) address is allowed only by a key without a list.
func (k *Key) AllowsAddr(addr netip.Addr) bool {
	if k.AllowedIPs == nil {
		return true
	}
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap()
	for _, s := range k.AllowedIPs {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}
