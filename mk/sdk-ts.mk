# mk/sdk-ts.mk: the TypeScript SDK in sdk/typescript. The root Makefile
# includes it.
#
#   make sdk-ts-test      npm ci (pinned devDependencies), build, type checks,
#                         the generated files must be current, then node --test
#                         against the real local server
#   make sdk-ts-generate  regenerate src/schema.d.ts (openapi-typescript) and
#                         src/operations.ts from shared/groups/public/publicapi/openapi.json
#   make sdk-ts-check     only the "generated files are current" check
#   make sdk-ts-types     that check, then the build, the type tests (tsc)
#                         and the operations' coverage, without a server
#   make sdk-ts-pack      a clean build packed by npm pack into
#                         .cache/sdk-ts/platformapi-sdk-<version>.tgz, the file
#                         a user installs until the package is published
#   make sdk-ts-pack-test that tarball installed with `npm install` into a fresh
#                         npm project under the temporary directory, and the
#                         README's first program run there, as written, against
#                         a freshly started local server
#
# npm installs into a project-local cache, as mk/infra.mk does for the CDK CLI,
# so a clean machine needs nothing but npm's registry. The published package
# (dist/) has no runtime dependencies; openapi-typescript and typescript are
# devDependencies pinned exactly in package.json and package-lock.json.

# Keep the root Makefile's default goal: an included file must not steal it.
sdk_ts_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
SDK_TS := sdk/typescript
SDK_TS_DOC := shared/groups/public/publicapi/openapi.json
SDK_TS_TMP := $(CURDIR)/.cache/sdk-ts
SDK_TS_NPM = cd $(SDK_TS) && npm_config_cache=$(CURDIR)/.cache/npm npm_config_update_notifier=false \
	npm_config_fund=false npm_config_audit=false

# npm pack names a scoped package's tarball <scope>-<name>-<version>.tgz.
SDK_TS_TARBALL = $(SDK_TS_TMP)/platformapi-sdk-$(shell node -p 'require("./$(SDK_TS)/package.json").version').tgz

.PHONY: sdk-ts-test sdk-ts-types sdk-ts-generate sdk-ts-check sdk-ts-deps sdk-ts-pack sdk-ts-pack-test

sdk-ts-deps:
	$(SDK_TS_NPM) npm ci --silent

sdk-ts-generate: sdk-ts-deps
	$(SDK_TS_NPM) npx openapi-typescript ../../$(SDK_TS_DOC) -o src/schema.d.ts
	$(SDK_TS_NPM) node scripts/gen-operations.mjs ../../$(SDK_TS_DOC) src/operations.ts

# Regenerates into a temporary directory and diffs: fails when the document
# changed and `make sdk-ts-generate` was not run.
sdk-ts-check: sdk-ts-deps
	@mkdir -p $(SDK_TS_TMP)
	$(SDK_TS_NPM) npx openapi-typescript ../../$(SDK_TS_DOC) -o $(SDK_TS_TMP)/schema.d.ts
	$(SDK_TS_NPM) node scripts/gen-operations.mjs ../../$(SDK_TS_DOC) $(SDK_TS_TMP)/operations.ts
	diff -u $(SDK_TS)/src/schema.d.ts $(SDK_TS_TMP)/schema.d.ts
	diff -u $(SDK_TS)/src/operations.ts $(SDK_TS_TMP)/operations.ts

# The client and its type tests compile against the generated schema, and
# every operation of the document has its method: what a new route must
# pass without a server.
sdk-ts-types: sdk-ts-check
	$(SDK_TS_NPM) npm run --silent build
	$(SDK_TS_NPM) npx tsc -p tsconfig.test.json
	$(SDK_TS_NPM) node --test test/coverage.test.js

sdk-ts-test: sdk-ts-types
	$(GO) build -o $(SDK_TS_TMP)/local ./functions/local
	$(SDK_TS_NPM) PLATFORMAPI_LOCAL_BIN=$(SDK_TS_TMP)/local node --test test/*.test.js

# dist/ is removed first so that nothing a former build left behind is
# packed; the package's prepack script builds it again.
sdk-ts-pack: sdk-ts-deps
	rm -rf $(SDK_TS)/dist
	@mkdir -p $(SDK_TS_TMP)
	$(SDK_TS_NPM) npm pack --silent --pack-destination $(SDK_TS_TMP) >/dev/null
	@test -f $(SDK_TS_TARBALL) && echo $(SDK_TS_TARBALL)

sdk-ts-pack-test: sdk-ts-pack
	$(GO) build -o $(SDK_TS_TMP)/local ./functions/local
	$(SDK_TS_NPM) PLATFORMAPI_LOCAL_BIN=$(SDK_TS_TMP)/local PLATFORMAPI_SDK_TARBALL=$(SDK_TS_TARBALL) \
		node --test test/pack/*.test.js

.DEFAULT_GOAL := $(sdk_ts_saved_goal)
