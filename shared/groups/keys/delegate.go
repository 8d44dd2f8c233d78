package keys

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/ids"
	"platformapi/shared/domain/limits"
)

// CreateKeyRequest is the body of POST /api-keys (docs/keys.md). Absent fields are
// inherited from the parent; an empty allowedServices array means "no
// managed service", which is different from absent.
type CreateKeyRequest struct {
	Label              string     `json:"label,omitempty" maxLength:"200" doc:"Human label of the key"`
	Scopes             []string   `json:"scopes,omitempty" doc:"Scopes granted; default: the parent's (all scopes for a first key)"`
	AllowedServices    []string   `json:"allowedServices,omitempty" doc:"Only these services are reachable; [] means none"`
	ExcludedServices   []string   `json:"excludedServices,omitempty" doc:"Every service available now except these, stored as an explicit allowlist"`
	AllowedOperations  []string   `json:"allowedOperations,omitempty" doc:"Operation selectors; resolved into exact operation ids at creation"`
	ExcludedOperations []string   `json:"excludedOperations,omitempty" doc:"Operation selectors removed from the parent's boundary"`
	ExpiresAt          *time.Time `json:"expiresAt,omitempty" doc:"RFC 3339 UTC; in the future and not after any ancestor's expiry. Default: the parent's"`
	Limits             limits.Set `json:"limits,omitempty" doc:"Limit selector to limit object (docs/limits.md)"`
	ProjectID          *string    `json:"projectId,omitempty" doc:"Bind the key (and all its descendants) to one project of the account"`
	PrivacyTier        string     `json:"privacyTier,omitempty" enum:"standard,pseudonymous,minimal" doc:"Default: the parent's (standard for a first key); never looser than the parent's"`
	AllowedIPs         []string   `json:"allowedIps,omitempty" maxItems:"64" example:"[\"203.0.113.0/24\",\"2001:db8::/32\"]" doc:"Client networks (IPv4/IPv6 CIDR or single address) the key may be used from; each must lie inside a network of every ancestor that has a list. Default: the parent's"`
	NotBefore          *time.Time `json:"notBefore,omitempty" doc:"RFC 3339; the key is 401 key_not_yet_valid before it. Not earlier than any ancestor's notBefore, and before expiresAt. Default: the parent's"`
	Metadata           Metadata   `json:"metadata,omitempty" doc:"Up to 16 string pairs (key: 1-40 of A-Z a-z 0-9 _ . -; value: at most 256 characters), shown in listings and never used for policy. Not inherited"`
}

// ProjectCheck reports whether a project id names an active project of the
// account the key is being created in.
type ProjectCheck func(projectID string) bool

