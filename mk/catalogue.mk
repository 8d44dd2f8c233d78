# mk/catalogue.mk: the whole service and webhook event catalogues. The root
# Makefile includes it.
#
#   make catalogue        rewrite shared/base/catalog/zz_services.go and
#                         shared/groups/webhooks/zz_events.go from what each group
#                         declares (api.Group.Services and Events); run it
#                         before make openapi and make docs-gen, which read them
#   make catalogue-check  fail when they differ from the declarations, or when
#                         two declarations name one service, operation or
#                         event (the same test runs in `make test`)

catalogue_saved_goal := $(.DEFAULT_GOAL)

GO ?= go

.PHONY: catalogue catalogue-check

catalogue: ## rewrite the generated service and event catalogues from the groups
	$(GO) run ./shared/internal/catalogen

catalogue-check: ## the generated catalogues must be what the groups declare
	$(GO) test -count=1 ./shared/internal/catalogen

.DEFAULT_GOAL := $(catalogue_saved_goal)
