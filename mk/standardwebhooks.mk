# mk/standardwebhooks.mk: webhook deliveries verified by the Standard Webhooks
# library itself. The root Makefile includes it.
#
#   make standardwebhooks-test   npm ci the pinned `standardwebhooks` package
#                                into shared/groups/webhooks/testdata/standardwebhooks,
#                                then deliver real events to a node receiver on
#                                loopback that verifies them with it
#
# npm installs through a project-local cache, as mk/sdk-ts.mk does.

# Keep the root Makefile's default goal: an included file must not steal it.
swh_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
SWH_DIR := shared/groups/webhooks/testdata/standardwebhooks
SWH_NPM = cd $(SWH_DIR) && npm_config_cache=$(CURDIR)/.cache/npm npm_config_update_notifier=false \
	npm_config_fund=false npm_config_audit=false

.PHONY: standardwebhooks-test

standardwebhooks-test:
	$(SWH_NPM) npm ci --silent
	STANDARDWEBHOOKS_RECEIVER=$(CURDIR)/$(SWH_DIR)/receiver.mjs $(GO) test -count=1 -run TestStandardWebhooksLibraryVerifiesDeliveries ./shared/groups/webhooks/

.DEFAULT_GOAL := $(swh_saved_goal)
