# mk/infra.mk: the CDK infrastructure targets. The root Makefile includes it
# and defines `build` (every function into build/<name>/bootstrap).
#
#   make synth        templates into cdk.out/ (offline; needs only npm's registry once)
#   make cdk-bootstrap  once per account and region, before the first deploy
#   make deploy       cdk deploy (credentials from the usual AWS environment)
#   make destroy      cdk destroy (retained data stays: see infra/README.md)
#   make test-infra   cfn-lint on every template in cdk.out/, then go test ./infra/...
#   make lint-templates  synth and cfn-lint only (make test runs the Go tests already)
#
# Settings travel as environment variables (STAGE=prod make deploy) or as
# CDK context (make deploy CDK_ARGS="-c stage=prod"); see infra/README.md.

# Keep the root Makefile's default goal: an included file must not steal it.
infra_saved_goal := $(.DEFAULT_GOAL)

# Pinned: the `latest` CLI (3.x) cannot read the cloud assembly this library
# (aws-cdk-lib 2.270.0) writes. npx installs it once into the project-local
# npm cache below, so a clean machine needs nothing but npm's registry.
CDK_CLI := npx --yes aws-cdk@2.1148.1
CDK_NPM_CACHE ?= $(CURDIR)/.cache/npm
CDK_OUT ?= cdk.out
CDK_ARGS ?=
CFN_LINT ?= cfn-lint
GO ?= go

# No telemetry, notices or npm update nags: the first two call AWS endpoints
# that a CI machine may not reach, and none of them belongs in build output.
CDK = npm_config_cache=$(CDK_NPM_CACHE) npm_config_update_notifier=false \
	CDK_DISABLE_CLI_TELEMETRY=true $(CDK_CLI)
CDK_FLAGS = --no-notices --no-version-reporting --output $(CDK_OUT)

# W3005 (redundant DependsOn) is suppressed: CDK adds an explicit DependsOn
# on each function's role and role policy so that a function never runs
# before its permissions exist; the role half is also implied by the GetAtt
# on the role ARN, which is all cfn-lint notes. It is harmless and not ours
# to remove.
CFN_LINT_FLAGS ?= --ignore-checks W3005

.PHONY: synth cdk-bootstrap deploy destroy test-infra lint-templates

# Old templates are removed first: the CLI leaves other stages' templates in
# cdk.out, and test-infra lints every template it finds there.
synth: build
	rm -f $(CDK_OUT)/*.template.json
	$(CDK) synth $(CDK_FLAGS) --quiet $(CDK_ARGS)

# Named cdk-bootstrap so it cannot collide with a root `bootstrap` target.
# The CLI synthesizes the app first, so it needs the assets too.
cdk-bootstrap: build
	$(CDK) bootstrap $(CDK_FLAGS) $(CDK_ARGS)

deploy: build
	$(CDK) deploy $(CDK_FLAGS) --all $(CDK_ARGS)

# Synthesis needs the assets, so destroy builds too.
destroy: build
	$(CDK) destroy $(CDK_FLAGS) --all $(CDK_ARGS)

test-infra: lint-templates
	$(GO) test ./infra/...

# make test runs the infra Go tests with everything else; this is the part
# it adds.
lint-templates: synth
	@command -v $(CFN_LINT) >/dev/null || python3 -m pip install --quiet cfn-lint
	$(CFN_LINT) $(CFN_LINT_FLAGS) -- $(CDK_OUT)/*.template.json

.DEFAULT_GOAL := $(infra_saved_goal)
