// Package databasesapi is the managed-databases endpoint group
// (docs/databases.md): one SQLite database per scope, read-only queries and
// atomic actions charged per row, and signed portable archives whose long
// work (export build, import validation) runs in the databases worker, never
// in the request.
package databasesapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/base/catalog"
	"platformapi/shared/domain/limits"
	"platformapi/shared/groups/credits"
	"platformapi/shared/groups/databases"
	"platformapi/shared/groups/keys"
)

// ServiceID is the managed service the group's routes belong to.
const ServiceID = "core-database"

// Deps are what the group needs.
type Deps struct {
	// Store holds the credits ledger the charges go through.
	Store store.Store
	// Databases is the domain service on this deployment's storage; nil:
	// every operation answers 503.
	Databases *databases.Service
	// Queue carries transfer jobs to the databases worker; nil: transfers
	// that need the worker answer 503.
	Queue queue.Queue
}

type handlers struct {
	k      *api.Kernel
	d      Deps
	ledger *credits.Ledger
}

// Register adds the group's operations to the kernel.
//
// The scope of every operation is the request's project (a project-bound
// key, or X-Service-Project) or else the account: a database, or a
// transfer, of another scope is 404 not_found.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, d: d, ledger: credits.NewLedger(d.Store, k.Now)}
	api.Register(k, "databases.account.provision", http.StatusCreated, h.provision)
	api.Register(k, "databases.account.read", http.StatusOK, h.read)
	api.Register(k, "databases.account.deprovision", http.StatusOK, h.deprovision)
	api.Register(k, "databases.query", http.StatusOK, h.query, api.Describe(queryDoc))
	api.Register(k, "databases.actions", http.StatusOK, h.actions, api.Describe(actionsDoc))
	api.Register(k, "databases.transfers.create", http.StatusAccepted, h.createTransfer, api.Describe(transfersDoc))
	api.Register(k, "databases.transfers.read", http.StatusOK, h.readTransfer)
	api.Register(k, "databases.transfers.cancel", http.StatusOK, h.cancelTransfer)
	api.Register(k, "databases.transfers.part.upload", http.StatusOK, h.uploadPart, api.Describe("The body is one slice of the archive (`application/zip`, 1 byte to 4 MiB), part numbers 1 to partCount in order of the archive's bytes. Sending the same bytes again is a no-op; different bytes for a stored part are `409 conflict`."))
	api.Register(k, "databases.transfers.complete", http.StatusAccepted, h.complete, api.Describe("Closes an import: the worker checks the parts' total SHA-256, the zip's structure (no path traversal, no oversized or compressed-bomb entries, exactly `database.sqlite` and `manifest.json`) and `PRAGMA integrity_check`, then swaps the data in atomically (`completed`), or leaves the database unchanged (`failed`, the reason in `error`; `archive_invalid`)."))
	api.Register(k, "databases.transfers.archive", http.StatusOK, h.archive, api.Describe(archiveDoc), func(op *huma.Operation) {
		op.Responses = map[string]*huma.Response{"200": {
			Description: "The archive: a zip holding database.sqlite and manifest.json.",
			Headers: map[string]*huma.Param{
				"X-Content-Sha256":             {Description: "SHA-256 of the whole body, lowercase hex", Schema: &huma.Schema{Type: "string"}},
				"X-Service-Archive-Public-Key": {Description: "The signing key, ed25519:<base64> (also in /health as archivePublicKey)", Schema: &huma.Schema{Type: "string"}},
				"X-Service-Archive-Signature":  {Description: "Base64 Ed25519 signature over platform-api/archive/v1\\n<transferId>\\n<accountId>\\n<sha256 hex>\\n<size>", Schema: &huma.Schema{Type: "string"}},
				"Content-Length":               {Description: "Size in bytes", Schema: &huma.Schema{Type: "integer"}},
			},
			Content: map[string]*huma.MediaType{"application/zip": {Schema: &huma.Schema{Type: "string", Format: "binary"}}},
		}}
	})
	return nil
}

