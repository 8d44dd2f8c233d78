package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/base/routes"
	"platformapi/shared/domain/accounts"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/credits/credittoken"
	"platformapi/shared/groups/keys"
)

// Principal is who is calling: the key chain (root first, caller last) or,
// for the first key of an account, a verified credit token.
type Principal struct {
	Chain       []*keys.Key
	CreditToken *credittoken.Claims
	// Account is the account's item once read (see AccountItem).
	Account store.Item
	// accounts is where AccountItem reads it when a request first needs it.
	accounts  store.Store
	ProjectID string // selected or bound project; "" at account level
	EndUser   string
	Service   string // the managed service the request reaches, if any
	Operation string // managed operation id for invoke and runs.create
	// URL is the absolute URL requested, for x402 resource descriptions
	// (the credit top-up's). It is built for writes only: no read names it.
	URL string

	// owners and keyPath are LimitOwners and KeyPath, made once: a request
	// asks for them more than once. Most chains fit the arrays, which live
	// in the request's one state allocation with the Principal.
	owners    []limits.Owner
	keyPath   []string
	ownersBuf [4]limits.Owner
	pathBuf   [4]string
}

// AccountItem is the account's item: its balance and counters as of this
// request, strongly consistent. Routes that need it read it with the key
// chain (needsAccount); any other request reads it here when it first needs
// it, since one item per account read on every request would cap an account
// at DynamoDB's 3,000 reads a second of one item (docs/storage-design.md).
func (p *Principal) AccountItem(ctx context.Context) (store.Item, error) {
	if p.Account == nil && p.accounts != nil && len(p.Chain) > 0 {
		it, err := p.accounts.Get(ctx, accounts.Key(p.Chain[0].AccountID))
		if err != nil {
			return nil, err
		}
		p.Account = it
	}
	return p.Account, nil
}

// Key is the calling key (nil for a credit-token request).
func (p *Principal) Key() *keys.Key {
	if len(p.Chain) == 0 {
		return nil
	}
	return p.Chain[len(p.Chain)-1]
}

// PrincipalFrom is the caller of the request; every operation behind the
// request path has one.
func PrincipalFrom(ctx context.Context) *Principal {
	if st := stateFrom(ctx); st != nil {
		return st.principal
	}
	return nil
}

// LimitOwners are the chain as the limit counter sees it: every key whose
// limits cap this request. The slice may be the principal's own: read it,
// never change it.
func (p *Principal) LimitOwners() []limits.Owner {
	if p.owners != nil {
		return p.owners
	}
	return appendOwners(make([]limits.Owner, 0, len(p.Chain)), p.Chain)
}

// KeyPath is the ids of the chain, root first. The slice may be the
// principal's own: read it, never change it (an append copies it).
func (p *Principal) KeyPath() []string {
	if p.keyPath != nil {
		return p.keyPath
	}
	return appendKeyPath(make([]string, 0, len(p.Chain)), p.Chain)
}

// name makes LimitOwners and KeyPath once, before the principal is shared:
// a request asks for them more than once.
func (p *Principal) name() {
	o := appendOwners(p.ownersBuf[:0], p.Chain)
	k := appendKeyPath(p.pathBuf[:0], p.Chain)
	p.owners, p.keyPath = o[:len(o):len(o)], k[:len(k):len(k)]
}

func appendOwners(dst []limits.Owner, chain []*keys.Key) []limits.Owner {
	for _, c := range chain {
		dst = append(dst, limits.Owner{ID: c.ID, Limits: c.Limits})
	}
	return dst
}

func appendKeyPath(dst []string, chain []*keys.Key) []string {
	for _, c := range chain {
		dst = append(dst, c.ID)
	}
	return dst
}

var endUserRE = regexp.MustCompile(`^[A-Za-z0-9:._@-]{1,128}$`)

