# End-to-end performance: kwire against cat, a read-and-reassemble-only
# baseline and tshark, on large captures made by tools/capgen's -bench mode
# (few connections, large batches) and on many-connection captures made by
# internal/capturetest/mkmany from pcaps/kgo-produce-consume.pcap (thousands of
# clients, small exchanges). Included from the top-level Makefile. Method
# and results: docs/performance.md.
#
#   make bench-captures   make the benchmark captures once (cached in $(BENCH_DIR))
#   make bench-e2e        time every mode on every capture and print the tables
#   make bench-bombs      every mode on the hostile corpus (internal/bombs at the
#                         scale of issue 12: bombs of every codec, 250 MiB records,
#                         lying sizes): time, peak RSS and exit status, failing
#                         when a run passes the memory bound of the default flags
#                         (README "Memory": 64 MiB + 16 + 4x16 + 16 + 128 + 512 + 2x100 + 256 + 256 + 3x20 + 48 MiB)
#                         or ends with an exit status above 1
#
# Variables:
#   KWIRE_BENCH_DIR   where captures live (default ./bench-captures, git-ignored)
#   BENCH_BYTES       record value bytes per capture (default 210MB: ~300 MB files)
#   BENCH_BIG_BYTES   record value bytes of the constant-memory capture (~1 GB file)
#   BENCH_CAPTURES    captures bench-e2e runs on (default: all)
#   BENCH_MODES       modes bench-e2e runs (default: all; see scripts/bench-e2e.sh)
#   BENCH_RUNS        runs of each mode (default 3; the tables give medians and ranges)
#   BENCH_LOG         file every run is appended to (default $(BENCH_DIR)/bench-e2e.tsv)
#   BENCH_TSHARK      0 skips tshark (it takes minutes per capture)

KWIRE_BENCH_DIR ?= $(CURDIR)/bench-captures
BENCH_DIR       := $(abspath $(KWIRE_BENCH_DIR))
BENCH_BYTES     ?= 210MB
BENCH_BIG_BYTES ?= 780MB
BENCH_SMALL     := netns-2.1 netns-newest lo-2.1 lo-newest lo-tls fleet
# Many clients, small exchanges: kgo-produce-consume.pcap (41 connections,
# 143 exchanges, 2.9 s) copied 250 and 1000 times, each copy from its own
# client address, copies 40 ms apart: 10,250 / 41,000 connections, 29 /
# 118 MB, about 72 copies open at once.
BENCH_MANY      := many-250 many-1000
BENCH_CAPTURES  ?= $(BENCH_MANY) $(BENCH_SMALL) big-1g
BENCH_MODES     ?=
BENCH_RUNS      ?= 3
BENCH_LOG       ?= $(BENCH_DIR)/bench-e2e.tsv
BENCH_TSHARK    ?= 1
MANY_SOURCE     := pcaps/kgo-produce-consume.pcap
MANY_GAP        ?= 40ms

# capgen -bench arguments per capture.
bench_args_netns-2.1    := -bench-netns -bench-version 2.1 -bench-bytes $(BENCH_BYTES)
bench_args_netns-newest := -bench-netns -bench-version newest -bench-bytes $(BENCH_BYTES)
bench_args_lo-2.1       := -bench-version 2.1 -bench-bytes $(BENCH_BYTES)
bench_args_lo-newest    := -bench-version newest -bench-bytes $(BENCH_BYTES)
bench_args_big-1g       := -bench-netns -bench-version 2.1 -bench-bytes $(BENCH_BIG_BYTES)
# A fleet of real clients for a minute (tools/capgen/fleet.go): a group of
# 200 consumers joining one after another, 20 producers with linger 0 and acks=all sending a 100-byte
# record every 200 ms, 10 admin clients asking for Metadata every 200 ms.
bench_args_fleet        := -bench-netns -bench-fleet -bench-fleet-members 200 -bench-version newest -bench-value-size 100
# lo-newest's traffic over TLS 1.3 (AES-128-GCM), its key log beside it:
# the cost of decryption is lo-tls against lo-newest.
bench_args_lo-tls       := -bench-tls -bench-version newest -bench-bytes $(BENCH_BYTES)