// Build validates req against the parent's chain (root first, parent last;
// empty for an account's first key) and returns the new key without its
// secret. Malformed input is a 400; input
// that would make the child broader than its ancestors is a 403
// delegation_denied.
func Build(chain []*Key, accountID string, req CreateKeyRequest, now time.Time, projectOK ProjectCheck) (*Key, error) {
	var parent *Key
	if len(chain) > 0 {
		parent = chain[len(chain)-1]
	}
	if err := validate(req, now); err != nil {
		return nil, err
	}
	k := &Key{
		ID: ids.New("key", now), AccountID: accountID, Label: req.Label, CreatedAt: now.UTC(),
		Depth: 1, PrivacyTier: TierStandard, Scopes: slices.Clone(Scopes), Limits: limits.Set{},
	}
	if parent != nil {
		if parent.Depth >= MaxDepth {
			return nil, apierr.New(apierr.DelegationDenied, "Delegation is limited to %d levels; the parent is at depth %d.", MaxDepth, parent.Depth)
		}
		k.Depth = parent.Depth + 1
		k.ParentID = &parent.ID
		k.Ancestors = append(slices.Clone(parent.Ancestors), parent.ID)
		k.Scopes = slices.Clone(parent.Scopes)
		k.AllowedServices = cloneOrNil(parent.AllowedServices)
		k.AllowedOperations = cloneOrNil(parent.AllowedOperations)
		k.ExpiresAt = parent.ExpiresAt
		k.ProjectID = parent.ProjectID
		k.PrivacyTier = parent.PrivacyTier
		k.AllowedIPs = cloneOrNil(parent.AllowedIPs)
		k.NotBefore = parent.NotBefore
		// A rolled ancestor may expire before its existing children: the
		// earliest expiry of the chain is the child's default and bound.
		for _, a := range chain {
			if a.ExpiresAt != nil && (k.ExpiresAt == nil || a.ExpiresAt.Before(*k.ExpiresAt)) {
				k.ExpiresAt = a.ExpiresAt
			}
		}
	}
	steps := []func(*Key, CreateKeyRequest, ProjectCheck) error{
		applyScopes, applyServices, applyOperations, applyExpiry, applyProject, applyTier,
	}
	for _, step := range steps {
		if err := step(k, req, projectOK); err != nil {
			return nil, err
		}
	}
	if err := applyLimits(k, chain, req); err != nil {
		return nil, err
	}
	if err := applyNetworks(k, chain, req); err != nil {
		return nil, err
	}
	if err := applyNotBefore(k, chain, req); err != nil {
		return nil, err
	}
	k.Metadata = Metadata{}
	for name, v := range req.Metadata {
		k.Metadata[name] = v
	}
	return k, nil
}

func cloneOrNil(s []string) []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s)
}

// MaxListEntries bounds every list of a key request (and its limits map):
// resolving selectors costs CPU per entry, and an unbounded list would let
// one caller slow every other. No real boundary needs
// more: the whole operation universe is smaller.
const MaxListEntries = 256

// requestLists names the key request's lists, in the order their errors are
// reported.
func requestLists(req CreateKeyRequest) []struct {
	name string
	list []string
} {
	return []struct {
		name string
		list []string
	}{
		{"scopes", req.Scopes},
		{"allowedServices", req.AllowedServices},
		{"excludedServices", req.ExcludedServices},
		{"allowedOperations", req.AllowedOperations},
		{"excludedOperations", req.ExcludedOperations},
	}
}

