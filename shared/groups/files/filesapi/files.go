// Package filesapi is the files endpoint group (docs/files.md):
// checksummed files of the account and the request's project,
// uploaded as the raw request body and streamed back by the API.
package filesapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/store"
	"platformapi/shared/api"
	"platformapi/shared/base/apierr"
	"platformapi/shared/domain/idempotency"
	"platformapi/shared/groups/files"
)

// Deps are what the group needs.
type Deps struct {
	Store store.Store
	// Bucket holds the files' bytes; nil: every operation answers 503.
	Bucket blob.Bucket
	// Quota is what each project (and the account level) may hold; zero is
	// files.DefaultQuota.
	Quota files.Quota
}

// Environment variables of the per-project quota (QuotaFromEnv).
const (
	EnvQuotaFiles = "FILES_QUOTA_FILES"
	EnvQuotaBytes = "FILES_QUOTA_BYTES"
)

// QuotaFromEnv reads the per-project quota from FILES_QUOTA_FILES and
// FILES_QUOTA_BYTES as getenv reads them; an unset variable keeps
// files.DefaultQuota's value.
func QuotaFromEnv(getenv func(string) string) (files.Quota, error) {
	q := files.DefaultQuota
	for _, v := range []struct {
		name string
		dst  *int64
	}{{EnvQuotaFiles, &q.MaxFiles}, {EnvQuotaBytes, &q.MaxBytes}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return files.Quota{}, fmt.Errorf("filesapi: %s must be a positive integer, not %q", v.name, s)
		}
		*v.dst = n
	}
	return q, nil
}

type handlers struct {
	k     *api.Kernel
	d     Deps
	files *files.Repo
}

// Register adds the group's operations to the kernel.
//
// The repository writes through idempotency.Deferring: an upload's record
// and quota, and a deletion's, commit in one transaction with the stored
// idempotent response. An upload's object is written before that; when the
// commit then fails (a racing upload took the last of the quota), the
// kernel offers no hook to undo it, so the object is left to files.Sweep,
// which removes objects without a record once they are an hour old.
func Register(k *api.Kernel, d Deps) error {
	h := &handlers{k: k, d: d, files: files.NewRepo(files.Config{
		Store: idempotency.Deferring(d.Store), Bucket: d.Bucket, Now: k.Now, Quota: d.Quota,
	})}
	api.Register(k, "files.list", http.StatusOK, h.list)
	api.Register(k, "files.create", http.StatusCreated, h.create, api.Describe(createDoc), func(op *huma.Operation) {
		op.RequestBody = &huma.RequestBody{Description: "The file's bytes, 1 byte to 4 MiB, sent in any media type: application/octet-stream is documented, and whatever Content-Type is sent is kept and answered on download."}
	})
	api.Register(k, "files.read", http.StatusOK, h.read)
	api.Register(k, "files.content.read", http.StatusOK, h.download, api.Describe(downloadDoc), documentContent)
	api.Register(k, "files.delete", http.StatusOK, h.delete, api.Describe("Deletes the record and gives its size back to the quota; the bytes are removed once that has committed. Answers the record with `\"status\": \"deleted\"`; afterwards the file is `404`."))
	return nil
}

const createDoc = "Uploads the raw request body (1 byte to 4 MiB, any media type: `Content-Type` is kept as sent and answered on download). " +
	"The service computes the SHA-256 while storing the bytes; with `X-Content-Sha256` a different body is `400 checksum_mismatch` and nothing is stored. " +
	"The file belongs to the account and the request's project (a project-bound key's, or `X-Service-Project`'s; the account level otherwise). " +
	"Each project holds a bounded number of files and bytes: more is `409 quota_exceeded`. Answers `201` with the record and `Location`; emits `file.created`."

const downloadDoc = "Streams the bytes through the API, never as a redirect to a presigned URL, so a revoked key stops at once. " +
	"`Content-Type` is the upload's, `X-Content-Sha256` the SHA-256 recorded at upload (bytes that no longer match it are never served), " +
	"`ETag` the same digest; `Range` (one range) answers `206` with `Content-Range`, an unsatisfiable range `416`."

// documentContent documents the raw response of a download.
func documentContent(op *huma.Operation) {
	str := &huma.Schema{Type: "string"}
	op.Responses = map[string]*huma.Response{
		"200": {
			Description: "The file's bytes, in the media type it was uploaded with.",
			Headers: map[string]*huma.Param{
				"Content-Type":           {Description: "The upload's Content-Type", Schema: str},
				"Content-Length":         {Description: "Size in bytes", Schema: &huma.Schema{Type: "integer"}},
				"X-Content-Sha256":       {Description: "SHA-256 of the whole file, lowercase hex", Schema: str},
				"ETag":                   {Description: "The SHA-256, quoted: a strong validator for If-None-Match and If-Range", Schema: str},
				"Content-Disposition":    {Description: "attachment; filename=\"ASCII stand-in\"; filename*=UTF-8''exact name (RFC 6266, RFC 8187)", Schema: str},
				"X-Content-Type-Options": {Description: "nosniff", Schema: str},
				"Accept-Ranges":          {Description: "bytes", Schema: str},
			},
			Content: map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: "string", Format: "binary"}}},
		},
		"206": {
			Description: "The requested byte range (Range: bytes=…).",
			Headers: map[string]*huma.Param{
				"Content-Range":    {Description: "bytes first-last/size", Schema: str},
				"X-Content-Sha256": {Description: "SHA-256 of the whole file, lowercase hex", Schema: str},
			},
			Content: map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: "string", Format: "binary"}}},
		},
		"416": {
			Description: "The range lies outside the file; Content-Range is bytes */size.",
			Headers:     map[string]*huma.Param{"Content-Range": {Description: "bytes */size", Schema: str}},
		},
	}
}

