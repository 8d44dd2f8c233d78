package platform

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/url"
	"strconv"
	"time"
)

// Operations maps every operation id of the route table (routes.Table and
// routes.Public; /mcp is an MCP transport, not an SDK call) to the Client
// method that performs it. The coverage test holds it to the table.
var Operations = map[string]string{
	"index.read": "Index", "health.read": "Health", "openapi.read": "OpenAPI", "pricing.read": "Pricing", "docs.read": "Docs", "docs.assets.read": "DocsAsset",

	"apiKeys.list": "ListAPIKeys", "apiKeys.create": "CreateAPIKey", "apiKeys.revoke": "RevokeAPIKey", "apiKeys.roll": "RollAPIKey",
	"services.list": "ListServices", "capabilities.list": "ListCapabilities", "capabilities.list.byService": "ListServiceCapabilities",
	"actions.list": "ListActions", "services.invoke": "Invoke",
	"credits.balance.read": "Balance", "credits.x402.topUp": "TopUp", "credits.ledger.list": "ListLedger",

	"projects.list": "ListProjects", "projects.create": "CreateProject", "projects.read": "GetProject",
	"projects.update": "UpdateProject", "projects.archive": "ArchiveProject",
	"usage.read": "Usage", "auditEvents.list": "ListAuditEvents",
	"files.list": "ListFiles", "files.create": "UploadFile", "files.read": "GetFile", "files.content.read": "DownloadFile", "files.delete": "DeleteFile",
	"connections.list": "ListConnections", "connections.create": "CreateConnection", "connections.read": "GetConnection",
	"connections.update": "UpdateConnection", "connections.delete": "DeleteConnection",

	"databases.account.read": "GetDatabase", "databases.account.provision": "ProvisionDatabase", "databases.account.deprovision": "DeprovisionDatabase",
	"databases.query": "QueryDatabase", "databases.actions": "DatabaseActions",
	"databases.transfers.create": "CreateTransfer", "databases.transfers.part.upload": "UploadTransferPart",
	"databases.transfers.complete": "CompleteTransfer", "databases.transfers.archive": "DownloadTransferArchive",
	"databases.transfers.read": "GetTransfer", "databases.transfers.cancel": "CancelTransfer",

	"wallets.list": "ListWallets", "wallets.create": "CreateWallet", "wallets.read": "GetWallet", "wallets.balances.read": "WalletBalances",
	"wallets.policy.update": "UpdateWalletPolicy", "wallets.transactions.quote": "QuoteWalletTransaction",
	"wallets.transactions.create": "CreateWalletTransaction", "wallets.transactions.list": "ListWalletTransactions",
	"wallets.transactions.read": "GetWalletTransaction", "wallets.signatures.quote": "QuoteSignature", "wallets.signatures.create": "CreateSignature",
	"trading.quotes.create": "CreateTradingQuote", "trading.orders.create": "CreateOrder", "trading.orders.list": "ListOrders",
	"trading.orders.read": "GetOrder", "trading.positions.list": "ListPositions",

	"swaps.tokens.list": "ListSwapTokens", "swaps.quote": "QuoteSwap", "swaps.execute": "ExecuteSwap", "swaps.list": "ListSwaps",
	"swaps.read": "GetSwap", "swaps.prepare": "PrepareSwap", "swaps.routes.read": "GetSwapRoute",

	"runs.list": "ListRuns", "runs.create": "CreateRun", "runs.read": "GetRun", "runs.cancel": "CancelRun",
	"approvals.list": "ListApprovals", "approvals.create": "CreateApproval", "approvals.decide": "DecideApproval",
	"artifacts.list": "ListArtifacts", "artifacts.content.read": "DownloadArtifact",
	"webhooks.list": "ListWebhooks", "webhooks.create": "CreateWebhook", "webhooks.update": "UpdateWebhook",
	"webhooks.rotate": "RotateWebhookSecret", "webhooks.disable": "DisableWebhook",
	"webhookDeliveries.list": "ListWebhookDeliveries", "webhookDeliveries.replay": "ReplayWebhookDelivery",
}

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