.PHONY: bench-captures bench-e2e bench-tools bench-bombs

# The hostile corpus, written by internal/bombs/mkbombs (190 MB, 6 s).
BOMBS_DIR := $(BENCH_DIR)/bombs
BOMBS_BOUND_MB ?= 1620

$(BOMBS_DIR)/.done:
	$(GO) run ./internal/bombs/mkbombs $(BOMBS_DIR)
	@touch $@

bench-bombs: $(BOMBS_DIR)/.done
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -o bin/kwire ./cmd/kwire
	@command -v /usr/bin/time >/dev/null 2>&1 || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y time)
	KWIRE=bin/kwire KWIRE_BOUND_MB=$(BOMBS_BOUND_MB) scripts/bench-bombs.sh $(BOMBS_DIR)/*.pcap

bench-captures: $(foreach c,$(BENCH_MANY) $(BENCH_SMALL) big-1g,$(BENCH_DIR)/$(c).pcap)

# many-N.pcap: N copies of MANY_SOURCE (capturetest.Multiply; no cluster, no
# tcpdump: the same source always gives the same file). The broker port
# goes into many-N.ports for bench-e2e. They are made again when the
# source's content changes, told by its checksum in many-source.cksum, not
# by its time: a fresh clone's pcaps/ are newer than the captures of a
# shared KWIRE_BENCH_DIR, which make bench-e2e would otherwise rewrite
# under other users' runs.
MANY_STAMP := $(BENCH_DIR)/many-source.cksum

$(MANY_STAMP): bench-force
	@mkdir -p $(BENCH_DIR)
	@sum=$$(cksum < $(MANY_SOURCE)); \
	 if [ "$$(cat $@ 2>/dev/null)" != "$$sum" ]; then echo "$$sum" > $@; fi

.PHONY: bench-force
bench-force: ;

$(BENCH_DIR)/many-%.pcap: $(MANY_STAMP)
	@mkdir -p $(BENCH_DIR)
	$(GO) run ./internal/capturetest/mkmany -copies $* -gap $(MANY_GAP) -o $@ $(MANY_SOURCE)
	@echo 19092 > $(BENCH_DIR)/many-$*.ports

# One capture per run: capgen's cluster always listens on ports 19200-19202,
# so two runs must not overlap (.NOTPARALLEL below). The file is written
# under a temporary name and renamed, so an interrupted run leaves no
# half capture that looks finished.
$(BENCH_DIR)/%.pcap:
	@mkdir -p $(BENCH_DIR)
	@rm -f $(BENCH_DIR)/$*.tmp.pcap
	$(MAKE) --no-print-directory pcaps-bench PCAPS_BENCH_OUT=$(BENCH_DIR) \
		PCAPS_BENCH_ARGS='$(bench_args_$*) -bench-file $*.tmp.pcap'
	@mv $(BENCH_DIR)/$*.tmp.pcap $@

.NOTPARALLEL: bench-captures

# Binaries under test, built fresh so the numbers are of the working tree.
bench-tools:
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -o bin/kwire ./cmd/kwire
	CGO_ENABLED=0 $(GO) build -o bin/kwire-baseline ./cmd/kwire-baseline
	@command -v /usr/bin/time >/dev/null 2>&1 || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y time)
	@if [ "$(BENCH_TSHARK)" != 0 ] && ! command -v tshark >/dev/null 2>&1; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y tshark; \
	fi

bench-e2e: bench-tools $(foreach c,$(BENCH_CAPTURES),$(BENCH_DIR)/$(c).pcap)
	KWIRE=bin/kwire BASELINE=bin/kwire-baseline BENCH_TSHARK=$(BENCH_TSHARK) \
		BENCH_MODES='$(BENCH_MODES)' BENCH_RUNS=$(BENCH_RUNS) BENCH_LOG='$(BENCH_LOG)' \
		scripts/bench-e2e.sh $(foreach c,$(BENCH_CAPTURES),$(BENCH_DIR)/$(c).pcap)
