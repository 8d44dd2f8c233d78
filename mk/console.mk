# mk/console.mk: the browser console at /console (shared/console, docs/console.md).
# The root Makefile includes it.
#
#   make console-build  npm ci (pinned devDependencies), type-check, and bundle
#                       src/ into the committed dist/ with esbuild
#   make console-check  bundle into .cache/console/dist and diff with dist/:
#                       fails when dist/ is stale
#   make console-test   console-check, then the browser test: Playwright
#                       (playwright-core, pinned) drives Debian's Chromium
#                       (installed with apt-get where missing) against a
#                       freshly started local server; screenshots at 1280 and
#                       390 px wide land in .cache/console
#
# npm installs into a project-local cache, as mk/sdk-ts.mk does; Playwright
# downloads no browser of its own.

console_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
CHROMIUM ?= chromium
CONSOLE := shared/console
CONSOLE_TMP := $(CURDIR)/.cache/console
CONSOLE_NPM = cd $(CONSOLE) && npm_config_cache=$(CURDIR)/.cache/npm npm_config_update_notifier=false \
	npm_config_fund=false npm_config_audit=false PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

.PHONY: console-deps console-build console-check console-test

console-deps:
	$(CONSOLE_NPM) npm ci --silent

console-build: console-deps ## bundle the console into shared/console/dist (committed)
	$(CONSOLE_NPM) npx tsc -p tsconfig.json
	$(CONSOLE_NPM) node build.mjs dist

console-check: console-deps ## the committed console bundle must be current
	$(CONSOLE_NPM) npx tsc -p tsconfig.json
	@rm -rf $(CONSOLE_TMP)/dist && mkdir -p $(CONSOLE_TMP)
	$(CONSOLE_NPM) node build.mjs $(CONSOLE_TMP)/dist
	@diff -r $(CONSOLE)/dist $(CONSOLE_TMP)/dist >/dev/null || { echo "shared/console/dist is stale: run make console-build and commit it"; exit 1; }

console-test: console-check chromium ## the console in headless Chromium against a fresh local server
	$(GO) build -o $(CONSOLE_TMP)/local ./functions/local
	$(CONSOLE_NPM) CONSOLE_LOCAL_BIN=$(CONSOLE_TMP)/local CHROMIUM_PATH=$$(command -v $(CHROMIUM)) \
		CONSOLE_SCREENSHOTS=$(CONSOLE_TMP) node --test test/*.test.mjs

.DEFAULT_GOAL := $(console_saved_goal)
