# mk/openapi-lint.mk: the OpenAPI document's lint and its examples. The root
# Makefile includes it.
#
#   make openapi-lint      redocly lint, recommended-strict (mk/redocly.yaml):
#                          0 errors and 0 warnings, or it fails
#   make openapi-examples  run the black-box tests capturing every exchange,
#                          then take one real body per request and response
#                          schema into shared/api/openapi_examples.json
#                          (then `make openapi sdk-ts-generate`)
#
# The CLI is pinned exactly and installed by npx into the project-local npm
# cache, as mk/sdk-ts.mk and mk/docs.mk do: nothing global.

openapi_lint_saved_goal := $(.DEFAULT_GOAL)

REDOCLY_VERSION := 2.77.0
OPENAPI_NPM_CACHE ?= $(CURDIR)/.cache/npm
OPENAPI_CAPTURE := $(CURDIR)/.cache/examples-capture
REDOCLY = npm_config_cache=$(OPENAPI_NPM_CACHE) npm_config_update_notifier=false \
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	npx --yes @redocly/cli@$(REDOCLY_VERSION)

.PHONY: openapi-lint openapi-examples

openapi-lint: ## redocly lint (recommended-strict) of the generated document
	@mkdir -p .cache
	$(GO) run ./functions/local print-openapi > .cache/openapi-lint.json
	$(REDOCLY) lint --config mk/redocly.yaml --max-problems 1000 .cache/openapi-lint.json 2>&1 | tee .cache/openapi-lint.txt
	@grep -q 'Your API description is valid' .cache/openapi-lint.txt && ! grep -Eq '[0-9]+ warnings?\b' .cache/openapi-lint.txt

openapi-examples: ## capture real bodies from the black-box tests as the document's examples
	rm -rf $(OPENAPI_CAPTURE) && mkdir -p $(OPENAPI_CAPTURE)
	APITEST_CAPTURE_DIR=$(OPENAPI_CAPTURE) $(GO) test -count=1 -p 1 ./shared/api/... ./shared/groups/...
	$(GO) run ./shared/internal/examplegen -captured $(OPENAPI_CAPTURE) -out shared/api/openapi_examples.json

.DEFAULT_GOAL := $(openapi_lint_saved_goal)