// Index is GET /: where to start (links to /docs, /openapi.json, /health).
func (c *Client) Index(ctx context.Context, opts ...CallOption) (Result[IndexBody], error) {
	return jsonCall[IndexBody](ctx, c, "index.read", nil, nil, nil, opts)
}

func (c *Client) Health(ctx context.Context, opts ...CallOption) (Result[HealthStatus], error) {
	return jsonCall[HealthStatus](ctx, c, "health.read", nil, nil, nil, opts)
}

// OpenAPI returns the OpenAPI 3.1 document.
func (c *Client) OpenAPI(ctx context.Context, opts ...CallOption) (Result[json.RawMessage], error) {
	return jsonCall[json.RawMessage](ctx, c, "openapi.read", nil, nil, nil, opts)
}

// Pricing returns the price catalogue (untyped: json.RawMessage).
func (c *Client) Pricing(ctx context.Context, opts ...CallOption) (Result[json.RawMessage], error) {
	return jsonCall[json.RawMessage](ctx, c, "pricing.read", nil, nil, nil, opts)
}

// Docs streams the HTML reference page.
func (c *Client) Docs(ctx context.Context, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("docs.read", nil, opts))
}

// DocsAsset streams a file the docs page loads (its bundled renderer).
func (c *Client) DocsAsset(ctx context.Context, name string, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("docs.assets.read", map[string]string{"name": name}, opts))
}

// --- API keys ---

func (c *Client) ListAPIKeys(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Key]], error) {
	return list[*Key](ctx, c, "apiKeys.list", nil, o, nil, opts)
}

// CreateAPIKey creates a child of the calling key, or, with
// WithCreditToken, the first key of a new account.
func (c *Client) CreateAPIKey(ctx context.Context, req CreateKeyRequest, opts ...CallOption) (Result[CreatedKey], error) {
	return jsonCall[CreatedKey](ctx, c, "apiKeys.create", nil, nil, req, opts)
}

func (c *Client) RevokeAPIKey(ctx context.Context, id string, opts ...CallOption) (Result[*Key], error) {
	return jsonCall[*Key](ctx, c, "apiKeys.revoke", map[string]string{"id": id}, nil, nil, opts)
}

func (c *Client) RollAPIKey(ctx context.Context, id string, req RollRequest, opts ...CallOption) (Result[RolledKey], error) {
	return jsonCall[RolledKey](ctx, c, "apiKeys.roll", map[string]string{"id": id}, nil, req, opts)
}

// --- Services ---

func (c *Client) ListServices(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[Service]], error) {
	return list[Service](ctx, c, "services.list", nil, o, nil, opts)
}

func (c *Client) ListCapabilities(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[Capability]], error) {
	return list[Capability](ctx, c, "capabilities.list", nil, o, nil, opts)
}

func (c *Client) ListServiceCapabilities(ctx context.Context, serviceID string, o ListOptions, opts ...CallOption) (Result[Page[Capability]], error) {
	return list[Capability](ctx, c, "capabilities.list.byService", map[string]string{"serviceId": serviceID}, o, nil, opts)
}

func (c *Client) ListActions(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[Action]], error) {
	return list[Action](ctx, c, "actions.list", nil, o, nil, opts)
}

// Invoke calls a managed service operation; the charge is also in
// Result.Header's X-Service-Credits-Charged.
func (c *Client) Invoke(ctx context.Context, serviceID string, req InvokeRequest, opts ...CallOption) (Result[Invocation], error) {
	return jsonCall[Invocation](ctx, c, "services.invoke", map[string]string{"serviceId": serviceID}, nil, req, opts)
}

// --- Credits ---

func (c *Client) Balance(ctx context.Context, opts ...CallOption) (Result[Balance], error) {
	return jsonCall[Balance](ctx, c, "credits.balance.read", nil, nil, nil, opts)
}

