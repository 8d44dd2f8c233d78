# mk/docs.mk: the /docs reference page. The root Makefile includes it.
#
#   make docs-assets  fetch the pinned Redoc bundle from npm into the public
#                     function (committed, so `go build` needs no npm)
#   make docs-test    render /docs in headless Chromium (installed with
#                     apt-get where missing); every operation must be on the
#                     page; the screenshot lands in .cache/docs.png

docs_saved_goal := $(.DEFAULT_GOAL)

# Pinned: TestTheBundledRendererIsThePinnedVersion reads this line and fails
# when the committed bundle is another version.
REDOC_VERSION := 2.5.4
DOCS_NPM_CACHE ?= $(CURDIR)/.cache/npm
DOCS_ASSETS := shared/groups/public/publicapi/assets
CHROMIUM ?= chromium

.PHONY: docs-assets docs-test chromium

docs-assets: ## fetch the pinned Redoc bundle into shared/groups/public/publicapi/assets
	@mkdir -p .cache/redoc
	cd .cache/redoc && npm_config_cache=$(DOCS_NPM_CACHE) npm_config_update_notifier=false \
		npm pack --silent redoc@$(REDOC_VERSION) >/dev/null
	rm -rf .cache/redoc/package
	tar -xzf .cache/redoc/redoc-$(REDOC_VERSION).tgz -C .cache/redoc
	gzip -9 -n -c .cache/redoc/package/bundles/redoc.standalone.js > $(DOCS_ASSETS)/redoc.standalone.js.gz
	cp .cache/redoc/package/bundles/redoc.standalone.js.LICENSE.txt $(DOCS_ASSETS)/

# chromium installs the browser where it is missing: one prerequisite of
# both browser tests, so that make -j runs one apt-get, not two racing for
# its lock.
chromium:
	@command -v $(CHROMIUM) >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; }

docs-test: chromium ## render /docs in headless Chromium and check every operation is on it
	@mkdir -p .cache
	CHROMIUM=$(CHROMIUM) DOCS_SCREENSHOT=$(CURDIR)/.cache/docs.png \
		$(GO) test -count=1 -tags browser -run TestTheDocsPageRendersEveryOperation ./shared/groups/public/publicapi

.DEFAULT_GOAL := $(docs_saved_goal)
