// Package sdktest holds the Go SDK's black-box tests: they run the SDK
// against the real local server (through the server's apitest package) and
// show a go-ethereum Signer for x402 top-ups. It is a module of its own so
// that the SDK module needs nothing beyond the standard library.
package sdktest