// LedgerOptions filter GET /credits/ledger (Type: grant, top_up, charge,
// hold, capture or release).
type LedgerOptions struct {
	ListOptions
	Since, Until    time.Time
	KeyID           string
	Operation, Type string
}

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

func (c *Client) ListProjects(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Project]], error) {
	return list[*Project](ctx, c, "projects.list", nil, o, nil, opts)
}

// AllProjects iterates every project visible to the key.
func (c *Client) AllProjects(ctx context.Context, o ListOptions, opts ...CallOption) iter.Seq2[*Project, error] {
	return Each(ctx, o, c.ListProjects, opts...)
}

func (c *Client) CreateProject(ctx context.Context, req CreateProjectRequest, opts ...CallOption) (Result[*Project], error) {
	return jsonCall[*Project](ctx, c, "projects.create", nil, nil, req, opts)
}

func (c *Client) GetProject(ctx context.Context, id string, opts ...CallOption) (Result[*Project], error) {
	return jsonCall[*Project](ctx, c, "projects.read", map[string]string{"projectId": id}, nil, nil, opts)
}

func (c *Client) UpdateProject(ctx context.Context, id string, req UpdateProjectRequest, opts ...CallOption) (Result[*Project], error) {
	return jsonCall[*Project](ctx, c, "projects.update", map[string]string{"projectId": id}, nil, req, opts)
}

func (c *Client) ArchiveProject(ctx context.Context, id string, opts ...CallOption) (Result[*Project], error) {
	return jsonCall[*Project](ctx, c, "projects.archive", map[string]string{"projectId": id}, nil, nil, opts)
}

// UsageOptions filter GET /usage (times RFC 3339; BucketWidth 1h or 1d;
// GroupBy a comma-separated subset of project,key,service,operation).
type UsageOptions struct {
	ListOptions
	Start, End, BucketWidth, GroupBy string
}

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

func (c *Client) GetFile(ctx context.Context, id string, opts ...CallOption) (Result[*File], error) {
	return jsonCall[*File](ctx, c, "files.read", map[string]string{"fileId": id}, nil, nil, opts)
}

// DownloadFile streams a file's bytes; close Value.Body.
func (c *Client) DownloadFile(ctx context.Context, id string, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("files.content.read", map[string]string{"fileId": id}, opts))
}

func (c *Client) DeleteFile(ctx context.Context, id string, opts ...CallOption) (Result[*File], error) {
	return jsonCall[*File](ctx, c, "files.delete", map[string]string{"fileId": id}, nil, nil, opts)
}

// --- Connections ---

func (c *Client) ListConnections(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Connection]], error) {
	return list[*Connection](ctx, c, "connections.list", nil, o, nil, opts)
}

func (c *Client) CreateConnection(ctx context.Context, req ConnectionCreate, opts ...CallOption) (Result[*Connection], error) {
	return jsonCall[*Connection](ctx, c, "connections.create", nil, nil, req, opts)
}

func (c *Client) GetConnection(ctx context.Context, id string, opts ...CallOption) (Result[*Connection], error) {
	return jsonCall[*Connection](ctx, c, "connections.read", map[string]string{"connectionId": id}, nil, nil, opts)
}

func (c *Client) UpdateConnection(ctx context.Context, id string, req ConnectionUpdate, opts ...CallOption) (Result[*Connection], error) {
	return jsonCall[*Connection](ctx, c, "connections.update", map[string]string{"connectionId": id}, nil, req, opts)
}

func (c *Client) DeleteConnection(ctx context.Context, id string, opts ...CallOption) (Result[*Connection], error) {
	return jsonCall[*Connection](ctx, c, "connections.delete", map[string]string{"connectionId": id}, nil, nil, opts)
}

// --- Databases ---

func (c *Client) GetDatabase(ctx context.Context, opts ...CallOption) (Result[*Database], error) {
	return jsonCall[*Database](ctx, c, "databases.account.read", nil, nil, nil, opts)
}

