package platform

// The Client's methods are generated from the OpenAPI document into
// zz_operations.go (internal/gen), with Operations. This file holds the
// pagination helpers and the methods the generator leaves alone because
// they are written here: each says why it is not generated. The generator
// skips an operation whose method this package declares by hand.

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Pageable is a list's options: ListOptions or a struct embedding it.
type Pageable interface{ listOptions() *ListOptions }

func (o *ListOptions) listOptions() *ListOptions { return o }

// Each iterates a list from opts' Cursor to its end, following nextCursor
// page by page; page is a list method, e.g. Each(ctx, opts, c.ListRuns).
// An API failure or transport error is yielded once, last.
func Each[T, O any, PO interface {
	*O
	Pageable
}](ctx context.Context, opts O, page func(context.Context, O, ...CallOption) (Result[Page[T]], error), call ...CallOption) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		o := opts
		for {
			r, err := page(ctx, o, call...)
			if err == nil && !r.OK {
				err = r.Error
			}
			if err != nil {
				yield(zero, err)
				return
			}
			for _, v := range r.Value.Data {
				if !yield(v, nil) {
					return
				}
			}
			if r.Value.NextCursor == nil || *r.Value.NextCursor == "" {
				return
			}
			PO(&o).listOptions().Cursor = *r.Value.NextCursor
		}
	}
}

func list[T any](ctx context.Context, c *Client, op string, params map[string]string, o ListOptions, filters map[string]string, opts []CallOption) (Result[Page[T]], error) {
	q := o.query()
	for k, v := range filters {
		if v != "" {
			q.Set(k, v)
		}
	}
	return jsonCall[Page[T]](ctx, c, op, params, q, nil, opts)
}

// --- Public ---

// Pricing returns the price catalogue (untyped: json.RawMessage).
//
// By hand: it answers json.RawMessage rather than the document's
// PricingBody, as it did before the types were generated.
func (c *Client) Pricing(ctx context.Context, opts ...CallOption) (Result[json.RawMessage], error) {
	return jsonCall[json.RawMessage](ctx, c, "pricing.read", nil, nil, nil, opts)
}

// --- Credits ---

// LedgerOptions filter GET /credits/ledger (Type: grant, top_up, charge,
// hold, capture or release).
type LedgerOptions struct {
	ListOptions
	Since, Until    time.Time
	KeyID           string
	Operation, Type string
}

// ListLedger is written by hand: its filters are times (RFC 3339 with
// nanoseconds), not strings.
func (c *Client) ListLedger(ctx context.Context, o LedgerOptions, opts ...CallOption) (Result[Page[LedgerEntry]], error) {
	f := map[string]string{"keyId": o.KeyID, "operation": o.Operation, "type": o.Type}
	if !o.Since.IsZero() {
		f["since"] = o.Since.UTC().Format(time.RFC3339Nano)
	}
	if !o.Until.IsZero() {
		f["until"] = o.Until.UTC().Format(time.RFC3339Nano)
	}
	return list[LedgerEntry](ctx, c, "credits.ledger.list", nil, o.ListOptions, f, opts)
}

// AllLedgerEntries iterates the ledger entries the key sees, newest first.
func (c *Client) AllLedgerEntries(ctx context.Context, o LedgerOptions, opts ...CallOption) iter.Seq2[LedgerEntry, error] {
	return Each(ctx, o, c.ListLedger, opts...)
}

// --- Projects, usage, audit ---

// UsageOptions filter GET /usage (times RFC 3339; BucketWidth 1h or 1d;
// GroupBy a comma-separated subset of project,key,service,operation).
type UsageOptions struct {
	ListOptions
	Start, End, BucketWidth, GroupBy string
}

// Usage is written by hand: it filters by period, bucket width and
// grouping, query parameters the generator does not map.
func (c *Client) Usage(ctx context.Context, o UsageOptions, opts ...CallOption) (Result[Page[UsageBucket]], error) {
	return list[UsageBucket](ctx, c, "usage.read", nil, o.ListOptions,
		map[string]string{"start": o.Start, "end": o.End, "bucketWidth": o.BucketWidth, "groupBy": o.GroupBy}, opts)
}

