# mk/docs-gen.mk: the README and docs/ pages. The root Makefile includes it.
#
#   make docs-gen        rewrite the generated parts of docs/ (routes, webhook
#                        events, environment variables) from their sources
#   make docs-gen-check  generate them into .cache/docs-gen and diff with docs/
#   make newcomer-test   run the README's marked first requests as written
#                        against a fresh server (.ci/newcomer)
#   make readme-test     both (in `make test`)

docs_gen_saved_goal := $(.DEFAULT_GOAL)

GO ?= go

.PHONY: docs-gen docs-gen-check newcomer-test readme-test

docs-gen: ## rewrite the generated parts of docs/ from the code
	$(GO) run ./shared/internal/docgen

docs-gen-check: ## the generated parts of docs/ must be current
	@rm -rf .cache/docs-gen && mkdir -p .cache/docs-gen
	$(GO) run ./shared/internal/docgen -out .cache/docs-gen
	@diff -ru docs .cache/docs-gen || { echo "docs/ is stale: run make docs-gen and commit it"; exit 1; }

newcomer-test: ## the README's first requests, run as written against a fresh server
	.ci/newcomer

readme-test: docs-gen-check newcomer-test

.DEFAULT_GOAL := $(docs_gen_saved_goal)