func (c *Client) ProvisionDatabase(ctx context.Context, opts ...CallOption) (Result[*Database], error) {
	return jsonCall[*Database](ctx, c, "databases.account.provision", nil, nil, struct{}{}, opts)
}

func (c *Client) DeprovisionDatabase(ctx context.Context, opts ...CallOption) (Result[Deleted], error) {
	return jsonCall[Deleted](ctx, c, "databases.account.deprovision", nil, nil, nil, opts)
}

func (c *Client) QueryDatabase(ctx context.Context, req QueryRequest, opts ...CallOption) (Result[*QueryResult], error) {
	return jsonCall[*QueryResult](ctx, c, "databases.query", nil, nil, req, opts)
}

func (c *Client) DatabaseActions(ctx context.Context, req ActionsRequest, opts ...CallOption) (Result[*ActionsResult], error) {
	return jsonCall[*ActionsResult](ctx, c, "databases.actions", nil, nil, req, opts)
}

func (c *Client) CreateTransfer(ctx context.Context, req CreateTransferRequest, opts ...CallOption) (Result[*Transfer], error) {
	return jsonCall[*Transfer](ctx, c, "databases.transfers.create", nil, nil, req, opts)
}

// UploadTransferPart uploads one slice (at most 4 MiB) of an import archive.
func (c *Client) UploadTransferPart(ctx context.Context, transferID string, part int, body io.Reader, opts ...CallOption) (Result[TransferPart], error) {
	cl := c.newCall("databases.transfers.part.upload", map[string]string{"transferId": transferID, "partNumber": strconv.Itoa(part)}, opts)
	if err := rawBody(cl, body, "application/zip", maxUpload); err != nil {
		return Result[TransferPart]{}, err
	}
	return do[TransferPart](ctx, c, cl)
}

func (c *Client) CompleteTransfer(ctx context.Context, transferID string, opts ...CallOption) (Result[*Transfer], error) {
	return jsonCall[*Transfer](ctx, c, "databases.transfers.complete", map[string]string{"transferId": transferID}, nil, struct{}{}, opts)
}

// DownloadTransferArchive streams an export's archive; its signature is in
// Value.Header (X-Service-Archive-Signature).
func (c *Client) DownloadTransferArchive(ctx context.Context, transferID string, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("databases.transfers.archive", map[string]string{"transferId": transferID}, opts))
}

func (c *Client) GetTransfer(ctx context.Context, transferID string, opts ...CallOption) (Result[*Transfer], error) {
	return jsonCall[*Transfer](ctx, c, "databases.transfers.read", map[string]string{"transferId": transferID}, nil, nil, opts)
}

func (c *Client) CancelTransfer(ctx context.Context, transferID string, opts ...CallOption) (Result[*Transfer], error) {
	return jsonCall[*Transfer](ctx, c, "databases.transfers.cancel", map[string]string{"transferId": transferID}, nil, nil, opts)
}

// --- Wallets ---

// Managed wallets sign with keys that never leave the service; amounts are
// base units as decimal strings throughout.

func (c *Client) ListWallets(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Wallet]], error) {
	return list[*Wallet](ctx, c, "wallets.list", nil, o, nil, opts)
}

// AllWallets iterates every wallet of the account (or of WithProject's project).
func (c *Client) AllWallets(ctx context.Context, o ListOptions, opts ...CallOption) iter.Seq2[*Wallet, error] {
	return Each(ctx, o, c.ListWallets, opts...)
}

func (c *Client) CreateWallet(ctx context.Context, req WalletCreateRequest, opts ...CallOption) (Result[*Wallet], error) {
	return jsonCall[*Wallet](ctx, c, "wallets.create", nil, nil, req, opts)
}

func (c *Client) GetWallet(ctx context.Context, walletID string, opts ...CallOption) (Result[*Wallet], error) {
	return jsonCall[*Wallet](ctx, c, "wallets.read", map[string]string{"walletId": walletID}, nil, nil, opts)
}