const queryDoc = "One read-only statement; SQLite decides read-only-ness (a read-only connection, an authorizer admitting reads only, and `sqlite3_stmt_readonly`), so any write, `ATTACH`, state-changing `PRAGMA` or extension load is `403 query_not_readonly`. Bounds: SQL ≤ 100,000 bytes, ≤ 100 parameters, `maxRows` ≤ 10,000 (default 1,000), rows ≤ 4 MiB encoded (beyond either, `truncated: true`), 5 s (`408 query_timeout`). Integers beyond 2^53 are strings, blobs `{\"base64\":…}`.\n\nCharged per row read (`meta.rowsRead`: rows produced plus rows stepped by full scans) at the `row_read` rate of `/pricing`, at most the operation's price; `402 insufficient_credits` before running when the balance cannot cover that maximum. The charge is in `X-Service-Credits-Charged`."

const actionsDoc = "Statements and named migrations in ONE transaction: all or nothing, one new `databaseVersion`; `ifVersion` applies the batch only at that version (`409 database_version_mismatch`). A `migrate` id runs once per database (`skipped: true` after). `BEGIN`, `COMMIT`, `ATTACH`, `VACUUM` are refused (`400 sql_error` with `errors[].location`). Another write in progress is `409 database_busy` with `Retry-After`; a write beyond the size cap is `413 database_full`.\n\nCharged per row read and per row written (`meta`) at the rates of `/pricing`, at most the operation's price; `402 insufficient_credits` before running when the balance cannot cover that maximum. Nothing is charged for a batch that fails. The charge is in `X-Service-Credits-Charged`."

const transfersDoc = "`{\"direction\":\"export\"}` snapshots the database (`VACUUM INTO`, writers go on) in the worker: `preparing` → `ready`, then download `…/archive`. `{\"direction\":\"import\",\"partCount\",\"sha256\"}` waits for the parts (`awaiting_parts`); `POST …/complete` validates and swaps them in. Events `database.transfer.completed` and `database.transfer.failed` tell when the worker is done."

const archiveDoc = "A `ready` export's archive, or the archive a `completed` import brought in. Verify it: SHA-256 of the body equals `X-Content-Sha256`, and `X-Service-Archive-Signature` verifies with the key published in `/health` over `platform-api/archive/v1\\n<transferId>\\n<accountId>\\n<sha256 hex>\\n<size>`. Other statuses are `409 conflict`."

// scope is where the request's database lives.
func scope(ctx context.Context) databases.Scope {
	p := api.PrincipalFrom(ctx)
	return databases.Scope{AccountID: p.Key().AccountID, ProjectID: p.ProjectID}
}

func (h *handlers) service() (*databases.Service, error) {
	if h.d.Databases == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Managed databases are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	return h.d.Databases, nil
}

func (h *handlers) worker() (queue.Queue, error) {
	if h.d.Queue == nil {
		return nil, apierr.New(apierr.ServiceUnavailable, "Database transfers are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	return h.d.Queue, nil
}

type provisionInput struct {
	Body struct{} `required:"false" doc:"Empty: {}"`
}

type databaseOutput struct {
	Location string `header:"Location" doc:"The database's URL"`
	Body     *databases.Database
}

func (h *handlers) provision(ctx context.Context, _ *provisionInput) (*databaseOutput, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	db, err := svc.Provision(ctx, scope(ctx))
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventDatabaseProvisioned, db)
	return &databaseOutput{Location: "/" + api.APIVersion + "/databases/account", Body: db}, nil
}

func (h *handlers) read(ctx context.Context, _ *struct{}) (*api.Body[*databases.Database], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	db, err := svc.Get(ctx, scope(ctx))
	if err != nil {
		return nil, err
	}
	return api.Reply(db), nil
}

type deleted struct {
	Status string `json:"status" enum:"deleted"`
}

func (h *handlers) deprovision(ctx context.Context, _ *struct{}) (*api.Body[deleted], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	db, err := svc.Get(ctx, scope(ctx))
	if err != nil {
		return nil, err
	}
	if err := svc.Deprovision(ctx, scope(ctx)); err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventDatabaseDeprovisioned, map[string]any{"id": db.ID, "status": "deleted"})
	return api.Reply(deleted{Status: "deleted"}), nil
}

