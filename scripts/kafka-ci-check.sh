#!/usr/bin/env bash
# kafka-ci-check.sh: run a command (a Kafka client's test suite) under
# tcpdump, then check the captured Kafka traffic with kwire check. The
# example CI job of docs/ci.md runs this; kwire's own test
# (tools/capgen TestCIExample) runs it end to end against a throwaway
# broker.
#
#   scripts/kafka-ci-check.sh -p PORT -s SPEC [-o DIR] [-i IFACE] [-k KWIRE] -- COMMAND...
#
#   -p PORT   the broker's port: tcpdump captures 'tcp port PORT'
#   -s SPEC   the kwire check spec (YAML)
#   -o DIR    where kafka.pcap and kwire-junit.xml go (default: .)
#   -i IFACE  the interface to capture on (default: lo; "any" for all)
#   -k KWIRE  the kwire binary (default: kwire on $PATH)
#
# Exit status: 2 when tcpdump does not start (the command is not run),
# the command's when it fails (the capture is kept), else kwire check's
# (0 every check passed, 1 a check failed, 2 a bad spec or capture).
# Capturing needs root or CAP_NET_RAW for tcpdump.
set -euo pipefail

usage="usage: $0 -p PORT -s SPEC [-o DIR] [-i IFACE] [-k KWIRE] -- COMMAND..."
port= spec= out=. iface=lo kwire=kwire
while getopts "p:s:o:i:k:h" opt; do
  case $opt in
    p) port=$OPTARG ;;
    s) spec=$OPTARG ;;
    o) out=$OPTARG ;;
    i) iface=$OPTARG ;;
    k) kwire=$OPTARG ;;
    h) echo "$usage"; sed -n '/^#   -p/,/^#   -k/s/^# //p' "$0"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ -z "$port" ] || [ -z "$spec" ] || [ $# -eq 0 ]; then
  echo "$usage" >&2
  exit 2
fi
mkdir -p "$out"
pcap="$out/kafka.pcap"

# -U writes each packet as it comes, so that nothing is lost when tcpdump
# is stopped; --immediate-mode delivers them without buffering; -B 65536
# (KiB) gives the kernel room to hold packets while tcpdump is busy (on a
# loaded CI machine the default drops some); -Z root keeps the file ours.
zroot=()
[ "$(id -u)" = 0 ] && zroot=(-Z root)
tcpdump -i "$iface" -n -U --immediate-mode -B 65536 "${zroot[@]}" -s 0 -w "$pcap" "tcp port $port" 2>"$out/tcpdump.log" &
tcpdump_pid=$!
# Wait until tcpdump listens (it says so on stderr). One that could not
# start (no such interface, no permission, not installed) stops the job
# here, before the command runs: with no capture, kwire check could only
# say that kafka.pcap does not exist.
for _ in $(seq 50); do
  grep -q "listening on" "$out/tcpdump.log" 2>/dev/null && break
  kill -0 "$tcpdump_pid" 2>/dev/null || break
  sleep 0.1
done
if ! kill -0 "$tcpdump_pid" 2>/dev/null; then
  wait "$tcpdump_pid" 2>/dev/null || true
  echo "kafka-ci-check: tcpdump did not start (the command was not run): $(tr '\n' ' ' <"$out/tcpdump.log")" >&2
  exit 2
fi

status=0
"$@" || status=$?
sleep 0.5 # the last packets (FINs) reach the capture
kill -INT "$tcpdump_pid" 2>/dev/null || true
wait "$tcpdump_pid" 2>/dev/null || true
if grep -q "[1-9][0-9]* packets\? dropped by kernel" "$out/tcpdump.log"; then
  echo "kafka-ci-check: warning: tcpdump: $(grep 'dropped by kernel' "$out/tcpdump.log")" >&2
fi
if [ "$status" -ne 0 ]; then
  echo "kafka-ci-check: the command failed (exit $status); the capture is in $pcap" >&2
  exit "$status"
fi

"$kwire" check --port "$port" --junit "$out/kwire-junit.xml" "$spec" "$pcap"