// WalletBalances reads every known asset of chainID (0: of every chain the
// wallet serves), each chain's amounts at one block.
func (c *Client) WalletBalances(ctx context.Context, walletID string, chainID uint64, opts ...CallOption) (Result[*WalletBalances], error) {
	var q url.Values
	if chainID != 0 {
		q = url.Values{"chainId": {strconv.FormatUint(chainID, 10)}}
	}
	return jsonCall[*WalletBalances](ctx, c, "wallets.balances.read", map[string]string{"walletId": walletID}, q, nil, opts)
}

// UpdateWalletPolicy replaces the policy whole; req.ExpectedRevision is the
// revision read (Wallet.Policy.Revision), so a concurrent edit is a 409
// policy_revision_conflict rather than lost.
func (c *Client) UpdateWalletPolicy(ctx context.Context, walletID string, req WalletPolicyRequest, opts ...CallOption) (Result[*Wallet], error) {
	return jsonCall[*Wallet](ctx, c, "wallets.policy.update", map[string]string{"walletId": walletID}, nil, req, opts)
}

// QuoteWalletTransaction prices and simulates a send; execute it with
// CreateWalletTransaction within the quote's expiry.
func (c *Client) QuoteWalletTransaction(ctx context.Context, walletID string, req TxQuoteRequest, opts ...CallOption) (Result[*TxQuote], error) {
	return jsonCall[*TxQuote](ctx, c, "wallets.transactions.quote", map[string]string{"walletId": walletID}, nil, req, opts)
}

// CreateWalletTransaction executes a quote (202): the transaction moves on
// to confirmed or failed by itself; poll GetWalletTransaction.
func (c *Client) CreateWalletTransaction(ctx context.Context, walletID string, req TxCreateRequest, opts ...CallOption) (Result[*WalletTransaction], error) {
	return jsonCall[*WalletTransaction](ctx, c, "wallets.transactions.create", map[string]string{"walletId": walletID}, nil, req, opts)
}

func (c *Client) ListWalletTransactions(ctx context.Context, walletID string, o ListOptions, opts ...CallOption) (Result[Page[*WalletTransaction]], error) {
	return list[*WalletTransaction](ctx, c, "wallets.transactions.list", map[string]string{"walletId": walletID}, o, nil, opts)
}

// AllWalletTransactions iterates every transaction of a wallet.
func (c *Client) AllWalletTransactions(ctx context.Context, walletID string, o ListOptions, opts ...CallOption) iter.Seq2[*WalletTransaction, error] {
	return Each(ctx, o, func(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*WalletTransaction]], error) {
		return c.ListWalletTransactions(ctx, walletID, o, opts...)
	}, opts...)
}

func (c *Client) GetWalletTransaction(ctx context.Context, walletID, transactionID string, opts ...CallOption) (Result[*WalletTransaction], error) {
	return jsonCall[*WalletTransaction](ctx, c, "wallets.transactions.read", map[string]string{"walletId": walletID, "transactionId": transactionID}, nil, nil, opts)
}

// QuoteSignature computes the EIP-191 or EIP-712 digest and the policy's
// decision; when approval is required, Value.ApprovalID is already requested.
func (c *Client) QuoteSignature(ctx context.Context, walletID string, req SigQuoteRequest, opts ...CallOption) (Result[*SigQuote], error) {
	return jsonCall[*SigQuote](ctx, c, "wallets.signatures.quote", map[string]string{"walletId": walletID}, nil, req, opts)
}

// CreateSignature signs a quote's digest; the signature recovers to the
// wallet's address.
func (c *Client) CreateSignature(ctx context.Context, walletID string, req SigCreateRequest, opts ...CallOption) (Result[*WalletSignature], error) {
	return jsonCall[*WalletSignature](ctx, c, "wallets.signatures.create", map[string]string{"walletId": walletID}, nil, req, opts)
}

// --- Trading ---

func (c *Client) CreateTradingQuote(ctx context.Context, req QuoteRequest, opts ...CallOption) (Result[*Quote], error) {
	return jsonCall[*Quote](ctx, c, "trading.quotes.create", nil, nil, req, opts)
}

