# mk/load.mk: the scaled load test (docs/storage-design.md). The root
# Makefile includes it.
#
#   make load   drives one key, one account, charged calls and audit events
#               through shared/adapters/store/throttlestore (DynamoDB's per-partition
#               limits divided by 100) on a simulated clock, and prints what
#               each run answered and what was throttled. It takes a second;
#               make test runs the same test with the rest of shared/harness/bench.

load_saved_goal := $(.DEFAULT_GOAL)

GO ?= go

.PHONY: load

load:
	set -o pipefail; $(GO) test -count=1 -run 'TestTheScaledTargetsPassWithoutThrottles|TestWhatStillHasOneHotItemIsThrottledPastItsCeiling' -v ./shared/harness/bench | grep -E 'scale_test|^(ok|FAIL|---)'

.DEFAULT_GOAL := $(load_saved_goal)