// enforce runs the request path of docs/request-pipeline.md for one
// route. Every rejection is problem+json; none of them is stored for
// idempotent replay.
func (k *Kernel) enforce(rt routes.Route, next http.Handler) http.Handler {
	maxBody := maxBody(rt)
	literalPath := !strings.Contains(rt.Path, "{")
	// The limit selectors of a request that reaches no managed service,
	// made once: the counter only reads them.
	readSelectors := keys.LimitSelectors(rt.Operation, "", "")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		st := stateFrom(ctx)
		if st == nil { // served without edge
			st = &requestState{id: newRequestID(), base: k.log}
			ctx = context.WithValue(ctx, keyState, st)
		}
		st.route, st.now = &rt, k.cfg.Now
		info := &st.info
		info.group, info.operation, info.literalPath = rt.Group, rt.Operation, literalPath
		// Before anything can answer: every response of a deprecated
		// operation says so, a rejection or an idempotent replay too.
		announceDeprecation(w.Header(), rt)
		// Whatever the operation charges is this request's (st is its
		// credits.Request), within the request's deadline.
		if st.ctx.arm(time.Now().Add(k.cfg.RequestTimeout)) {
			defer st.ctx.end()
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(credits.WithRequest(ctx, st), k.cfg.RequestTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		}

		body, err := readBody(r, maxBody)
		if err != nil {
			WriteProblem(w, r, err)
			return
		}
		p := &st.caller
		if err := k.authenticate(ctx, rt, r, p); err != nil {
			WriteProblem(w, r, err)
			return
		}
		if key := p.Key(); key != nil {
			info.keyID = key.ID
			var hook *auditHook
			w, hook = k.auditing(w, r, &rt, p)
			defer hook.finish()
		}
		if err := k.authorize(ctx, rt, r, body, p); err != nil {
			WriteProblem(w, r, err)
			return
		}
		if key := p.Key(); key != nil && keys.TouchDue(key, k.now()) {
			defer k.touch(r, key.ID)
		}
		info.endUser, info.endUserDone = k.endUserForLog(ctx, p), true
		idemKey := headerValue(r.Header, "Idempotency-Key")
		if rt.Idem {
			if idemKey == "" {
				WriteProblem(w, r, apierr.New(apierr.IdempotencyKeyRequired, "%s %s requires an Idempotency-Key header.", rt.Method, rt.Path))
				return
			}
			if !idemRE.MatchString(idemKey) {
				WriteProblem(w, r, apierr.New(apierr.IdempotencyKeyInvalid, "Idempotency-Key must be 8 to 200 characters of letters, digits, colon, period, underscore or hyphen."))
				return
			}
		}
		if rt.Secret && k.cfg.Sealer == nil {
			WriteProblem(w, r, apierr.New(apierr.ServiceUnavailable, "This deployment has no envelope key to keep the secret this operation answers.").WithHeader("Retry-After", "3600"))
			return
		}
		if err := checkContentType(rt, r, body); err != nil {
			WriteProblem(w, r, err)
			return
		}
		if rt.Method != http.MethodGet {
			p.URL = requestURL(r)
		}
		st.principal = p

		if len(p.Chain) > 0 {
			selectors := readSelectors
			if p.Service != "" || p.Operation != "" {
				selectors = keys.LimitSelectors(rt.Operation, p.Service, p.Operation)
			}
			lease, err := k.admit(ctx, p, selectors)
			if err != nil {
				WriteProblem(w, r, err)
				return
			}
			defer k.release(ctx, lease)
		}

		if !rt.Idem {
			next.ServeHTTP(w, r)
			return
		}
		k.idempotent(w, r, rt, next, p, idemKey, body)
	})
}

// readBody reads at most max bytes; more is a 413 before anything else runs.
// A request without a body (every read) reads nothing and keeps its Body.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, apierr.Invalid("The request body could not be read.")
	}
	if int64(len(body)) > max {
		return nil, tooLarge(max)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

func tooLarge(max int64) error {
	return apierr.New(apierr.PayloadTooLarge, "The request body exceeds %d bytes.", max)
}

func checkContentType(rt routes.Route, r *http.Request, body []byte) error {
	ct := headerValue(r.Header, "Content-Type")
	if len(body) == 0 && ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if ct != "" && err != nil {
		return apierr.New(apierr.UnsupportedMediaType, "Content-Type %q cannot be parsed.", ct)
	}
	switch rt.Body {
	case routes.BodyJSON:
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return apierr.New(apierr.UnsupportedMediaType, "Send the body as application/json.")
		}
	case routes.BodyZip:
		if mt != "application/zip" {
			return apierr.New(apierr.UnsupportedMediaType, "Send the part as application/zip.")
		}
	case routes.BodyRaw:
		if ct == "" {
			return apierr.New(apierr.UnsupportedMediaType, "Send the file's media type in Content-Type.")
		}
	case routes.BodyNone:
		if len(body) > 0 {
			return apierr.New(apierr.UnsupportedMediaType, "%s %s takes no request body.", rt.Method, rt.Path)
		}
	}
	return nil
}

