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
# shared/lambdarie.Version must agree (a test holds them together); the
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
test: lint
	.ci/with-moto $(GO) test -count=1 -timeout 20m ./...
	$(MAKE) openapi-check
	$(MAKE) openapi-lint
	$(MAKE) contracts-check
	$(MAKE) docs-test
	$(MAKE) console-test
	$(MAKE) readme-test
	$(MAKE) lint-templates
	$(MAKE) rehearse-synthesized
	$(MAKE) sdk-ts-test
	$(MAKE) sdk-ts-pack-test
	$(MAKE) sdk-go-test
	$(MAKE) standardwebhooks-test
	$(MAKE) bench-smoke

openapi: ## regenerate the OpenAPI document the public function embeds
	$(GO) run ./functions/local print-openapi > shared/api/publicapi/openapi.json

openapi-check: ## the generated document must pass openapi-spec-validator
	@python3 -c 'import openapi_spec_validator' 2>/dev/null || python3 -m pip install --quiet openapi-spec-validator
	@mkdir -p .cache
	$(GO) run ./functions/local print-openapi > .cache/openapi.json
	python3 -m openapi_spec_validator .cache/openapi.json

clean:
	rm -rf build cdk.out .cache

-include mk/*.mk
