package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"platformapi/shared/apierr"
	"platformapi/shared/catalog"
	"platformapi/shared/credittoken"
	"platformapi/shared/idempotency"
	"platformapi/shared/invoke"
	"platformapi/shared/keys"
	"platformapi/shared/routes"
	"platformapi/shared/store"
)

// checkOrder is stated in every operation's description and in the README.
const checkOrder = "Checks, in order: body size → authentication (the key and every ancestor, read on every request) → project selection → scope → service access → operation access → `Idempotency-Key` format → content type → limits (`requestsPerMinute`, `maxConcurrent`; a replay counts as a request) → idempotency claim or replay → the operation."

// Principal is who is calling: the key chain (root first, caller last) or,
// for the first key of an account, a verified credit token.
type Principal struct {
	Chain       []*keys.Key
	CreditToken *credittoken.Claims
	// Account is the account's item as read with the chain, in the same
	// batch: its balance and counters as of this request.
	Account   store.Item
	ProjectID string // selected or bound project; "" at account level
	EndUser   string
	Service   string // the managed service the request reaches, if any
	Operation string // managed operation id for invoke and runs.create
	URL       string // the absolute URL requested, for x402 resource descriptions
	route     string // the operation id of the route being served
}

// Key is the calling key (nil for a credit-token request).
func (p *Principal) Key() *keys.Key {
	if len(p.Chain) == 0 {
		return nil
	}
	return p.Chain[len(p.Chain)-1]
}

func principal(ctx context.Context) *Principal {
	p, _ := ctx.Value(keyPrincipal).(*Principal)
	return p
}

var endUserRE = regexp.MustCompile(`^[A-Za-z0-9:._@-]{1,128}$`)

// enforce runs the request path of DESIGN.md for one route. Every rejection
// is problem+json; none of them is stored for idempotent replay.
func (s *Server) enforce(rt routes.Route, next http.Handler) http.Handler {
	maxBody := int64(routes.MaxJSONBody)
	if rt.Body == routes.BodyRaw || rt.Body == routes.BodyZip {
		maxBody = routes.MaxRawBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.operation = rt.Operation
		ctx, cancel := context.WithTimeout(r.Context(), s.deps.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)

		body, err := readBody(r, maxBody)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		p, err := s.authenticate(ctx, rt, r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		if k := p.Key(); k != nil {
			info.keyID = k.ID
		}
		if err := s.authorize(ctx, rt, r, body, p); err != nil {
			writeProblem(w, r, err)
			return
		}
		info.endUser = endUserForLog(p)
		idemKey := r.Header.Get("Idempotency-Key")
		if rt.Idem {
			if idemKey == "" {
				writeProblem(w, r, apierr.New(apierr.IdempotencyKeyRequired, "%s %s requires an Idempotency-Key header.", rt.Method, rt.Path))
				return
			}
			if !idemRE.MatchString(idemKey) {
				writeProblem(w, r, apierr.New(apierr.IdempotencyKeyInvalid, "Idempotency-Key must be 8 to 200 characters of letters, digits, colon, period, underscore or hyphen."))
				return
			}
		}
		if err := checkContentType(rt, r, body); err != nil {
			writeProblem(w, r, err)
			return
		}
		p.URL, p.route = requestURL(r), rt.Operation
		r = r.WithContext(context.WithValue(ctx, keyPrincipal, p))

		release, err := s.admit(ctx, rt, p)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		defer release()

		if !rt.Idem {
			next.ServeHTTP(w, r)
			return
		}
		s.idempotent(w, r, next, p, idemKey, body)
	})
}