// AuditEventOptions filter GET /audit-events.
type AuditEventOptions struct {
	ListOptions
	Since, Until time.Time
	KeyID        string
	Operation    string
	Status       int
}

// ListAuditEvents is written by hand: its filters are times and an integer
// status, not strings.
func (c *Client) ListAuditEvents(ctx context.Context, o AuditEventOptions, opts ...CallOption) (Result[Page[Event]], error) {
	f := map[string]string{"keyId": o.KeyID, "operation": o.Operation}
	if !o.Since.IsZero() {
		f["since"] = o.Since.UTC().Format(time.RFC3339)
	}
	if !o.Until.IsZero() {
		f["until"] = o.Until.UTC().Format(time.RFC3339)
	}
	if o.Status != 0 {
		f["status"] = strconv.Itoa(o.Status)
	}
	return list[Event](ctx, c, "auditEvents.list", nil, o.ListOptions, f, opts)
}

// --- Files ---

// FileListOptions filter GET /files by the uploader's purpose label.
type FileListOptions struct {
	ListOptions
	Purpose string
}

// ListFiles is written by hand: it filters by purpose, a query parameter the
// generator does not map.
func (c *Client) ListFiles(ctx context.Context, o FileListOptions, opts ...CallOption) (Result[Page[*File]], error) {
	return list[*File](ctx, c, "files.list", nil, o.ListOptions, map[string]string{"purpose": o.Purpose}, opts)
}

// Upload describes a file to upload. Name is sent as X-File-Name (RFC 8187
// encoded when it is not printable ASCII); SHA256, when set, makes the
// server refuse different bytes (checksum_mismatch).
type Upload struct {
	Name        string
	ContentType string // empty: application/octet-stream
	Purpose     string
	SHA256      string
	Body        io.Reader
}

// UploadFile uploads up to 4 MiB. The body is read into memory first so a
// retry sends the same bytes under the same Idempotency-Key.
//
// By hand: a raw body with its name, purpose and checksum in headers.
func (c *Client) UploadFile(ctx context.Context, u Upload, opts ...CallOption) (Result[*File], error) {
	cl := c.newCall("files.create", nil, opts)
	ct := u.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	if err := rawBody(cl, u.Body, ct, maxUpload); err != nil {
		return Result[*File]{}, err
	}
	cl.header.Set("X-File-Name", fileNameHeader(u.Name))
	if u.Purpose != "" {
		cl.header.Set("X-Service-File-Purpose", u.Purpose)
	}
	if u.SHA256 != "" {
		cl.header.Set("X-Content-Sha256", u.SHA256)
	}
	return do[*File](ctx, c, cl)
}

// fileNameHeader passes printable ASCII as is and encodes anything else as
// RFC 8187 UTF-8”percent-encoding.
func fileNameHeader(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e || name[i] == '%' {
			return "UTF-8''" + url.PathEscape(name)
		}
	}
	return name
}

// --- Databases ---

// UploadTransferPart uploads one slice (at most 4 MiB) of an import archive.
//
// By hand: a raw body, and an integer path parameter.
func (c *Client) UploadTransferPart(ctx context.Context, transferID string, part int, body io.Reader, opts ...CallOption) (Result[TransferPart], error) {
	cl := c.newCall("databases.transfers.part.upload", map[string]string{"transferId": transferID, "partNumber": strconv.Itoa(part)}, opts)
	if err := rawBody(cl, body, "application/zip", maxUpload); err != nil {
		return Result[TransferPart]{}, err
	}
	return do[TransferPart](ctx, c, cl)
}

// --- Wallets ---

// Managed wallets sign with keys that never leave the service; amounts are
// base units as decimal strings throughout.

// WalletBalances reads every known asset of chainID (0: of every chain the
// wallet serves), each chain's amounts at one block.
//
// By hand: its chain id is an optional integer query parameter.
func (c *Client) WalletBalances(ctx context.Context, walletID string, chainID uint64, opts ...CallOption) (Result[*WalletBalances], error) {
	var q url.Values
	if chainID != 0 {
		q = url.Values{"chainId": {strconv.FormatUint(chainID, 10)}}
	}
	return jsonCall[*WalletBalances](ctx, c, "wallets.balances.read", map[string]string{"walletId": walletID}, q, nil, opts)
}

