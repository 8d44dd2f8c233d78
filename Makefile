# One command to run it, one to test it. `make test` is what CI runs.
SHELL := /bin/bash
GO ?= go
ADDR ?= 127.0.0.1:8080
DATA_DIR ?= .data
# Every Lambda function: each directory of functions/ except the local server
# and the harness tests.
FUNCTIONS := $(filter-out local,$(notdir $(patsubst %/,%,$(wildcard functions/*/))))

.PHONY: run test build lint vet unit openapi openapi-check bench clean

# The server runs as make's own child, not under `go run`, which exits 1
# on Ctrl-C whatever its program does: the server exits 0 after a clean
# shutdown, so make reports no failed recipe.
LOCAL_BIN ?= .cache/bin/local

run: ## serve every group on embedded storage at $(ADDR)
	@mkdir -p $(dir $(LOCAL_BIN))
	$(GO) build -o $(LOCAL_BIN) ./functions/local
	ADDR=$(ADDR) DATA_DIR=$(DATA_DIR) exec $(LOCAL_BIN)

build: $(FUNCTIONS:%=build/%/bootstrap) ## cross-compile every function for provided.al2023 arm64

build/%/bootstrap: FORCE
	@mkdir -p $(dir $@)
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $@ ./functions/$*

FORCE:

# staticcheck, pinned and fetched from the module proxy like any module;
# `go run` keeps the built binary in the build cache, so only the first
# lint builds it. It is not a dependency of the module.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

# AWS's runtime interface emulator (aws-lambda-rie), which runs the function
# binaries in the Lambda tests and in `make stack`: pinned, fetched from the
# module proxy and built into .cache, not into the user's GOPATH.
# shared/harness/lambdarie.Version must agree (a test holds them together); the
# tests build the same path themselves when it is missing.
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE := .cache/tools/aws-lambda-rie@$(RIE_VERSION)/aws-lambda-rie

$(RIE):
	GOBIN=$(CURDIR)/$(@D) CGO_ENABLED=0 GOFLAGS= $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

lint: ## gofmt, go vet, staticcheck, and no binaries or large files in git
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	cd sdk/go && $(STATICCHECK) ./... ./sdktest/...
	.ci/check-tracked

# Everything that exists: lint, unit and conformance tests (embedded and,
# through .ci/with-moto, AWS adapters against moto_server or LocalStack),
# black-box tests against the real local server, the Lambda harness, the
# OpenAPI validation, the infrastructure tests, the deploy rehearsal of
# the synthesized template on the emulator, and a short run of the
# benchmark (bench-smoke, mk/bench.mk).
#
# The parts run side by side, TEST_JOBS at a time, the longest first,
# each part's output printed whole when it ends (TEST_SYNC=line prints it
# as it comes, interleaved): most of each part is
# waiting (on moto, on a browser, on a server's timers), not computing.
# Parts that share files run in order within one part: the synthesized
# template and build/ (the lint, the rehearsal and the benchmark's
# bootstraps), and the TypeScript SDK's node_modules and dist (its test
# and its packed tarball's test). make test fails when any part fails.
#
# go test runs TEST_GO_P packages at once against TEST_MOTO_SERVERS moto
# servers, each package on one of them (.ci/moto-pick): a moto serves one
# request at a time, and one would queue every package's calls.
TEST_JOBS ?= 3
TEST_GO_P ?= 2
TEST_MOTO_SERVERS ?= 2
TEST_SYNC ?= target
TEST_PARTS := test-go lint test-templates console-test test-sdk-ts readme-test docs-test sdk-go-test \
	contracts-check openapi-check openapi-lint standardwebhooks-test

test:
	+$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=$(TEST_SYNC) $(TEST_PARTS)

.PHONY: test-go test-templates test-sdk-ts
test-go:
	MOTO_SERVERS=$(TEST_MOTO_SERVERS) .ci/with-moto $(GO) test -exec $(CURDIR)/.ci/moto-pick -p $(TEST_GO_P) -count=1 -timeout 20m ./...

test-templates:
	$(MAKE) lint-templates
	$(MAKE) rehearse-synthesized
	$(MAKE) bench-smoke

test-sdk-ts:
	$(MAKE) sdk-ts-test
	$(MAKE) sdk-ts-pack-test

.PHONY: example-group-test
example-group-test: ## the example group's test with both SDKs regenerated and tested against a server, and the document linted (minutes; not in make test)
	EXAMPLE_GROUP_SDKS=1 $(GO) test -count=1 -timeout 40m -v -run TestAnExampleGroupNeedsOnlyTheListedPlaces ./shared/internal/grouptemplate

openapi: ## regenerate the OpenAPI document the public function embeds
	$(GO) run ./functions/local print-openapi > shared/groups/public/publicapi/openapi.json

openapi-check: ## the generated document must pass openapi-spec-validator
	@python3 -c 'import openapi_spec_validator' 2>/dev/null || python3 -m pip install --quiet openapi-spec-validator
	@mkdir -p .cache
	$(GO) run ./functions/local print-openapi > .cache/openapi.json
	python3 -m openapi_spec_validator .cache/openapi.json

clean:
	rm -rf build cdk.out .cache

-include mk/*.mk