type queryOutput struct {
	Charged string `header:"X-Service-Credits-Charged" doc:"Exact charge in credits"`
	Body    *databases.QueryResult
}

func (h *handlers) query(ctx context.Context, in *api.Body[databases.QueryRequest]) (*queryOutput, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	var res *databases.QueryResult
	charged, err := h.metered(ctx, "databases.query", func() (map[string]int64, error) {
		var err error
		if res, err = svc.Query(ctx, scope(ctx), in.Body); err != nil {
			return nil, err
		}
		return map[string]int64{catalog.UnitRowRead: res.Meta.RowsRead}, nil
	})
	if err != nil {
		return nil, err
	}
	return &queryOutput{Charged: creditText(charged), Body: res}, nil
}

type actionsOutput struct {
	Charged string `header:"X-Service-Credits-Charged" doc:"Exact charge in credits"`
	Body    *databases.ActionsResult
}

func (h *handlers) actions(ctx context.Context, in *api.Body[databases.ActionsRequest]) (*actionsOutput, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	req := in.Body
	req.CallID = api.CallID(ctx) // a retry after a crash is answered from the database, not run again
	var res *databases.ActionsResult
	charged, err := h.metered(ctx, "databases.actions", func() (map[string]int64, error) {
		var err error
		if res, err = svc.Actions(ctx, scope(ctx), req); err != nil {
			return nil, err
		}
		return map[string]int64{catalog.UnitRowRead: res.Meta.RowsRead, catalog.UnitRowWritten: res.Meta.RowsWritten}, nil
	})
	if err != nil {
		return nil, err
	}
	return &actionsOutput{Charged: creditText(charged), Body: res}, nil
}

func creditText(micro int64) string {
	return strconv.FormatFloat(float64(micro)/catalog.MicroPerCredit, 'f', -1, 64)
}

// metered runs a priced operation through the credits path of managed
// services: the key chain's credit limits reserve and the ledger holds the
// operation's maximum price before it runs (402 insufficient_credits, or
// 429, when they cannot), then the exact charge of the units it consumed
// is captured and the rest returned; a failed run releases both.
func (h *handlers) metered(ctx context.Context, opID string, run func() (map[string]int64, error)) (int64, error) {
	svc, _ := catalog.Lookup(ServiceID)
	op, ok := svc.Op(opID)
	if !ok {
		return 0, errors.New("databasesapi: " + opID + " is not in the catalogue")
	}
	p := api.PrincipalFrom(ctx)
	accountID := p.Key().AccountID
	detached := context.WithoutCancel(ctx)
	reservation, err := h.k.Limits().ReserveCredits(ctx, p.LimitOwners(), keys.LimitSelectors(opID, ServiceID, ""), op.PriceMicro)
	if err != nil {
		return 0, limits.APIError(err)
	}
	var hold *credits.Hold
	if call := api.CallID(ctx); call != "" {
		// Named by the call: a retry after a crash finds the first
		// attempt's hold, captured or not, and charges once.
		hold, err = h.ledger.HoldOnce(ctx, accountID, op.PriceMicro, opID, call, h.k.RequestTimeout())
	} else {
		hold, err = h.ledger.Hold(ctx, accountID, op.PriceMicro, opID, h.k.RequestTimeout())
	}
	if err != nil {
		_ = reservation.Release(detached)
		if errors.Is(err, credits.ErrInsufficient) {
			return 0, apierr.New(apierr.InsufficientCredits, "The balance cannot cover %s (up to %s credits). Top up with POST /v1/credits/x402/top-up.", opID, creditText(op.PriceMicro))
		}
		return 0, err
	}
	units, err := run()
	if err != nil {
		_ = hold.Release(detached)
		_ = reservation.Release(detached)
		return 0, err
	}
	if err := hold.Capture(detached, op.Charge(units)); err != nil {
		return 0, err
	}
	_ = reservation.Settle(detached, hold.Charged)
	return hold.Charged, nil
}

type transferIDInput struct {
	TransferID string `path:"transferId" maxLength:"64" doc:"Transfer id (dbt_…)"`
}