// authenticate resolves the bearer key (or, on POST /api-keys only, the
// credit token) into p. Every request reads the key chain again; the
// embedded store answers it from its exact read cache (docs/keys.md).
func (k *Kernel) authenticate(ctx context.Context, rt routes.Route, r *http.Request, p *Principal) error {
	authz := headerValue(r.Header, "Authorization")
	token := headerValue(r.Header, "X-Service-Credit-Token")
	if token != "" {
		if !rt.CreditToken {
			return apierr.Invalid("X-Service-Credit-Token is accepted only by POST /api-keys.", apierr.Field("header.X-Service-Credit-Token", "not accepted here"))
		}
		if authz != "" {
			return apierr.Invalid("Send either a bearer key or a credit token, not both.", apierr.Field("header.X-Service-Credit-Token", "not allowed with Authorization"))
		}
		if k.cfg.CreditTokens == nil {
			return apierr.New(apierr.ServiceUnavailable, "Credit tokens cannot be redeemed by this deployment.").WithHeader("Retry-After", "3600")
		}
		c, err := k.cfg.CreditTokens.Verify(token, k.now())
		if errors.Is(err, credittoken.ErrOtherSigner) {
			return apierr.New(apierr.InvalidCreditToken, "The credit token was minted for another deployment: its signing key (for the local server, another data directory's) is not this server's. Mint one with this server's key (locally: mint-credit-token with the server's DATA_DIR).")
		}
		if err != nil {
			return apierr.New(apierr.InvalidCreditToken, "The credit token is forged, malformed or expired.")
		}
		p.CreditToken = &c
		return nil
	}
	if authz == "" {
		return apierr.New(apierr.MissingCredentials, "Send Authorization: Bearer <API key>.").WithHeader("WWW-Authenticate", `Bearer realm="platform-api"`)
	}
	secret, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || secret == "" {
		return apierr.New(apierr.InvalidAPIKey, "The Authorization header must be Bearer <API key>.").WithHeader("WWW-Authenticate", `Bearer realm="platform-api", error="invalid_token"`)
	}
	var chain []*keys.Key
	var account store.Item
	var err error
	if needsAccount(rt) {
		chain, account, err = k.keys.Authenticate(ctx, strings.TrimSpace(secret))
	} else {
		chain, err = k.keys.AuthenticateChain(ctx, strings.TrimSpace(secret))
	}
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return ae.WithHeader("WWW-Authenticate", `Bearer realm="platform-api", error="invalid_token"`)
		}
		return err
	}
	p.Chain, p.Account, p.accounts = chain, account, k.cfg.Store
	p.name()
	return nil
}

// needsAccount tells the routes that read the account item in the
// authentication batch, as every route did before: a write may publish to
// webhooks (the item counts them) or charge, and the balance is the item.
// Any other read leaves it, so that one item per account does not cap the
// account's reads (docs/storage-design.md); a read that turns out to need
// it reads it then (AccountItem).
func needsAccount(rt routes.Route) bool {
	return rt.Method != http.MethodGet || rt.Operation == "credits.balance.read"
}

