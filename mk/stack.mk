# mk/stack.mk: the synthesized stack, whole, on this machine. The root
# Makefile includes it.
#
#   make stack   synth, then bring the template up (infra/stackemu): storage
#                in a private moto through its CloudFormation, with moto
#                enforcing IAM once it is up, every function under AWS's
#                runtime interface emulator ($(RIE)) with its role's
#                credentials, the HTTP API on $(ADDR) routed by the template's
#                routes, and the queues, schedules, stream and log
#                subscriptions wired as the template says. Runs until
#                interrupted. With AWS_ENDPOINT_URL set (LocalStack) that
#                emulator is used instead. See docs/stack.md.
#   make stack-test       the whole-stack tests (also in make test), verbose:
#                they print each phase's time and each function's init
#                duration; here with the concurrent walk too (a run and a
#                send settled at once), which make test leaves out.
#   make stack-concurrent-test   the concurrent walk alone.
#   make stack-sdk-test   the stack brought up with its local chain, then
#                sdk/go's and sdk/typescript's tests against its front (not in
#                make test: several minutes). See docs/stack.md.

# Keep the root Makefile's default goal: an included file must not steal it.
stack_saved_goal := $(.DEFAULT_GOAL)

.PHONY: stack stack-synthesized stack-test stack-concurrent-test stack-sdk-test

stack: synth
	$(MAKE) stack-synthesized

# ALLOW_PRIVATE_WEBHOOKS lets webhooks reach receivers on this machine, as
# `make run` allows with it; the deployed stack never sets it.
stack-synthesized: $(RIE)
	AWS_LAMBDA_RIE=$(CURDIR)/$(RIE) ALLOW_PRIVATE_WEBHOOKS=$${ALLOW_PRIVATE_WEBHOOKS:-true} \
		$(GO) run ./infra/stackemu/cmd/stack -addr $(ADDR) \
		-template $(firstword $(wildcard $(CDK_OUT)/PlatformApi-*.template.json))

stack-test: $(RIE)
	AWS_LAMBDA_RIE=$(CURDIR)/$(RIE) .ci/with-moto $(GO) test -count=1 -v -timeout 20m \
		-run 'TestTheSynthesizedStack|TestAMissingGrant' ./infra/stackemu/

stack-concurrent-test: $(RIE)
	STACK_CONCURRENT_WALK=1 AWS_LAMBDA_RIE=$(CURDIR)/$(RIE) .ci/with-moto $(GO) test -count=1 -v -timeout 20m \
		-run 'TestTheSynthesizedStackCountsARunAndASendSettledAtOnce' ./infra/stackemu/

# The TypeScript tests import the SDK's build (dist/), made here as
# sdk-ts-test makes it.
stack-sdk-test: $(RIE) sdk-ts-deps
	$(SDK_TS_NPM) npm run --silent build
	STACK_SDK_TESTS=1 AWS_LAMBDA_RIE=$(CURDIR)/$(RIE) .ci/with-moto $(GO) test -count=1 -v -timeout 30m \
		-run 'TestTheSDKsTestsPassAgainstTheSynthesizedStack' ./infra/stackemu/

.DEFAULT_GOAL := $(stack_saved_goal)
