# kwire — Kafka wire-protocol dissector.
#
#   make build      build ./kwire (pure Go, CGO_ENABLED=0)
#   make test       everything CI runs: vet, the schema-table check, all tests,
#                   and a pure-Go build for every release target (make cross)
#   make generate   regenerate protocol/zz_schema.go from ../shared/kafka-schemas
#   make bench      Go benchmarks (benchstat-friendly: -count 6)
#   make fuzz       each fuzz target for FUZZTIME (default 30s)
#   make pcaps      regenerate the golden captures in pcaps/ (needs tcpdump, kcat, python3-kafka, npm)

GO        ?= go
FUZZTIME  ?= 30s
# Minimizing each new interesting input for go test's default 60s stalled
# the capture fuzz targets (no exec counted while a worker minimizes):
# a bounded number of tries keeps them at thousands of execs a second.
FUZZMINIMIZE ?= 100x
BENCHTIME ?= 1s
COUNT     ?= 6
# Kafka's schemas and byte vectors: $KWIRE_SHARED, else ../shared beside the repo.
SHARED    ?= $(if $(KWIRE_SHARED),$(KWIRE_SHARED),$(abspath ../shared))
export KWIRE_SHARED := $(SHARED)

.PHONY: all build cross test vet generate generate-check bench fuzz clean

all: build

VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null)

build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags "-X main.version=$(VERSION)" -o kwire ./cmd/kwire

# The release targets: every one must build pure Go (CGO_ENABLED=0). make
# test builds them all, so a file that only one system compiles (a missing
# build-tagged twin) fails here, not at release time.
RELEASE_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 freebsd/amd64

cross:
	@set -e; for t in $(RELEASE_TARGETS); do \
	  echo "== build $$t"; \
	  CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -o /dev/null ./...; \
	done

vet:
	@# gofmt: every Go file of the tree, the tools' modules too.
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*')); \
	 if [ -n "$$out" ]; then echo "gofmt -l (run gofmt -w):"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# go.mod must say what the code imports: direct dependencies not marked
	@# indirect, no stale go.sum lines.
	$(GO) mod tidy -diff
	@# staticcheck (honnef.co/go/tools), pinned as a tool in go.mod.
	$(GO) tool staticcheck ./...

# The packages whose tests read captures end to end (goldens, in-process
# commands), run again with released memory poisoned.
POISON_PKGS ?= ./pcaps/ ./dissect/... ./protocol/ ./analysis/ ./cmd/kwire/

test: vet cross
	@if [ -d "$(SHARED)/kafka-vectors" ]; then echo "== conformance data: $(SHARED)"; \
	 else echo "== $(SHARED) not found: tests that need Kafka's schemas and vectors will SKIP (set KWIRE_SHARED)"; fi
	$(GO) test -count=1 ./...
	@# Once more with released memory poisoned (internal/poison, -tags
	@# kwirepoison): a tree, node or frame used after its release prints
	@# RELEASED instead of its value, and the goldens catch it.
	$(GO) test -count=1 -tags kwirepoison $(POISON_PKGS)
	@# The capture generator is a module of its own (it keeps kgo, kfake, sarama
	@# and kafka-go out of kwire's go.mod): vet and test it too.
	cd tools/capgen && $(GO) vet . && $(GO) test -count=1 .
	@# docs/sql.md against a real DuckDB: a module of its own, with cgo (the
	@# duckdb-go driver); kwire itself builds without cgo.
	@if command -v cc >/dev/null 2>&1; then cd tools/sqltest && CGO_ENABLED=1 $(GO) vet . && CGO_ENABLED=1 $(GO) test -count=1 .; \
	 else echo "== no C compiler: tools/sqltest (docs/sql.md on DuckDB) SKIPPED"; fi

generate:
	$(GO) generate ./protocol

# Fails when protocol/zz_schema.go is not what the generator makes from ../shared.
generate-check:
	cd protocol && $(GO) run ./internal/schemagen -check

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count $(COUNT) ./...

# Each fuzz target runs alone for FUZZTIME (go test allows one -fuzz target per run).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
	  done; \
	done

clean:
	rm -f kwire

-include mk/*.mk