// scope is the caller's account and project: the only files it sees.
func scope(ctx context.Context) (accountID, projectID string) {
	p := api.PrincipalFrom(ctx)
	return p.Key().AccountID, p.ProjectID
}

func (h *handlers) available() error {
	if h.d.Bucket == nil {
		return apierr.New(apierr.ServiceUnavailable, "Files are not available on this deployment.").WithHeader("Retry-After", "3600")
	}
	return nil
}

// uploadInput is the raw body and its headers. Content-Type is read by
// Resolve rather than declared, since OpenAPI ignores a header parameter
// of that name.
type uploadInput struct {
	FileName    string `header:"X-File-Name" required:"true" doc:"The file's name, 1–255 bytes decoded: printable ASCII, or RFC 8187 UTF-8''percent-encoded; no control characters, / or \\" example:"UTF-8''r%C3%A9sum%C3%A9.pdf"`
	SHA256      string `header:"X-Content-Sha256" doc:"Expected SHA-256 of the body, 64 hex digits: a different body is 400 checksum_mismatch and nothing is stored"`
	Purpose     string `header:"X-Service-File-Purpose" doc:"Your label for the file, [a-z0-9][a-z0-9._-]{0,63}; GET /files?purpose= filters on it"`
	RawBody     []byte `contentType:"application/octet-stream" doc:"The file's bytes, 1 to 4 MiB, in any media type"`
	contentType string
}

// Resolve reads the upload's media type.
func (in *uploadInput) Resolve(ctx huma.Context) []error {
	in.contentType = ctx.Header("Content-Type")
	return nil
}

type createOutput struct {
	Location string `header:"Location" doc:"The file's record"`
	SHA256   string `header:"X-Content-Sha256" doc:"SHA-256 of the stored bytes, lowercase hex"`
	Body     *files.File
}

func (h *handlers) create(ctx context.Context, in *uploadInput) (*createOutput, error) {
	if err := h.available(); err != nil {
		return nil, err
	}
	u, err := parseUpload(in)
	if err != nil {
		return nil, err
	}
	accountID, projectID := scope(ctx)
	f, err := h.files.Create(ctx, accountID, projectID, bytes.NewReader(in.RawBody), u)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventFileCreated, f)
	return &createOutput{Location: "/" + api.APIVersion + "/files/" + f.ID, SHA256: f.SHA256, Body: f}, nil
}

// parseUpload checks the headers of an upload with the domain's parsers.
func parseUpload(in *uploadInput) (files.Upload, error) {
	var u files.Upload
	var err error
	if u.Filename, err = files.ParseFileName(in.FileName); err != nil {
		return u, err
	}
	if u.SHA256, err = files.ParseSHA256(in.SHA256); err != nil {
		return u, err
	}
	if u.Purpose, err = files.ParsePurpose(in.Purpose); err != nil {
		return u, err
	}
	u.ContentType, err = files.ParseContentType(in.contentType)
	return u, err
}

type listInput struct {
	Purpose string `query:"purpose" maxLength:"64" doc:"Only files uploaded with this X-Service-File-Purpose"`
	api.ListInput
}

// list lists the scope's files, newest first.
func (h *handlers) list(ctx context.Context, in *listInput) (*api.Body[api.Page[*files.File]], error) {
	if err := h.available(); err != nil {
		return nil, err
	}
	accountID, projectID := scope(ctx)
	list, next, err := h.files.List(ctx, accountID, projectID, in.Purpose, in.Limit, in.Cursor)
	if err != nil {
		return nil, err
	}
	return api.Reply(api.NewPage(list, next)), nil
}

type fileIDInput struct {
	FileID string `path:"fileId" maxLength:"64" doc:"File id (file_…)"`
}

func (h *handlers) read(ctx context.Context, in *fileIDInput) (*api.Body[*files.File], error) {
	if err := h.available(); err != nil {
		return nil, err
	}
	accountID, projectID := scope(ctx)
	f, err := h.files.Get(ctx, accountID, projectID, in.FileID)
	if err != nil {
		return nil, err
	}
	return api.Reply(f), nil
}

// download streams the bytes. The repository has read and verified them
// whole (at most 4 MiB), so http.ServeContent answers Range, If-Range and
// If-None-Match over them exactly as the standard library defines.
func (h *handlers) download(ctx context.Context, in *fileIDInput) (*huma.StreamResponse, error) {
	if err := h.available(); err != nil {
		return nil, err
	}
	accountID, projectID := scope(ctx)
	f, data, err := h.files.Open(ctx, accountID, projectID, in.FileID)
	if err != nil {
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		r, w := humago.Unwrap(hc)
		hdr := w.Header()
		hdr.Set("Content-Type", f.ContentType)
		hdr.Set("X-Content-Sha256", f.SHA256)
		hdr.Set("ETag", `"`+f.SHA256+`"`)
		hdr.Set("Content-Disposition", files.ContentDisposition(f.Filename))
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Cache-Control", "private, no-store")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}}, nil
}

func (h *handlers) delete(ctx context.Context, in *fileIDInput) (*api.Body[*files.File], error) {
	if err := h.available(); err != nil {
		return nil, err
	}
	accountID, projectID := scope(ctx)
	f, err := h.files.Delete(ctx, accountID, projectID, in.FileID)
	if err != nil {
		return nil, err
	}
	h.k.Publish(ctx, eventFileDeleted, f)
	return api.Reply(f), nil
}
