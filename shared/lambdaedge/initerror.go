package lambdaedge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"time"
)

// initErrorType is the errorType Lambda shows for a failed init.
const initErrorType = "Runtime.InitError"

// reportInitError posts err to the Runtime API's init/error endpoint, which
// aws-lambda-go does not do for failures that happen before lambda.Start.
// It is best effort: the process is about to exit, and the JSON log line
// already carries the cause.
func reportInitError(err error) {
	api := os.Getenv("AWS_LAMBDA_RUNTIME_API")
	if api == "" {
		return
	}
	body, _ := json.Marshal(map[string]any{
		"errorMessage": err.Error(), "errorType": initErrorType, "stackTrace": []string{},
	})
	req, rerr := http.NewRequest(http.MethodPost, "http://"+api+"/2018-06-01/runtime/init/error", bytes.NewReader(body))
	if rerr != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Lambda-Runtime-Function-Error-Type", initErrorType)
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, derr := client.Do(req); derr == nil {
		resp.Body.Close()
	}
}