// validate checks the request's shape. An over-long list is refused before
// any of its entries is looked at, and each distinct entry is checked once,
// so the work is bounded by MaxListEntries whatever was sent.
func validate(req CreateKeyRequest, now time.Time) error {
	var fields []apierr.FieldError
	if req.AllowedServices != nil && req.ExcludedServices != nil {
		fields = append(fields, apierr.Field("body.excludedServices", "allowedServices and excludedServices must not both be sent"))
	}
	if req.AllowedOperations != nil && req.ExcludedOperations != nil {
		fields = append(fields, apierr.Field("body.excludedOperations", "allowedOperations and excludedOperations must not both be sent"))
	}
	for _, l := range requestLists(req) {
		if len(l.list) > MaxListEntries {
			fields = append(fields, apierr.Field("body."+l.name, "at most %d entries, got %d", MaxListEntries, len(l.list)))
			continue
		}
		seen := make(map[string]bool, len(l.list))
		for i, s := range l.list {
			if seen[s] {
				continue
			}
			seen[s] = true
			if msg := checkEntry(l.name, s); msg != "" {
				fields = append(fields, apierr.Field(fmt.Sprintf("body.%s[%d]", l.name, i), "%s", msg))
			}
		}
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(now) {
		fields = append(fields, apierr.Field("body.expiresAt", "must be in the future"))
	}
	if req.PrivacyTier != "" && TierRank(req.PrivacyTier) < 0 {
		fields = append(fields, apierr.Field("body.privacyTier", "unknown privacy tier %q", req.PrivacyTier))
	}
	fields = append(fields, checkExtras(req, now)...)
	if len(req.Limits) > MaxListEntries {
		fields = append(fields, apierr.Field("body.limits", "at most %d entries, got %d", MaxListEntries, len(req.Limits)))
	} else {
		for _, sel := range slices.Sorted(maps.Keys(req.Limits)) {
			fields = append(fields, checkLimit(sel, req.Limits[sel])...)
		}
	}
	if len(fields) > 0 {
		return apierr.Invalid("The key request is invalid.", fields...)
	}
	return nil
}

// checkEntry says what is wrong with one entry of the named list, or "".
func checkEntry(list, s string) string {
	switch list {
	case "scopes":
		if !IsScope(s) {
			return fmt.Sprintf("unknown scope %q", s)
		}
	case "allowedServices", "excludedServices":
		if _, ok := catalog.Lookup(s); !ok {
			return fmt.Sprintf("unknown service id %q", s)
		}
	default:
		if _, ok := Expand(s); !ok {
			return fmt.Sprintf("unknown operation selector %q", s)
		}
	}
	return ""
}

func checkLimit(sel string, l limits.Limit) []apierr.FieldError {
	var fields []apierr.FieldError
	loc := "body.limits." + sel
	switch {
	case !ValidLimitSelector(sel):
		fields = append(fields, apierr.Field(loc, "unknown limit selector %q", sel))
	case l.RequestsPerMinute == nil && l.MaxConcurrent == nil && l.CreditsPerDay == nil:
		fields = append(fields, apierr.Field(loc, "set at least one of requestsPerMinute, maxConcurrent, creditsPerDay"))
	case l.CreditsPerDay != nil && !MeteredSelector(sel):
		fields = append(fields, apierr.Field(loc+".creditsPerDay", "creditsPerDay applies only to the credit-metered operations services.invoke, runs.create, wallets.transactions.create, trading.orders.create, swaps.execute and their refinements"))
	}
	if l.RequestsPerMinute != nil && *l.RequestsPerMinute < 1 || l.MaxConcurrent != nil && *l.MaxConcurrent < 1 || l.CreditsPerDay != nil && *l.CreditsPerDay < 0 {
		fields = append(fields, apierr.Field(loc, "limits must be positive"))
	}
	return fields
}

// setOf is a membership set of list.
func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func denied(format string, args ...any) error {
	return apierr.New(apierr.DelegationDenied, format, args...)
}

func applyScopes(k *Key, req CreateKeyRequest, _ ProjectCheck) error {
	if req.Scopes == nil {
		return nil
	}
	held := setOf(k.Scopes)
	for _, s := range req.Scopes {
		if !held[s] {
			return denied("Scope %q is not held by the parent key.", s)
		}
	}
	k.Scopes = sortedUnique(req.Scopes)
	return nil
}

// applyServices resolves the service boundary: an explicit allowlist must
// stay inside the parent's; an exclusion is taken from the parent's boundary
// (or every registered service) and stored as an allowlist, so services
// added later stay excluded.
func applyServices(k *Key, req CreateKeyRequest, _ ProjectCheck) error {
	switch {
	case req.AllowedServices != nil:
		parent := setOf(k.AllowedServices)
		for _, s := range req.AllowedServices {
			if k.AllowedServices != nil && !parent[s] {
				return denied("Service %q is outside the parent's service boundary.", s)
			}
		}
		k.AllowedServices = sortedUnique(req.AllowedServices)
	case req.ExcludedServices != nil:
		base := k.AllowedServices
		if base == nil {
			base = catalog.IDs()
		}
		excluded := setOf(req.ExcludedServices)
		out := []string{}
		for _, s := range base {
			if !excluded[s] {
				out = append(out, s)
			}
		}
		k.AllowedServices = out
	}
	return nil
}

// applyOperations resolves operation selectors into exact ids now:
// capabilities registered later never become reachable through an
// allowlist or an exclusion.
func applyOperations(k *Key, req CreateKeyRequest, _ ProjectCheck) error {
	switch {
	case req.AllowedOperations != nil:
		var parent map[string]bool // nil: the parent has no operation boundary
		if k.AllowedOperations != nil {
			parent = setOf(k.AllowedOperations)
		}
		var out []string
		for _, sel := range sortedUnique(req.AllowedOperations) {
			ops, _ := Expand(sel)
			for _, op := range ops {
				if parent != nil && !parent[op] {
					if len(ops) > 1 {
						continue // an aggregate keeps what the parent allows of it
					}
					return denied("Operation %q is outside the parent's operation boundary.", op)
				}
				out = append(out, op)
			}
		}
		if out == nil {
			out = []string{}
		}
		k.AllowedOperations = sortedUnique(out)
	case req.ExcludedOperations != nil:
		base := k.AllowedOperations
		if base == nil {
			base = universe()
		}
		excluded := map[string]bool{}
		for _, sel := range sortedUnique(req.ExcludedOperations) {
			ops, _ := Expand(sel)
			for _, op := range ops {
				excluded[op] = true
			}
		}
		out := []string{}
		for _, op := range base {
			if !excluded[op] {
				out = append(out, op)
			}
		}
		k.AllowedOperations = sortedUnique(out)
	}
	return nil
}

func applyExpiry(k *Key, req CreateKeyRequest, _ ProjectCheck) error {
	if req.ExpiresAt == nil {
		return nil
	}
	if k.ExpiresAt != nil && req.ExpiresAt.After(*k.ExpiresAt) {
		return denied("expiresAt %s is later than an ancestor's expiry %s.", req.ExpiresAt.UTC().Format(time.RFC3339), k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	t := req.ExpiresAt.UTC()
	k.ExpiresAt = &t
	return nil
}

func applyProject(k *Key, req CreateKeyRequest, projectOK ProjectCheck) error {
	if req.ProjectID == nil {
		return nil
	}
	if k.ProjectID != nil {
		if *req.ProjectID != *k.ProjectID {
			return denied("A project-bound key cannot create a key for another project.")
		}
		return nil
	}
	if !projectOK(*req.ProjectID) {
		return apierr.Invalid("Unknown project.", apierr.Field("body.projectId", "no active project %q in this account", *req.ProjectID))
	}
	p := *req.ProjectID
	k.ProjectID = &p
	return nil
}

func applyTier(k *Key, req CreateKeyRequest, _ ProjectCheck) error {
	if req.PrivacyTier == "" {
		return nil
	}
	if TierRank(req.PrivacyTier) < TierRank(k.PrivacyTier) {
		return denied("Privacy tier %q is looser than the parent's %q.", req.PrivacyTier, k.PrivacyTier)
	}
	k.PrivacyTier = req.PrivacyTier
	return nil
}

// applyLimits copies the requested limits after checking each against every
// covering limit of the parent chain. Ancestor limits are not copied: they
// are enforced from the ancestors' own records on every request.
func applyLimits(k *Key, chain []*Key, req CreateKeyRequest) error {
	for sel, l := range req.Limits {
		if err := checkCovered(chain, sel, l); err != nil {
			return err
		}
		k.Limits[sel] = l
	}
	return nil
}

func checkCovered(chain []*Key, sel string, l limits.Limit) error {
	for _, anc := range chain {
		for outer, al := range anc.Limits {
			if !limits.SelectorCovers(outer, sel) {
				continue
			}
			if exceeds(l.RequestsPerMinute, al.RequestsPerMinute) || exceeds(l.MaxConcurrent, al.MaxConcurrent) || exceedsF(l.CreditsPerDay, al.CreditsPerDay) {
				return denied("Limit %q exceeds the covering ancestor limit %q.", sel, outer)
			}
		}
	}
	return nil
}

func exceeds(child, anc *int64) bool    { return child != nil && anc != nil && *child > *anc }
func exceedsF(child, anc *float64) bool { return child != nil && anc != nil && *child > *anc }
