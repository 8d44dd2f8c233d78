package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"

	"platformapi/shared/base/apierr"
	"platformapi/shared/base/routes"
	"platformapi/shared/groups/keys"
	"platformapi/shared/groups/webhooks/eventdef"
)

// A webhook receives only what its creator key could read right now
// through the API: a subscription to "*" by a key
// holding only webhooks scopes must not become a side channel to sibling
// branches' keys, approval inputs or other services' invocations. The rules
// are the catalogue's ReadBy and Subject, applied twice:
//
//   - at creation and update, an explicit subscription the creator can never
//     receive is refused (keys are never widened, so "never" is stable);
//   - at publish, each target is filtered by its creator chain as stored
//     now: alive, able to call ReadBy, seeing the subject, and in the
//     creator's bound project.

// eventType finds an event in the catalogue.
func eventType(name string) (eventdef.Def, bool) {
	i := slices.IndexFunc(Catalogue, func(e eventdef.Def) bool { return e.Name == name })
	if i < 0 {
		return eventdef.Def{}, false
	}
	return Catalogue[i], true
}

// cannotRead says why k can never read events of type e, or "" when it
// may: the scopes and fixed service of the reading operation, operation
// access to it, and for service events access to at least one service.
func cannotRead(k *keys.Key, e eventdef.Def) string {
	rt, ok := routes.ByID(e.ReadBy)
	if !ok {
		panic("webhooks: event " + e.Name + " is read by unknown route " + e.ReadBy)
	}
	for _, sc := range rt.Scopes {
		if !k.HasScope(sc) {
			return fmt.Sprintf("reading %s needs scope %s, which the key lacks", e.Name, sc)
		}
	}
	if rt.Service != "" && !k.AllowsService(rt.Service) {
		return fmt.Sprintf("reading %s needs access to service %s, which the key lacks", e.Name, rt.Service)
	}
	if !k.AllowsOperation(rt.Operation) {
		return fmt.Sprintf("reading %s needs operation %s, which the key may not call", e.Name, rt.Operation)
	}
	if e.Subject == eventdef.SubjectService && k.AllowedServices != nil && len(k.AllowedServices) == 0 {
		return fmt.Sprintf("%s concerns a managed service, and the key may use none", e.Name)
	}
	return ""
}

// checkSubscriptions refuses the explicit events of a subscription (raw as
// sent, normalized by normalizeEvents) that creator can never receive,
// naming each by its index. "*" is always accepted: it is filtered per
// event at publish time.
func checkSubscriptions(creator *keys.Key, normalized, raw []string, location string) error {
	if slices.Equal(normalized, []string{AllEvents}) {
		return nil
	}
	var fields []apierr.FieldError
	for i, name := range raw {
		e, ok := eventType(name)
		if !ok || slices.Index(raw, name) != i {
			continue
		}
		if why := cannotRead(creator, e); why != "" {
			fields = append(fields, apierr.Field(fmt.Sprintf("%s[%d]", location, i), "%s", why))
		}
	}
	if len(fields) > 0 {
		return apierr.Invalid("The webhook's creator key could never receive some of these events.", fields...)
	}
	return nil
}

// subject is what an event's data says about whose it is.
type subject struct {
	ID        string `json:"id"`
	ServiceID string `json:"serviceId"`
}

func subjectOf(e eventdef.Def, data json.RawMessage) subject {
	var s subject
	if e.Subject != eventdef.SubjectNone {
		_ = json.Unmarshal(data, &s) // an undecodable subject matches nobody
	}
	return s
}

// receives reports whether webhook w, whose creator is creator, may receive
// an event of type e about subj in project projectID ("" at account level).
// hooks are the account's webhooks, for eventdef.SubjectWebhook.
func receives(w *Webhook, creator *keys.Key, e eventdef.Def, subj subject, projectID string, known map[string]*keys.Key, hooks []*Webhook) bool {
	if creator.ProjectID != nil && *creator.ProjectID != projectID {
		return false
	}
	if cannotRead(creator, e) != "" {
		return false
	}
	switch e.Subject {
	case eventdef.SubjectService:
		return subj.ServiceID != "" && creator.AllowsService(subj.ServiceID)
	case eventdef.SubjectKey:
		k := known[subj.ID]
		return k != nil && (k.ID == creator.ID || slices.Contains(k.Ancestors, creator.ID))
	case eventdef.SubjectWebhook:
		i := slices.IndexFunc(hooks, func(h *Webhook) bool { return h.ID == subj.ID })
		scope := ""
		if w.ProjectID != nil {
			scope = *w.ProjectID
		}
		return i >= 0 && Caller{KeyPath: w.CreatorPath, ProjectID: scope}.manages(hooks[i])
	}
	return true
}