// authorize applies the client-address check, project selection and the
// first three access controls.
func (k *Kernel) authorize(ctx context.Context, rt routes.Route, r *http.Request, body []byte, p *Principal) error {
	if eu := headerValue(r.Header, "X-Service-End-User"); eu != "" {
		if !endUserRE.MatchString(eu) {
			return apierr.Invalid("Invalid X-Service-End-User.", apierr.Field("header.X-Service-End-User", "1–128 characters of letters, digits, colon, period, underscore, at sign or hyphen"))
		}
		p.EndUser = eu
	}
	key := p.Key()
	if key == nil {
		return nil // credit-token request: POST /api-keys decides
	}
	if err := k.checkClientIP(r, p); err != nil {
		return err
	}
	if err := k.selectProject(ctx, rt, r, p, key); err != nil {
		return err
	}
	for _, sc := range rt.Scopes {
		if !key.HasScope(sc) {
			return apierr.New(apierr.ScopeDenied, "%s %s needs scope %s.", rt.Method, rt.Path, sc)
		}
	}
	svc, op, err := requestService(rt, r, body)
	if err != nil {
		return err
	}
	p.Service, p.Operation = svc, op
	if svc != "" && !key.AllowsService(svc) {
		return apierr.New(apierr.ServiceDenied, "This key may not use service %s.", svc)
	}
	exact := keys.RequestOperation(rt.Operation, svc, op)
	if !key.AllowsOperation(exact) {
		return apierr.New(apierr.OperationDenied, "This key may not call operation %s.", exact)
	}
	return nil
}

// selectProject applies X-Service-Project and the key's project binding.
// Keys bound to an archived project can still read that project and nothing
// else.
func (k *Kernel) selectProject(ctx context.Context, rt routes.Route, r *http.Request, p *Principal, key *keys.Key) error {
	header := headerValue(r.Header, "X-Service-Project")
	if key.ProjectID != nil {
		if header != "" && header != *key.ProjectID {
			return apierr.New(apierr.ProjectDenied, "This key is bound to another project.")
		}
		p.ProjectID = *key.ProjectID
		if rt.ArchivedReadable {
			return nil
		}
		active, err := k.projects.Active(ctx, key.AccountID, p.ProjectID)
		if err != nil {
			return err
		}
		if !active {
			return apierr.New(apierr.ProjectDenied, "The key's project is archived.")
		}
		return nil
	}
	if header == "" {
		return nil
	}
	active, err := k.projects.Active(ctx, key.AccountID, header)
	if err != nil {
		return err
	}
	if !active {
		return apierr.New(apierr.ProjectDenied, "X-Service-Project must name an active project of this account.")
	}
	p.ProjectID = header
	return nil
}

// requestService finds the managed service (and, for invoke and runs, the
// operation) a request reaches, so service and operation access and the
// capability limit selectors can be checked before the handler runs.
func requestService(rt routes.Route, r *http.Request, body []byte) (svc, op string, err error) {
	var peek servicePeek
	if len(body) > 0 && rt.Body == routes.BodyJSON {
		peek = peekService(body)
	}
	switch {
	case rt.Service != "":
		svc = rt.Service
	case strings.HasPrefix(rt.ServiceFrom, "path:"):
		svc = r.PathValue(strings.TrimPrefix(rt.ServiceFrom, "path:"))
		if _, ok := catalog.Lookup(svc); !ok {
			return "", "", apierr.New(apierr.NotFound, "No managed service %q.", svc)
		}
	case strings.HasPrefix(rt.ServiceFrom, "body:"):
		svc = peek.ServiceID
		if _, ok := catalog.Lookup(svc); svc != "" && !ok {
			return "", "", apierr.Invalid("Unknown service.", apierr.Field("body.serviceId", "no managed service %q", svc))
		}
	}
	if rt.OperationFrom == "body:operationId" {
		op = peek.OperationID
	}
	return svc, op, nil
}

// servicePeek is what requestService reads of a JSON body.
type servicePeek struct {
	ServiceID   string `json:"serviceId"`
	OperationID string `json:"operationId"`
}

// peekService decodes a body's service and operation ids; a request
// without a body (every read) never makes the struct json.Unmarshal needs
// on the heap.
func peekService(body []byte) servicePeek {
	var peek servicePeek
	_ = json.Unmarshal(body, &peek) // malformed bodies are the handler's 400
	return peek
}

// Admit counts one request of the caller against every limit of the chain
// that covers one of selectors, and returns the release of its concurrency
// leases.
func (k *Kernel) Admit(ctx context.Context, p *Principal, selectors []string) (func(), error) {
	lease, err := k.admit(ctx, p, selectors)
	if err != nil {
		return nil, err
	}
	return func() { k.release(ctx, lease) }, nil
}

