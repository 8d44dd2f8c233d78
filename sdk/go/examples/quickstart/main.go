// Quickstart redeems a first-key credit token (TOKEN) at the API (BASE_URL,
// default http://127.0.0.1:8080) and makes the first calls with the new
// account's root key.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	platform "github.com/platformapi/platformapi/sdk/go"
)

func main() {
	ctx := context.Background()
	baseURL := os.Getenv("BASE_URL")
	if baseURL == "" {
		baseURL = "http://127.0.0.1:8080"
	}
	c := platform.New(platform.Options{BaseURL: baseURL})

	// Redeem the credit token: a new account and its root key (the secret is shown once).
	first := must(c.CreateAPIKey(ctx, platform.CreateKeyRequest{Label: "root"}, platform.WithCreditToken(os.Getenv("TOKEN"))))
	root := c.WithAPIKey(first.Secret)

	bal := must(root.Balance(ctx))
	fmt.Println("balance:", bal.Balance, bal.Unit)

	// A narrower child key: only memory search, 60 requests a minute.
	perMinute := int64(60)
	child := must(root.CreateAPIKey(ctx, platform.CreateKeyRequest{Label: "search-worker",
		Scopes: []string{"services:invoke"}, AllowedServices: []string{"cloud-superbrain"},
		AllowedOperations: []string{"services.invoke.cloud-superbrain.memory.search"},
		Limits:            map[string]platform.Limit{"*": {RequestsPerMinute: &perMinute}}}))
	fmt.Println("child key:", child.ID)

	// Call a managed service. The Idempotency-Key is generated once and reused on every retry.
	input, _ := json.Marshal(map[string]string{"text": "the deploy key rotates every 90 days"})
	inv := must(root.Invoke(ctx, "cloud-superbrain", platform.InvokeRequest{OperationID: "memory.write", Input: input}))
	fmt.Println("charged:", inv.ChargedCredits, "result:", string(inv.Result))

	// Create a project, then read every page of the list (it follows nextCursor).
	must(root.CreateProject(ctx, platform.CreateProjectRequest{Name: "shop"}))
	for p, err := range root.AllProjects(ctx, platform.ListOptions{Limit: 50}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("project:", p.ID, p.Name)
	}
}

// must stops at a failed call: a Go error is a transport failure that
// outlived the retries; an API failure is Result.Error (status, code,
// detail, field errors, request id).
func must[T any](r platform.Result[T], err error) T {
	if err != nil {
		log.Fatal(err)
	}
	if !r.OK {
		log.Fatalf("%d %s: %s (request %s)", r.Status, r.Error.Code, r.Error.Detail, r.Error.RequestID)
	}
	return r.Value
}