func (c *Client) CreateOrder(ctx context.Context, req OrderRequest, opts ...CallOption) (Result[*Order], error) {
	return jsonCall[*Order](ctx, c, "trading.orders.create", nil, nil, req, opts)
}

func (c *Client) ListOrders(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Order]], error) {
	return list[*Order](ctx, c, "trading.orders.list", nil, o, nil, opts)
}

func (c *Client) GetOrder(ctx context.Context, orderID string, opts ...CallOption) (Result[*Order], error) {
	return jsonCall[*Order](ctx, c, "trading.orders.read", map[string]string{"orderId": orderID}, nil, nil, opts)
}

func (c *Client) ListPositions(ctx context.Context, opts ...CallOption) (Result[Positions], error) {
	return jsonCall[Positions](ctx, c, "trading.positions.list", nil, nil, nil, opts)
}

// --- Universal swaps ---

// SwapTokenListOptions page GET /swaps/tokens; ChainID is required.
type SwapTokenListOptions struct {
	ListOptions
	ChainID uint64
}

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

// QuoteSwap quotes for a managed wallet (WalletID: ExecuteSwap) or for the
// caller's own address (FromAddress: PrepareSwap); a quote is used once.
func (c *Client) QuoteSwap(ctx context.Context, req SwapQuoteRequest, opts ...CallOption) (Result[*SwapQuote], error) {
	return jsonCall[*SwapQuote](ctx, c, "swaps.quote", nil, nil, req, opts)
}

// ExecuteSwap runs a wallet's quote under the wallet's policy (202); poll
// GetSwap until done or failed.
func (c *Client) ExecuteSwap(ctx context.Context, req ExecuteRequest, opts ...CallOption) (Result[*Swap], error) {
	return jsonCall[*Swap](ctx, c, "swaps.execute", nil, nil, req, opts)
}

func (c *Client) ListSwaps(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Swap]], error) {
	return list[*Swap](ctx, c, "swaps.list", nil, o, nil, opts)
}

// AllSwaps iterates every swap of the account (or of WithProject's project).
func (c *Client) AllSwaps(ctx context.Context, o ListOptions, opts ...CallOption) iter.Seq2[*Swap, error] {
	return Each(ctx, o, c.ListSwaps, opts...)
}

func (c *Client) GetSwap(ctx context.Context, swapID string, opts ...CallOption) (Result[*Swap], error) {
	return jsonCall[*Swap](ctx, c, "swaps.read", map[string]string{"swapId": swapID}, nil, nil, opts)
}

// PrepareSwap builds the unsigned transactions of an address-bound quote for
// the caller's own wallet. It changes nothing on the server, so it carries
// no Idempotency-Key.
func (c *Client) PrepareSwap(ctx context.Context, req SwapPrepare, opts ...CallOption) (Result[*Prepared], error) {
	return jsonCall[*Prepared](ctx, c, "swaps.prepare", nil, nil, req, opts)
}

// GetSwapRoute follows a prepared route by its sending transaction's hash;
// an empty txHash reads the one the route accepted before.
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

func (c *Client) ListRuns(ctx context.Context, o RunListOptions, opts ...CallOption) (Result[Page[*Run]], error) {
	return list[*Run](ctx, c, "runs.list", nil, o.ListOptions, map[string]string{"status": o.Status}, opts)
}

func (c *Client) CreateRun(ctx context.Context, req RunCreate, opts ...CallOption) (Result[*Run], error) {
	return jsonCall[*Run](ctx, c, "runs.create", nil, nil, req, opts)
}

func (c *Client) GetRun(ctx context.Context, runID string, opts ...CallOption) (Result[*Run], error) {
	return jsonCall[*Run](ctx, c, "runs.read", map[string]string{"runId": runID}, nil, nil, opts)
}

func (c *Client) CancelRun(ctx context.Context, runID string, opts ...CallOption) (Result[*Run], error) {
	return jsonCall[*Run](ctx, c, "runs.cancel", map[string]string{"runId": runID}, nil, nil, opts)
}