// admit is Admit with the lease itself, for the request path, which
// releases it in a deferred call rather than through a closure.
func (k *Kernel) admit(ctx context.Context, p *Principal, selectors []string) (*limits.Lease, error) {
	lease, err := k.limits.Admit(ctx, p.LimitOwners(), selectors)
	if err != nil {
		return nil, limits.APIError(err)
	}
	return lease, nil
}

// release frees an admitted request's concurrency leases, even when the
// request's context is done: a lease must not outlive its request longer
// than necessary. A failed release is logged: the lease then lingers until
// it expires.
func (k *Kernel) release(ctx context.Context, lease *limits.Lease) {
	if err := lease.Release(withoutCancel(ctx)); err != nil {
		Logger(ctx).Error("limit lease release failed", "error", err.Error())
	}
}

// idempotent claims the key, runs the operation once, stores its response and
// replays it for duplicates (docs/idempotency.md).
func (k *Kernel) idempotent(w http.ResponseWriter, r *http.Request, rt routes.Route, next http.Handler, p *Principal, idemKey string, body []byte) {
	// Idempotency is per API key; a first-key request has none yet, so its
	// namespace is the credit token's.
	var scope string
	if key := p.Key(); key != nil {
		scope = key.ID
	} else {
		scope = "ctk#" + p.CreditToken.ID
	}
	fp := idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body, r.Header)
	claim, replay, err := k.idem.Claim(r.Context(), scope, idemKey, fp)
	if err != nil {
		var busy *idempotency.InProgressError
		switch {
		case errors.Is(err, idempotency.ErrReused):
			WriteProblem(w, r, apierr.New(apierr.IdempotencyKeyReused, "This Idempotency-Key was used with a different request."))
		case errors.As(err, &busy):
			WriteProblem(w, r, apierr.New(apierr.IdempotencyInProgress, "A request with this Idempotency-Key is still running.").
				WithHeader("Retry-After", strconv.Itoa(busy.RetryAfterSeconds)))
		default:
			WriteProblem(w, r, err)
		}
		return
	}
	if replay != nil {
		if replay.Sealed != nil {
			if replay.Body, err = k.cfg.Sealer.Open(r.Context(), replay.Sealed, replayBinding(scope, idemKey)); err != nil {
				WriteProblem(w, r, fmt.Errorf("idempotency: open sealed response: %w", err))
				return
			}
		}
		for h, v := range replay.Headers {
			w.Header().Set(h, v)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		if st := stateFrom(r.Context()); st != nil {
			if replay.Charged != nil {
				st.owed = append(st.owed, *replay.Charged)
			}
			st.owed = append(st.owed, replay.Owed...)
		}
		if replay.Status >= 400 {
			// A stored problem never passes through WriteProblem again:
			// its code, for the replay's audit event, is in its body.
			noteProblem(r.Context(), problemCode(replay.Body))
		}
		w.WriteHeader(replay.Status)
		_, _ = w.Write(replay.Body)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), keyCallID, callID(scope, idemKey)))
	var unit *idempotency.Unit
	if rt.Commit {
		unit = &idempotency.Unit{}
		r = r.WithContext(idempotency.WithUnit(r.Context(), unit))
	}
	rec := holding(w)
	done := context.WithoutCancel(r.Context())
	abandon := func() {
		// A claim that cannot be freed expires with the request deadline;
		// until then a retry is told the request is in progress.
		if err := k.idem.Abandon(done, claim); err != nil {
			Logger(r.Context()).Error("idempotency abandon failed", "error", err.Error())
		}
	}
	defer func() {
		if pnc := recover(); pnc != nil {
			abandon()
			panic(pnc)
		}
	}()
	next.ServeHTTP(rec, r)
	if !storable(rec.status, rec.held) {
		abandon()
		rec.release()
		return
	}
	if rec.status >= 300 {
		unit = nil // only a success commits its writes
	}
	resp := idempotency.Response{Status: rec.status, Headers: replayHeaders(rt, rec.held), Body: rec.body.Bytes(), Charged: k.nameCharge(r.Context()), Owed: owedBy(r.Context())}
	if rt.Secret {
		if resp.Sealed, err = k.cfg.Sealer.Seal(done, resp.Body, replayBinding(scope, idemKey)); err != nil {
			// Without a sealed copy nothing may be stored; the claim then
			// expires and a retry is told the request is still running.
			Logger(r.Context()).Error("idempotency seal failed", "error", err.Error())
			rec.release()
			return
		}
		resp.Body = nil
	}
	err = k.idem.CompleteUnit(done, claim, resp, unit)
	var conflict *idempotency.CommitError
	switch {
	case err == nil && unit != nil:
		unit.Committed()
	case err == nil:
	case unit != nil:
		// Nothing was written: free the key and say why, so a retry runs.
		abandon()
		var explained *apierr.Error
		switch {
		case errors.As(err, &conflict) && errors.As(conflict.Err, &explained):
			WriteProblem(w, r, explained)
		case errors.As(err, &conflict):
			WriteProblem(w, r, apierr.New(apierr.Conflict, "The resource changed while this request ran; nothing was written. Retry."))
		default:
			WriteProblem(w, r, err)
		}
		return
	default:
		// The operation's own writes are already applied: answer them, and
		// let the claim expire rather than run the operation twice now.
		Logger(r.Context()).Error("idempotency completion failed", "error", err.Error())
	}
	rec.release()
}

