package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/shared/adapters/blob"
	"platformapi/shared/adapters/envelope"
	"platformapi/shared/adapters/queue"
	"platformapi/shared/adapters/store"
	"platformapi/shared/base/apierr"
)

// unavailableRetryAfter is what we ask clients to wait when a backend
// throttled or failed.
const unavailableRetryAfter = 2

// unavailableDetail is the answer to a backend's failure anywhere in a
// request. It may come after part of the operation took effect (a service
// ran, and only its capture failed), so it never says nothing changed: it
// says what makes a retry safe. A retry with the same Idempotency-Key
// finishes or replays what took effect; a retry under a new key may do it
// again.
const unavailableDetail = "A backing service is temporarily unavailable. Retry with the same Idempotency-Key: what this request already did is then completed or replayed, never done twice (a new key may do it again)."

// ToAPIError classifies any error into a client-visible one. Backend
// unavailability becomes a 503 with Retry-After; anything unexpected is a
// 500 whose cause is logged, never shown.
func ToAPIError(err error) *apierr.Error {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, blob.ErrUnavailable) || errors.Is(err, queue.ErrUnavailable) || errors.Is(err, envelope.ErrUnavailable) {
		out := apierr.New(apierr.ServiceUnavailable, unavailableDetail)
		out.Cause = err
		return out.WithHeader("Retry-After", strconv.Itoa(unavailableRetryAfter))
	}
	return apierr.Wrap(err)
}

// logFailure logs what the client of a 5xx does not see. A failure on a
// cancelled context also says why the request's context ended: answered
// already (errRequestEnded), its deadline, or the server's own
// cancellation (a client gone), or that it had not, so that the context
// cancelled was not the request's.
func logFailure(ctx context.Context, code apierr.Code, err error) {
	attrs := []any{slog.String("code", string(code)), slog.String("error", err.Error())}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		cause := "none: the request's context is live"
		st := stateFrom(ctx)
		switch {
		case st != nil && st.ctx.ended.Load():
			cause = errRequestEnded.Error()
		case ctx.Err() != nil:
			cause = ctx.Err().Error()
			if c := context.Cause(ctx); c != nil {
				cause = c.Error()
			}
		}
		attrs = append(attrs, slog.String("contextCause", cause))
	}
	Logger(ctx).Error("request failed", attrs...)
}

// WriteProblem writes err as problem+json.
func WriteProblem(w http.ResponseWriter, r *http.Request, err error) {
	e := ToAPIError(err)
	out := *e
	out.RequestID = RequestID(r.Context())
	noteProblem(r.Context(), out.Code)
	if out.Status >= 500 && out.Cause != nil {
		logFailure(r.Context(), out.Code, out.Cause)
	}
	for k, v := range out.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(out.Status)
	_ = json.NewEncoder(w).Encode(out)
}

// hookHumaErrors makes huma's own errors (validation, decoding, size and
// content-type problems) use the catalogue. Huma reports validation failures
// as 422; the API answers 400 validation_failed. Huma's error constructors
// are process-wide variables, so they are set once, by the first kernel.
var hookHumaErrors = sync.OnceFunc(func() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		code := apierr.Internal
		switch status {
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			code = apierr.ValidationFailed
		case http.StatusRequestEntityTooLarge:
			code = apierr.PayloadTooLarge
		case http.StatusUnsupportedMediaType:
			code = apierr.UnsupportedMediaType
		case http.StatusNotAcceptable:
			code = apierr.NotAcceptable
		case http.StatusNotFound:
			code = apierr.NotFound
		}
		e := apierr.New(code, "%s", msg)
		if code == apierr.Internal {
			e.Detail = "The server failed to complete the request."
		}
		for _, err := range errs {
			if err == nil {
				continue
			}
			var d *huma.ErrorDetail
			if errors.As(err, &d) {
				e.Errors = append(e.Errors, apierr.FieldError{Location: d.Location, Message: d.Message})
			} else if code != apierr.Internal {
				e.Errors = append(e.Errors, apierr.FieldError{Location: "body", Message: err.Error()})
			}
		}
		return e
	}
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		var e *apierr.Error
		if status == http.StatusInternalServerError && len(errs) == 1 && errs[0] != nil {
			// A handler's own failure: classify it (a backend outage is a
			// 503 with Retry-After) and log what the client will not see.
			e = ToAPIError(errs[0])
			if e.Status >= 500 {
				logFailure(ctx.Context(), e.Code, errs[0])
			}
			cp := *e
			e = &cp
		} else {
			e = huma.NewError(status, msg, errs...).(*apierr.Error)
		}
		e.RequestID = RequestID(ctx.Context())
		return e
	}
})

// problemTransformer stamps the request id on errors returned by handlers,
// which huma writes itself, and sets their headers (Retry-After, ...).
func problemTransformer(ctx huma.Context, _ string, v any) (any, error) {
	e, ok := v.(*apierr.Error)
	if !ok {
		return v, nil
	}
	cp := *e
	if cp.RequestID == "" {
		cp.RequestID = RequestID(ctx.Context())
	}
	noteProblem(ctx.Context(), cp.Code)
	for k, val := range cp.Headers {
		ctx.SetHeader(k, val)
	}
	return &cp, nil
}