type transferOutput struct {
	Location string `header:"Location" doc:"The transfer's URL"`
	Body     *databases.Transfer
}

func transferURL(id string) string { return "/" + api.APIVersion + "/databases/transfers/" + id }

func (h *handlers) createTransfer(ctx context.Context, in *api.Body[databases.CreateTransferRequest]) (*transferOutput, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	q, err := h.worker()
	if err != nil {
		return nil, err
	}
	sc := scope(ctx)
	t, err := svc.CreateTransfer(ctx, sc, in.Body)
	if err != nil {
		return nil, err
	}
	if t.Status == databases.TransferPreparing {
		if err := svc.Enqueue(ctx, q, sc.AccountID, t.ID); err != nil {
			return nil, err
		}
	}
	return &transferOutput{Location: transferURL(t.ID), Body: t}, nil
}

func (h *handlers) readTransfer(ctx context.Context, in *transferIDInput) (*api.Body[*databases.Transfer], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	t, err := svc.GetTransfer(ctx, scope(ctx), in.TransferID)
	if err != nil {
		return nil, err
	}
	return api.Reply(t), nil
}

func (h *handlers) cancelTransfer(ctx context.Context, in *transferIDInput) (*api.Body[*databases.Transfer], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	t, err := svc.CancelTransfer(ctx, scope(ctx), in.TransferID)
	if err != nil {
		return nil, err
	}
	return api.Reply(t), nil
}

type partInput struct {
	TransferID string `path:"transferId" maxLength:"64" doc:"Transfer id (dbt_…)"`
	PartNumber int    `path:"partNumber" minimum:"1" maximum:"1000" doc:"1 to the transfer's partCount"`
	RawBody    []byte `contentType:"application/zip"`
}

type partResult struct {
	PartNumber int    `json:"partNumber"`
	SizeBytes  int    `json:"sizeBytes"`
	SHA256     string `json:"sha256" doc:"Hex SHA-256 of this part"`
}

func (h *handlers) uploadPart(ctx context.Context, in *partInput) (*api.Body[partResult], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	if err := svc.PutPart(ctx, scope(ctx), in.TransferID, in.PartNumber, in.RawBody); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(in.RawBody)
	return api.Reply(partResult{PartNumber: in.PartNumber, SizeBytes: len(in.RawBody), SHA256: hex.EncodeToString(sum[:])}), nil
}

type completeInput struct {
	TransferID string   `path:"transferId" maxLength:"64" doc:"Transfer id (dbt_…)"`
	Body       struct{} `required:"false" doc:"Empty: {}"`
}

func (h *handlers) complete(ctx context.Context, in *completeInput) (*transferOutput, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	q, err := h.worker()
	if err != nil {
		return nil, err
	}
	sc := scope(ctx)
	t, err := svc.CompleteImport(ctx, sc, in.TransferID)
	if err != nil {
		return nil, err
	}
	if err := svc.Enqueue(ctx, q, sc.AccountID, t.ID); err != nil {
		return nil, err
	}
	return &transferOutput{Location: transferURL(t.ID), Body: t}, nil
}

func (h *handlers) archive(ctx context.Context, in *transferIDInput) (*huma.StreamResponse, error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	rc, info, err := svc.Archive(ctx, scope(ctx), in.TransferID)
	if err != nil {
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		defer rc.Close()
		hc.SetHeader("Content-Type", "application/zip")
		hc.SetHeader("Content-Length", strconv.FormatInt(info.SizeBytes, 10))
		hc.SetHeader("Content-Disposition", `attachment; filename="`+in.TransferID+`.zip"`)
		hc.SetHeader("X-Content-Sha256", info.SHA256)
		hc.SetHeader("X-Service-Archive-Public-Key", info.PublicKey)
		hc.SetHeader("X-Service-Archive-Signature", info.Signature)
		hc.SetHeader("Cache-Control", "private, no-store")
		hc.SetStatus(http.StatusOK)
		if _, err := io.Copy(hc.BodyWriter(), rc); err != nil {
			api.Logger(ctx).Error("archive download interrupted", "transferId", in.TransferID, "error", err.Error())
		}
	}}, nil
}
