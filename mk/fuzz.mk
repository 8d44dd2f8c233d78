# mk/fuzz.mk: Go native fuzzing of every parser of untrusted input.
# The root Makefile includes it.
#
#   make fuzz                 every target for FUZZTIME (default 30s), one at a time
#   make fuzz FUZZTIME=5m     longer
#   make fuzz FUZZ_TARGETS="shared/base/strictjson:FuzzCheck"   a subset
#
# Seed corpora live in each package's testdata/fuzz/<FuzzName>/ (plus f.Add
# seeds); plain `go test` replays them, so a crasher once committed there
# stays a regression test. A target that fails stops the run and leaves its
# input under testdata/fuzz for go test to replay. The summary lists the
# executions each target reached.

# Keep the root Makefile's default goal: an included file must not steal it.
fuzz_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
FUZZTIME ?= 30s
FUZZ_TARGETS ?= \
	shared/base/strictjson:FuzzCheck \
	shared/groups/approvals:FuzzCanonical \
	shared/groups/keys:FuzzParseSecret \
	shared/groups/keys:FuzzExpand \
	shared/groups/webhooks:FuzzCheckURL \
	shared/groups/webhooks:FuzzRefusedReason \
	shared/domain/paging:FuzzCursor \
	shared/groups/credits/credittoken:FuzzVerify \
	shared/groups/credits/topup:FuzzTopUpAmount \
	shared/groups/credits/x402:FuzzDecodePaymentPayload \
	shared/groups/credits/x402:FuzzParseUint256 \
	shared/base/redact:FuzzSecrets \
	shared/base/decimal:FuzzParse \
	shared/groups/files:FuzzParseFileName \
	shared/groups/wallets/policy:FuzzPolicy \
	shared/groups/wallets/signing:FuzzTypedDataDigest \
	shared/groups/wallets/signing:FuzzDecodeMessage

.PHONY: fuzz

fuzz:
	@summary=$$(mktemp); trap 'rm -f $$summary' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		log=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg 2>&1); rc=$$?; \
		echo "$$log" | tail -n 3; \
		execs=$$(echo "$$log" | sed -n 's/.*execs: \([0-9]*\).*/\1/p' | tail -n 1); \
		if [ $$rc -eq 0 ]; then status=ok; else status=FAIL; fi; \
		printf '%-22s %-26s %12s execs  %s\n' "$$pkg" "$$name" "$${execs:-?}" "$$status" >> $$summary; \
		if [ $$rc -ne 0 ]; then echo "$$log"; cat $$summary; exit $$rc; fi; \
	done; \
	echo; echo "fuzz summary ($(FUZZTIME) each):"; cat $$summary

.DEFAULT_GOAL := $(fuzz_saved_goal)
