# mk/stack.mk: the synthesized stack, whole, on this machine. The root
# Makefile includes it.
#
#   make stack   synth, then bring the template up (infra/stackemu): storage
#                in a private moto through its CloudFormation, every function
#                under AWS's runtime interface emulator ($(RIE)), the HTTP API
#                on $(ADDR) routed by the template's routes, and the queues,
#                schedules, stream and log subscriptions wired as the template
#                says. Runs until interrupted. See docs/stack.md.

# Keep the root Makefile's default goal: an included file must not steal it.
stack_saved_goal := $(.DEFAULT_GOAL)

.PHONY: stack stack-synthesized

stack: synth
	$(MAKE) stack-synthesized

# ALLOW_PRIVATE_WEBHOOKS lets webhooks reach receivers on this machine, as
# `make run` allows with it; the deployed stack never sets it.
stack-synthesized: $(RIE)
	AWS_LAMBDA_RIE=$(CURDIR)/$(RIE) ALLOW_PRIVATE_WEBHOOKS=$${ALLOW_PRIVATE_WEBHOOKS:-true} \
		.ci/with-moto $(GO) run ./infra/stackemu/cmd/stack -addr $(ADDR) \
		-template $(firstword $(wildcard $(CDK_OUT)/PlatformApi-*.template.json))

.DEFAULT_GOAL := $(stack_saved_goal)