// problemCode is the code of a problem+json body; "" for any other body.
func problemCode(body []byte) apierr.Code {
	var p struct {
		Code apierr.Code `json:"code"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Code
}

// CallID names the operation of an idempotent request across its retries:
// the same caller and Idempotency-Key give the same id, so what the
// operation hands on (a credit hold, a managed service's own idempotency)
// recognises a retry after a crash. "" outside idempotent routes.
func CallID(ctx context.Context) string { s, _ := ctx.Value(keyCallID).(string); return s }

func callID(scope, idemKey string) string {
	sum := sha256.Sum256([]byte("platform-api/call/v1\n" + scope + "\n" + idemKey))
	return hex.EncodeToString(sum[:16])
}

// replayBinding is the associated data of a sealed stored response: it
// opens only for the key (or credit token) and Idempotency-Key that made it.
func replayBinding(scope, idemKey string) []byte {
	return []byte("platform-api/idempotent-response/v1\n" + scope + "\n" + idemKey)
}

// storable: the operation's own 2xx and 4xx are stored; 401, 403, 429,
// 5xx and every 402 of the x402 flow (challenge or rejected payment, both
// carrying Payment-Required) are not, so a corrected or paid retry runs.
func storable(status int, h http.Header) bool {
	switch {
	case status >= 500, status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusTooManyRequests:
		return false
	case status == http.StatusPaymentRequired:
		return h.Get("Payment-Required") == ""
	}
	return true
}

// replayHeaders are the response headers stored with a response: its media
// type, its resource's location and those the route names.
func replayHeaders(rt routes.Route, h http.Header) map[string]string {
	out := map[string]string{}
	for _, list := range [][]string{{"Content-Type", "Location"}, rt.ReplayHeaders} {
		for _, name := range list {
			if v := h.Get(name); v != "" {
				out[name] = v
			}
		}
	}
	return out
}

// endUserForLog applies the key's privacy tier to what the access log and
// the audit event may keep of the end user: the id as sent, a keyed
// per-account pseudonym (package pseudonym), or nothing. Without an
// envelope key there is no pseudonym key, so pseudonymous keeps nothing
// rather than an unkeyed hash anyone knowing the account id could test
// guesses against; so does a pseudonym that cannot be computed (logged).
func (k *Kernel) endUserForLog(ctx context.Context, p *Principal) string {
	key := p.Key()
	if p.EndUser == "" || key == nil {
		return ""
	}
	switch key.PrivacyTier {
	case keys.TierStandard:
		return p.EndUser
	case keys.TierPseudonymous:
		if k.pseudonyms == nil {
			return ""
		}
		anon, err := k.pseudonyms.Of(ctx, key.AccountID, p.EndUser)
		if err != nil {
			k.log.Error("end-user pseudonym failed", "account", key.AccountID, "error", err.Error())
			return ""
		}
		return anon
	default:
		return ""
	}
}

// requestURL rebuilds the absolute URL the client called (behind API Gateway
// the scheme arrives in X-Forwarded-Proto).
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// headerValue is h.Get(name) for a name already in canonical form, as
// every name the request path reads is: without Get's canonicalisation of
// the name on every call (six headers a request).
func headerValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}
