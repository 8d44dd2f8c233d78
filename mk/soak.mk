# mk/soak.mk: the fault-injecting model of the server (shared/harness/soak). The
# root Makefile includes it.
#
#   make soak                           seed 1 for 10 minutes
#   make soak SEED=42 DURATION=30m      another seed, longer
#   make soak SOAK_BACKEND=aws          the same against DynamoDB/S3/SQS/KMS
#                                       (moto_server, or AWS_ENDPOINT_URL)
#
# It builds the local server with the soakfaults tag, runs it with keys of
# every depth making random calls, kills it with SIGKILL and crashes it
# right after random writes, slices accounts while charges run, then holds
# every account to the invariants. A failure prints the command that runs
# its seed again. Every invariant counts here, the known open ones too;
# make test runs seed 1 for a minute and reports those without failing.

soak_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
SEED ?= 1
DURATION ?= 10m
SOAK_BACKEND ?=

.PHONY: soak
soak: ## the fault-injecting soak: SEED, DURATION, SOAK_BACKEND=aws
	$(if $(filter aws,$(SOAK_BACKEND)),.ci/with-moto) env SOAK_SEED=$(SEED) SOAK_DURATION=$(DURATION) SOAK_STRICT=1 SOAK_BACKEND=$(SOAK_BACKEND) \
		$(GO) test -count=1 -v -timeout 0 -run '^TestASeededRunKeepsEveryInvariant$$' ./shared/harness/soak/

.DEFAULT_GOAL := $(soak_saved_goal)
