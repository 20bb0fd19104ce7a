# Golden captures (pcaps/) and benchmark captures, made by tools/capgen,
# a nested Go module so its Kafka client libraries stay out of kwire's go.mod.
# Included from the top-level Makefile.
#
#   make pcaps                      regenerate every golden capture in pcaps/
#   make pcaps PCAPS_ONLY=kgo,kcat  regenerate some of them (names: make pcaps-list)
#   make pcaps-bench                a benchmark capture in $(PCAPS_BENCH_OUT)
#
# Capturing on loopback needs root (or CAP_NET_RAW); missing tools are
# installed with apt-get.

PCAPS_ONLY       ?=
PCAPS_BENCH_OUT  ?= /tmp/kwire-bench
PCAPS_BENCH_ARGS ?= -bench-bytes 210MB -bench-version newest
PCAPS_TOOLS      ?= tcpdump kcat openssl editcap
# kafka-python and its codec modules (Debian), for the kafkapython scenario.
PCAPS_APT        ?= python3-kafka python3-snappy python3-lz4 python3-zstandard

.PHONY: pcaps pcaps-deps pcaps-clients pcaps-list pcaps-bench

pcaps-deps:
	@missing=""; \
	for t in $(PCAPS_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$(echo $$t | sed s/^editcap$$/wireshark-common/)"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi

# The kafkapython and kafkajs scenarios: Debian packages, and KafkaJS from
# tools/capgen/js/package-lock.json into tools/capgen/js/node_modules.
pcaps-clients:
	@missing=""; \
	for p in $(PCAPS_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
	@[ -f tools/capgen/js/node_modules/kafkajs/package.json ] || (cd tools/capgen/js && npm ci --no-audit --no-fund)

pcaps: pcaps-deps pcaps-clients
	cd tools/capgen && go run . -out ../../pcaps $(if $(PCAPS_ONLY),-only $(PCAPS_ONLY))

pcaps-list:
	cd tools/capgen && go run . -list

pcaps-bench: PCAPS_TOOLS += ethtool
pcaps-bench: pcaps-deps
	cd tools/capgen && go run . -bench -out $(PCAPS_BENCH_OUT) $(PCAPS_BENCH_ARGS)