// --- Universal swaps ---

// SwapTokenListOptions page GET /swaps/tokens; ChainID is required.
type SwapTokenListOptions struct {
	ListOptions
	ChainID uint64
}

// ListSwapTokens is written by hand: its chain id is an integer query
// parameter.
func (c *Client) ListSwapTokens(ctx context.Context, o SwapTokenListOptions, opts ...CallOption) (Result[Page[TokenView]], error) {
	f := map[string]string{}
	if o.ChainID != 0 {
		f["chainId"] = strconv.FormatUint(o.ChainID, 10)
	}
	return list[TokenView](ctx, c, "swaps.tokens.list", nil, o.ListOptions, f, opts)
}

// AllSwapTokens iterates every swappable token of o.ChainID.
func (c *Client) AllSwapTokens(ctx context.Context, o SwapTokenListOptions, opts ...CallOption) iter.Seq2[TokenView, error] {
	return Each(ctx, o, c.ListSwapTokens, opts...)
}

// GetSwapRoute follows a prepared route by its sending transaction's hash;
// an empty txHash reads the one the route accepted before.
//
// By hand: its transaction hash is an optional query parameter.
func (c *Client) GetSwapRoute(ctx context.Context, routeID, txHash string, opts ...CallOption) (Result[*RouteStatus], error) {
	var q url.Values
	if txHash != "" {
		q = url.Values{"txHash": {txHash}}
	}
	return jsonCall[*RouteStatus](ctx, c, "swaps.routes.read", map[string]string{"routeId": routeID}, q, nil, opts)
}

// --- Runs, approvals, artifacts ---

// RunListOptions filter GET /runs by status.
type RunListOptions struct {
	ListOptions
	Status string
}

// ListRuns is written by hand: it filters by status, a query parameter the
// generator does not map.
func (c *Client) ListRuns(ctx context.Context, o RunListOptions, opts ...CallOption) (Result[Page[*Run]], error) {
	return list[*Run](ctx, c, "runs.list", nil, o.ListOptions, map[string]string{"status": o.Status}, opts)
}

// ApprovalListOptions filter GET /approvals by status.
type ApprovalListOptions struct {
	ListOptions
	Status string
}

// ListApprovals is written by hand: it filters by status, a query parameter
// the generator does not map.
func (c *Client) ListApprovals(ctx context.Context, o ApprovalListOptions, opts ...CallOption) (Result[Page[*Approval]], error) {
	return list[*Approval](ctx, c, "approvals.list", nil, o.ListOptions, map[string]string{"status": o.Status}, opts)
}

// ArtifactListOptions filter GET /artifacts by run.
type ArtifactListOptions struct {
	ListOptions
	RunID string
}

// ListArtifacts is written by hand: it filters by run, a query parameter the
// generator does not map.
func (c *Client) ListArtifacts(ctx context.Context, o ArtifactListOptions, opts ...CallOption) (Result[Page[*Artifact]], error) {
	return list[*Artifact](ctx, c, "artifacts.list", nil, o.ListOptions, map[string]string{"runId": o.RunID}, opts)
}

// DownloadArtifact is written by hand: it streams the artifact's bytes, of
// any media type, where the document describes a JSON answer.
func (c *Client) DownloadArtifact(ctx context.Context, artifactID string, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("artifacts.content.read", map[string]string{"artifactId": artifactID}, opts))
}

// --- Webhooks ---

// DeliveryListOptions filter GET /webhook-deliveries.
type DeliveryListOptions struct {
	ListOptions
	WebhookID, Status string
}

// ListWebhookDeliveries is written by hand: it filters by webhook and
// status, query parameters the generator does not map.
func (c *Client) ListWebhookDeliveries(ctx context.Context, o DeliveryListOptions, opts ...CallOption) (Result[Page[*Delivery]], error) {
	return list[*Delivery](ctx, c, "webhookDeliveries.list", nil, o.ListOptions, map[string]string{"webhookId": o.WebhookID, "status": o.Status}, opts)
}
