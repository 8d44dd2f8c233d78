# mk/bench.mk: what a request costs, in time, storage round trips and dollars.
# The root Makefile includes it.
#
#   make bench        the micro-benchmarks, then the full run
#   make bench-smoke  all of it cut short: each micro-benchmark once, then
#                     the full run with a second of load per endpoint, two
#                     cold starts of every function and a few samples.
#                     make test runs it so that the benchmark cannot rot;
#                     its figures are too short to quote
#   make bench-server each server a process of its own (the API on
#                     embedded storage, a plain net/http server), the load
#                     generator pinned to another core: the server
#                     process's CPU per request (/proc/<pid>/stat) of the
#                     audited read, the unaudited read, /health and plain
#                     net/http, in alternating rounds, with each load's
#                     p50, p99 and p99.9, the audited read's p99 over p50
#                     and the server process's own stalls; no emulator
#                     needed.
#                     The API child is configured as the local server:
#                     access lines without the CloudWatch metric block
#                     unless LOG_EMF=true, audit blocks deflated by
#                     klauspost's deflater.
#                     BENCH_SERVER_ARGS="-cpuprofile FILE" profiles each
#                     server process over the first round's loads
#                     (FILE.read, FILE.bare, FILE.plainNetHTTP, ...);
#                     "-trace FILE" writes the API child's runtime trace
#                     of the first audited read load; "-concurrency 32"
#                     loads harder; "-rate 5000" sends 5,000 requests a
#                     second whatever the answers (an open loop, over at
#                     most -concurrency connections), each latency counted
#                     from its request's due time: the tail users feel at
#                     a load the server carries
#   make bench-micro  only the go test -bench micro-benchmarks, with
#                     -benchmem: the hot functions of a request (keys
#                     decode, limits.Admit, bbolt's item codec, the audit
#                     journal (with its flusher's CPU), the access line's
#                     metric block and the whole line (jsonlog against
#                     slog's JSON handler), the whole enforce path of a read
#                     and of an idempotent write: shared/harness/bench's
#                     BenchmarkRequest, whose allocs/op are a request's), a
#                     4 MiB file upload and download on embedded storage, in
#                     MB/s, the managed databases: API over bare SQLite,
#                     and a wallet policy's worst case (50 rules, 2,000 spends)
#
# The full run (shared/harness/bench) goes through .ci/with-moto, so that storage
# round trips are counted at the SDK against moto, or against LocalStack when
# AWS_ENDPOINT_URL is set. It prints a table, then one JSON object as the
# last line of output. Flags pass through BENCH_ARGS, e.g.
# make bench BENCH_ARGS="-duration 10s -concurrency 16". No figure fails it.

# Keep the root Makefile's default goal: an included file must not steal it.
bench_saved_goal := $(.DEFAULT_GOAL)

GO ?= go
BENCH_ARGS ?=
BENCH_MICRO_TIME ?= 200ms
BENCH_SERVER_ARGS ?= -duration 20s -rounds 4

.PHONY: bench bench-micro bench-smoke bench-server

bench: bench-micro
	.ci/with-moto $(GO) run ./functions/local bench $(BENCH_ARGS)

bench-smoke:
	$(MAKE) bench-micro BENCH_MICRO_TIME=1x
	.ci/with-moto $(GO) run ./functions/local bench -duration 1s -warmup 0s -rounds 2 -cold-starts 2 -samples 2

bench-server:
	$(GO) run ./functions/local bench -server-alone $(BENCH_SERVER_ARGS)

bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCH_MICRO_TIME) ./shared/groups/keys ./shared/domain/limits ./shared/adapters/store/boltstore ./shared/domain/audit ./shared/base/emf ./shared/base/jsonlog ./shared/domain/idempotency ./shared/harness/bench ./shared/groups/files ./shared/groups/databases ./shared/groups/wallets/policy

.DEFAULT_GOAL := $(bench_saved_goal)
