# mk/sdk-go.mk: the Go SDK in sdk/go, a module of its own that
# needs nothing beyond the standard library. The root Makefile includes it;
# go.work at the root develops it beside the server, whose `go test ./...`
# does not descend into other modules, hence these steps.
#
#   make sdk-go-test      the generated files must be current, the SDK must
#                         depend on the standard library only, then vet and
#                         test the SDK module and the sdktest module (the
#                         black-box tests against the real local server)
#   make sdk-go-generate  regenerate sdk/go/zz_generated.go (wire types and
#                         route table) and sdk/go/zz_operations.go (the
#                         Client's methods but those written by hand, and
#                         Operations) from shared/groups/public/publicapi/openapi.json
#   make sdk-go-check     only the "generated files are current" check
#   make sdk-go-deps      only the "standard library only" check

# Keep the root Makefile's default goal: an included file must not steal it.
sdk_go_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
SDK_GO := sdk/go
SDK_GO_MODULE := github.com/platformapi/platformapi/sdk/go
SDK_GO_DOC := shared/groups/public/publicapi/openapi.json
SDK_GO_TMP := $(CURDIR)/.cache/sdk-go

.PHONY: sdk-go-test sdk-go-generate sdk-go-check sdk-go-deps

sdk-go-generate:
	cd $(SDK_GO) && $(GO) run ./internal/gen -in ../../$(SDK_GO_DOC) -out zz_generated.go -methods zz_operations.go

# Regenerates into temporary files and diffs: fails when the document (or a
# hand-written method) changed and `make sdk-go-generate` was not run.
sdk-go-check:
	@mkdir -p $(SDK_GO_TMP)
	cd $(SDK_GO) && $(GO) run ./internal/gen -in ../../$(SDK_GO_DOC) -out $(SDK_GO_TMP)/zz_generated.go -methods $(SDK_GO_TMP)/zz_operations.go
	diff -u $(SDK_GO)/zz_generated.go $(SDK_GO_TMP)/zz_generated.go
	diff -u $(SDK_GO)/zz_operations.go $(SDK_GO_TMP)/zz_operations.go

# The module requires no other module, and no package it builds (the SDK,
# its generator, its examples) imports one outside the standard library.
sdk-go-deps:
	@mods=$$(cd $(SDK_GO) && GOWORK=off $(GO) list -m all); \
	if [ "$$mods" != "$(SDK_GO_MODULE)" ]; then echo "sdk/go requires other modules:"; echo "$$mods"; exit 1; fi
	@pkgs=$$(cd $(SDK_GO) && GOWORK=off $(GO) list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./... | grep -v '^$(SDK_GO_MODULE)'); \
	if [ -n "$$pkgs" ]; then echo "sdk/go imports beyond the standard library:"; echo "$$pkgs"; exit 1; fi
	@echo "sdk/go: $$(cd $(SDK_GO) && GOWORK=off $(GO) list -deps . | wc -l) packages, all of the standard library"

sdk-go-test: sdk-go-check sdk-go-deps
	cd $(SDK_GO) && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd $(SDK_GO)/sdktest && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

.DEFAULT_GOAL := $(sdk_go_saved_goal)
