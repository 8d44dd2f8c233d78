# mk/contracts.mk: the Solidity contracts of the local development chain
# (shared/base/chain/contracts: TestToken, Pool) and their Go bindings. The root
# Makefile includes it.
#
#   make contracts        compile with the pinned solc and regenerate the
#                         committed build/*.abi, build/*.bin and the abigen
#                         bindings (testtoken.go, pool.go)
#   make contracts-check  regenerate into .cache/contracts and diff: fails when
#                         a committed output is stale
#
# solc comes from npm (solcjs, the compiler built to WebAssembly), pinned, in a
# project-local cache as mk/sdk-ts.mk and mk/docs.mk do, so a clean machine
# needs nothing but npm's registry. Output is reproducible: one compiler
# version, one set of flags, and sources compiled from their own directory so
# the metadata hash in the bytecode sees the same file names every time.
#
# abigen is go-ethereum's cmd/abigen at the version go.mod requires. Its own
# imports (urfave/cli and friends) are in go.sum only while some package of
# the module happens to import them too (today the simulated chain of this
# package's tests does), and `go mod tidy` drops them when none does; nor
# should a code generator add requirements of its own. So it is built against
# a copy of go.mod and go.sum in .cache/contracts (-modfile, -mod=mod), which
# fills in whatever is missing there: the project's go.mod and go.sum are never
# touched (GOWORK=off: the go.work workspace refuses -modfile, and abigen
# needs no other module of it). A first build on a clean machine downloads
# and compiles for about a minute; later runs take seconds.

contracts_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
SOLC_VERSION := 0.8.28
CONTRACTS_DIR := shared/base/chain/contracts
CONTRACTS := TestToken Pool
CONTRACTS_CACHE := $(CURDIR)/.cache/contracts
CONTRACTS_NPM_CACHE ?= $(CURDIR)/.cache/npm
SOLCJS := $(CURDIR)/.cache/solc/node_modules/.bin/solcjs
ABIGEN := $(CONTRACTS_CACHE)/abigen
SOLC_FLAGS := --optimize --optimize-runs 200 --abi --bin

.PHONY: contracts contracts-check contracts-tools

contracts-tools:
	@mkdir -p $(CONTRACTS_CACHE)
	@$(SOLCJS) --version 2>/dev/null | grep -q '^$(SOLC_VERSION)+' || { \
		echo "installing solc@$(SOLC_VERSION) into .cache/solc"; \
		mkdir -p .cache/solc && npm_config_cache=$(CONTRACTS_NPM_CACHE) npm_config_update_notifier=false \
		npm_config_fund=false npm_config_audit=false \
		npm install --silent --no-save --prefix .cache/solc solc@$(SOLC_VERSION); }
	cp go.mod $(CONTRACTS_CACHE)/go.mod
	cp go.sum $(CONTRACTS_CACHE)/go.sum
	GOWORK=off $(GO) build -modfile=$(CONTRACTS_CACHE)/go.mod -mod=mod -o $(ABIGEN) github.com/ethereum/go-ethereum/cmd/abigen

# contracts_generate(build dir, bindings dir): compiles each contract on its
# own, renames solcjs's <File>_sol_<Contract> outputs to <Contract>.abi/.bin
# (dropping interfaces), then writes <contract lower-case>.go.
define contracts_generate
	rm -rf $(1) && mkdir -p $(1) $(CONTRACTS_CACHE)/solc-out
	set -e; for c in $(CONTRACTS); do \
		rm -rf $(CONTRACTS_CACHE)/solc-out/*; \
		( cd $(CONTRACTS_DIR) && $(SOLCJS) $(SOLC_FLAGS) -o $(CONTRACTS_CACHE)/solc-out $$c.sol ); \
		mv $(CONTRACTS_CACHE)/solc-out/$${c}_sol_$$c.abi $(1)/$$c.abi; \
		mv $(CONTRACTS_CACHE)/solc-out/$${c}_sol_$$c.bin $(1)/$$c.bin; \
		$(ABIGEN) --abi $(1)/$$c.abi --bin $(1)/$$c.bin --pkg contracts --type $$c \
			--out $(2)/$$(echo $$c | tr '[:upper:]' '[:lower:]').go; \
	done
endef

contracts: contracts-tools ## compile the local chain's contracts and regenerate their Go bindings
	$(call contracts_generate,$(CONTRACTS_DIR)/build,$(CONTRACTS_DIR))

contracts-check: contracts-tools ## the committed contract outputs and bindings must be current
	rm -rf $(CONTRACTS_CACHE)/check && mkdir -p $(CONTRACTS_CACHE)/check
	$(call contracts_generate,$(CONTRACTS_CACHE)/check/build,$(CONTRACTS_CACHE)/check)
	diff -ru $(CONTRACTS_DIR)/build $(CONTRACTS_CACHE)/check/build
	set -e; for c in $(CONTRACTS); do f=$$(echo $$c | tr '[:upper:]' '[:lower:]').go; \
		diff -u $(CONTRACTS_DIR)/$$f $(CONTRACTS_CACHE)/check/$$f; done

.DEFAULT_GOAL := $(contracts_saved_goal)