// readBody reads at most max bytes; more is a 413 before anything else runs.
func readBody(r *http.Request, max int64) ([]byte, error) {
	tooLarge := apierr.New(apierr.PayloadTooLarge, "The request body exceeds %d bytes.", max)
	if r.ContentLength > max {
		return nil, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, apierr.Invalid("The request body could not be read.")
	}
	if int64(len(body)) > max {
		return nil, tooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

func checkContentType(rt routes.Route, r *http.Request, body []byte) error {
	ct := r.Header.Get("Content-Type")
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
// credit token). Nothing is cached across requests.
func (s *Server) authenticate(ctx context.Context, rt routes.Route, r *http.Request) (*Principal, error) {
	authz := r.Header.Get("Authorization")
	token := r.Header.Get("X-Service-Credit-Token")
	if token != "" {
		if !rt.CreditToken {
			return nil, apierr.Invalid("X-Service-Credit-Token is accepted only by POST /api-keys.", apierr.Field("header.X-Service-Credit-Token", "not accepted here"))
		}
		if authz != "" {
			return nil, apierr.Invalid("Send either a bearer key or a credit token, not both.", apierr.Field("header.X-Service-Credit-Token", "not allowed with Authorization"))
		}
		if s.deps.CreditTokens == nil {
			return nil, apierr.New(apierr.ServiceUnavailable, "Credit tokens cannot be redeemed by this deployment.").WithHeader("Retry-After", "3600")
		}
		c, err := s.deps.CreditTokens.Verify(token, s.now())
		if err != nil {
			return nil, apierr.New(apierr.InvalidCreditToken, "The credit token is forged, malformed or expired.")
		}
		return &Principal{CreditToken: &c}, nil
	}
	if authz == "" {
		return nil, apierr.New(apierr.MissingCredentials, "Send Authorization: Bearer <API key>.").WithHeader("WWW-Authenticate", `Bearer realm="platform-api"`)
	}
	secret, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || secret == "" {
		return nil, apierr.New(apierr.InvalidAPIKey, "The Authorization header must be Bearer <API key>.").WithHeader("WWW-Authenticate", `Bearer realm="platform-api", error="invalid_token"`)
	}
	chain, account, err := s.keys.Authenticate(ctx, strings.TrimSpace(secret))
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			ae.WithHeader("WWW-Authenticate", `Bearer realm="platform-api", error="invalid_token"`)
		}
		return nil, err
	}
	return &Principal{Chain: chain, Account: account}, nil
}

// authorize applies project selection and the first three access controls.
func (s *Server) authorize(ctx context.Context, rt routes.Route, r *http.Request, body []byte, p *Principal) error {
	if eu := r.Header.Get("X-Service-End-User"); eu != "" {
		if !endUserRE.MatchString(eu) {
			return apierr.Invalid("Invalid X-Service-End-User.", apierr.Field("header.X-Service-End-User", "1–128 characters of letters, digits, colon, period, underscore, at sign or hyphen"))
		}
		p.EndUser = eu
	}
	k := p.Key()
	if k == nil {
		return nil // credit-token request: POST /api-keys decides
	}
	if err := s.selectProject(ctx, rt, r, p, k); err != nil {
		return err
	}
	for _, sc := range rt.Scopes {
		if !k.HasScope(sc) {
			return apierr.New(apierr.ScopeDenied, "%s %s needs scope %s.", rt.Method, rt.Path, sc)
		}
	}
	svc, op, err := requestService(rt, r, body)
	if err != nil {
		return err
	}
	p.Service, p.Operation = svc, op
	if svc != "" && !k.AllowsService(svc) {
		return apierr.New(apierr.ServiceDenied, "This key may not use service %s.", svc)
	}
	exact := keys.RequestOperation(rt.Operation, svc, op)
	if !k.AllowsOperation(exact) {
		return apierr.New(apierr.OperationDenied, "This key may not call operation %s.", exact)
	}
	return nil
}

// selectProject applies X-Service-Project and the key's project binding.
// Keys bound to an archived project can still read that project and nothing
// else.
func (s *Server) selectProject(ctx context.Context, rt routes.Route, r *http.Request, p *Principal, k *keys.Key) error {
	header := r.Header.Get("X-Service-Project")
	if k.ProjectID != nil {
		if header != "" && header != *k.ProjectID {
			return apierr.New(apierr.ProjectDenied, "This key is bound to another project.")
		}
		p.ProjectID = *k.ProjectID
		if rt.Operation == "projects.read" || rt.Operation == "projects.list" {
			return nil
		}
		active, err := s.projects.Active(ctx, k.AccountID, p.ProjectID)
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
	active, err := s.projects.Active(ctx, k.AccountID, header)
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
	var peek struct {
		ServiceID   string `json:"serviceId"`
		OperationID string `json:"operationId"`
	}
	if len(body) > 0 && rt.Body == routes.BodyJSON {
		_ = json.Unmarshal(body, &peek) // malformed bodies are the handler's 400
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
	if rt.Operation == "services.invoke" || rt.Operation == "runs.create" {
		op = peek.OperationID
	}
	return svc, op, nil
}

// admit counts the request against every matching limit of the key and its
// ancestors and returns the release of its concurrency leases.
func (s *Server) admit(ctx context.Context, rt routes.Route, p *Principal) (func(), error) {
	if len(p.Chain) == 0 {
		return func() {}, nil
	}
	lease, err := s.limits.Admit(ctx, p.caller(ctx).Chain, keys.LimitSelectors(rt.Operation, p.Service, p.Operation))
	if err != nil {
		return nil, invoke.LimitError(err)
	}
	return func() {
		// Release even when the request's context is done: a lease must not
		// outlive its request longer than necessary.
		_ = lease.Release(context.WithoutCancel(ctx))
	}, nil
}

// idempotent claims the key, runs the operation once, stores its response and
// replays it for duplicates (CONTRACT "Idempotency").
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, next http.Handler, p *Principal, idemKey string, body []byte) {
	// Idempotency is per API key; a first-key request has none yet, so its
	// namespace is the credit token's.
	var scope string
	if k := p.Key(); k != nil {
		scope = k.ID
	} else {
		scope = "ctk#" + p.CreditToken.ID
	}
	fp := idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body, r.Header.Get("X-Service-Project"), r.Header.Get("X-Service-End-User"))
	claim, replay, err := s.idem.Claim(r.Context(), scope, idemKey, fp)
	if err != nil {
		var busy *idempotency.InProgressError
		switch {
		case errors.Is(err, idempotency.ErrReused):
			writeProblem(w, r, apierr.New(apierr.IdempotencyKeyReused, "This Idempotency-Key was used with a different request."))
		case errors.As(err, &busy):
			writeProblem(w, r, apierr.New(apierr.IdempotencyInProgress, "A request with this Idempotency-Key is still running.").
				WithHeader("Retry-After", strconv.Itoa(busy.RetryAfterSeconds)))
		default:
			writeProblem(w, r, err)
		}
		return
	}
	if replay != nil {
		for k, v := range replay.Headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(replay.Status)
		_, _ = w.Write(replay.Body)
		return
	}
	var unit *idempotency.Unit
	if deferredWrites[p.route] {
		unit = &idempotency.Unit{}
		r = r.WithContext(idempotency.WithUnit(r.Context(), unit))
	}
	rec := &captureWriter{ResponseWriter: w, header: http.Header{}}
	defer func() {
		if pnc := recover(); pnc != nil {
			_ = s.idem.Abandon(context.WithoutCancel(r.Context()), claim)
			panic(pnc)
		}
	}()
	next.ServeHTTP(rec, r)
	done := context.WithoutCancel(r.Context())
	if !storable(rec.status, rec.header) {
		_ = s.idem.Abandon(done, claim)
		rec.flush()
		return
	}
	if rec.status >= 300 {
		unit = nil // only a success commits its writes
	}
	resp := idempotency.Response{Status: rec.status, Headers: resourceHeaders(rec.header), Body: rec.buf.Bytes()}
	err = s.idem.CompleteUnit(done, claim, resp, unit)
	var conflict *idempotency.CommitError
	switch {
	case err == nil && unit != nil:
		unit.Committed()
	case err == nil:
	case unit != nil:
		// Nothing was written: free the key and say why, so a retry runs.
		_ = s.idem.Abandon(done, claim)
		if errors.As(err, &conflict) {
			writeProblem(w, r, apierr.New(apierr.Conflict, "The resource changed while this request ran; nothing was written. Retry."))
		} else {
			writeProblem(w, r, err)
		}
		return
	default:
		// The operation's own writes are already applied: answer them, and
		// let the claim expire rather than run the operation twice now.
		loggerFrom(r.Context()).Error("idempotency completion failed", "error", err.Error())
	}
	rec.flush()
}

// deferredWrites are the operations whose writes commit in one transaction
// with their stored response (see idempotency.Unit): plain writes that
// neither read them back nor interpret their conditions.
var deferredWrites = map[string]bool{
	"projects.create": true, "projects.update": true, "projects.archive": true,
	"approvals.create": true, "approvals.decide": true,
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

// resourceHeaders are the response headers replayed with a stored response.
func resourceHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"Content-Type", "Location", "X-Service-Credits-Charged", "X-Service-Upstream-Request-Id", "Payment-Response", "X-Service-Paid-Agent-Receipt", "X-Content-Sha256"} {
		if v := h.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// captureWriter buffers the operation's response so it can be stored before
// (and exactly as) it is sent.
type captureWriter struct {
	http.ResponseWriter
	header http.Header
	status int
	buf    bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.header }
func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
}
func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.buf.Write(b)
}

func (c *captureWriter) flush() {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	dst := c.ResponseWriter.Header()
	for k, v := range c.header {
		dst[k] = v
	}
	c.ResponseWriter.WriteHeader(c.status)
	_, _ = c.ResponseWriter.Write(c.buf.Bytes())
}

// endUserForLog applies the privacy tier to what the access log may keep.
func endUserForLog(p *Principal) string {
	if p.EndUser == "" || p.Key() == nil {
		return ""
	}
	return keys.RedactEndUser(p.Key().PrivacyTier, p.Key().AccountID, p.EndUser)
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