// ApprovalListOptions filter GET /approvals by status.
type ApprovalListOptions struct {
	ListOptions
	Status string
}

func (c *Client) ListApprovals(ctx context.Context, o ApprovalListOptions, opts ...CallOption) (Result[Page[*Approval]], error) {
	return list[*Approval](ctx, c, "approvals.list", nil, o.ListOptions, map[string]string{"status": o.Status}, opts)
}

func (c *Client) CreateApproval(ctx context.Context, req ApprovalCreate, opts ...CallOption) (Result[*Approval], error) {
	return jsonCall[*Approval](ctx, c, "approvals.create", nil, nil, req, opts)
}

func (c *Client) DecideApproval(ctx context.Context, approvalID string, req ApprovalDecision, opts ...CallOption) (Result[*Approval], error) {
	return jsonCall[*Approval](ctx, c, "approvals.decide", map[string]string{"approvalId": approvalID}, nil, req, opts)
}

// ArtifactListOptions filter GET /artifacts by run.
type ArtifactListOptions struct {
	ListOptions
	RunID string
}

func (c *Client) ListArtifacts(ctx context.Context, o ArtifactListOptions, opts ...CallOption) (Result[Page[*Artifact]], error) {
	return list[*Artifact](ctx, c, "artifacts.list", nil, o.ListOptions, map[string]string{"runId": o.RunID}, opts)
}

func (c *Client) DownloadArtifact(ctx context.Context, artifactID string, opts ...CallOption) (Result[*Download], error) {
	return stream(ctx, c, c.newCall("artifacts.content.read", map[string]string{"artifactId": artifactID}, opts))
}

// --- Webhooks ---

// DeliveryListOptions filter GET /webhook-deliveries.
type DeliveryListOptions struct {
	ListOptions
	WebhookID, Status string
}

func (c *Client) ListWebhooks(ctx context.Context, o ListOptions, opts ...CallOption) (Result[Page[*Webhook]], error) {
	return list[*Webhook](ctx, c, "webhooks.list", nil, o, nil, opts)
}

func (c *Client) CreateWebhook(ctx context.Context, req WebhookCreate, opts ...CallOption) (Result[WebhookWithSecret], error) {
	return jsonCall[WebhookWithSecret](ctx, c, "webhooks.create", nil, nil, req, opts)
}

func (c *Client) UpdateWebhook(ctx context.Context, webhookID string, req WebhookUpdate, opts ...CallOption) (Result[*Webhook], error) {
	return jsonCall[*Webhook](ctx, c, "webhooks.update", map[string]string{"webhookId": webhookID}, nil, req, opts)
}

func (c *Client) RotateWebhookSecret(ctx context.Context, webhookID string, opts ...CallOption) (Result[WebhookWithSecret], error) {
	return jsonCall[WebhookWithSecret](ctx, c, "webhooks.rotate", map[string]string{"webhookId": webhookID}, nil, nil, opts)
}

func (c *Client) DisableWebhook(ctx context.Context, webhookID string, opts ...CallOption) (Result[*Webhook], error) {
	return jsonCall[*Webhook](ctx, c, "webhooks.disable", map[string]string{"webhookId": webhookID}, nil, nil, opts)
}

func (c *Client) ListWebhookDeliveries(ctx context.Context, o DeliveryListOptions, opts ...CallOption) (Result[Page[*Delivery]], error) {
	return list[*Delivery](ctx, c, "webhookDeliveries.list", nil, o.ListOptions, map[string]string{"webhookId": o.WebhookID, "status": o.Status}, opts)
}

func (c *Client) ReplayWebhookDelivery(ctx context.Context, deliveryID string, opts ...CallOption) (Result[*Delivery], error) {
	return jsonCall[*Delivery](ctx, c, "webhookDeliveries.replay", map[string]string{"deliveryId": deliveryID}, nil, nil, opts)
}
