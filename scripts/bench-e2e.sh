#!/usr/bin/env bash
# bench-e2e.sh — time kwire against cat, the read-and-reassemble baseline,
# the floors of kwire's modes and tshark on capture files, and print one
# table per capture.
#
#   scripts/bench-e2e.sh CAPTURE...        (make bench-e2e runs it)
#
# Each mode runs in its own process under /usr/bin/time -v, output to
# /dev/null: wall time, peak RSS (maximum resident set size) and exit
# status are recorded. The capture is read once with cat first so every
# mode reads it from the page cache. Method and results: docs/performance.md.
#
# Rows without tshark columns are kwire-baseline's floors: baseline reads
# and reassembles only; frames adds kwire read's one-line dissection
# (frames cut, paired, decoded with record batch headers and CRCs) and
# renders nothing: the floor of read; inflate adds the decompression of
# every compressed record batch on every core: the floor of read -V and
# read --json.
#
# Environment:
#   KWIRE         kwire binary (default bin/kwire)
#   BASELINE      kwire-baseline binary (default bin/kwire-baseline)
#   KWIRE_PORTS   broker ports of the captures (default 19200,19201,19202:
#                 tools/capgen -bench)
#   BENCH_MODES   modes to run, space-separated (default all): cat baseline
#                 frames inflate read read-V read-json stats tshark tshark-O
#                 tshark-json
#   BENCH_TSHARK  0: skip the tshark modes
#   BENCH_TSHARK_MAX_MB  skip tshark on captures larger than this (default
#                 600: tshark keeps per-packet state and needs gigabytes of
#                 memory on the 1 GB capture)
#   BENCH_RUNS    runs per mode; the fastest counts, RSS is the largest (default 1)
set -u

KWIRE=${KWIRE:-bin/kwire}
BASELINE=${BASELINE:-bin/kwire-baseline}
KWIRE_PORTS=${KWIRE_PORTS:-19200,19201,19202}
BENCH_MODES=${BENCH_MODES:-}
BENCH_TSHARK=${BENCH_TSHARK:-1}
BENCH_TSHARK_MAX_MB=${BENCH_TSHARK_MAX_MB:-600}
BENCH_RUNS=${BENCH_RUNS:-1}
[ -n "$BENCH_MODES" ] || BENCH_MODES="cat baseline frames inflate read read-V read-json stats tshark tshark-O tshark-json"

if [ $# -eq 0 ]; then
	echo "usage: $0 CAPTURE..." >&2
	exit 2
fi
for b in "$KWIRE" "$BASELINE" /usr/bin/time; do
	if [ ! -x "$b" ]; then
		echo "bench-e2e: $b is missing (make bench-tools builds the binaries)" >&2
		exit 2
	fi
done
have_tshark=0
if [ "$BENCH_TSHARK" != 0 ] && command -v tshark >/dev/null 2>&1; then
	have_tshark=1
fi
have_stats=0
"$KWIRE" stats --help >/dev/null 2>&1 && have_stats=1

# tshark decodes the capture ports as Kafka: 19200,19201 → 19200,kafka -d 19201,kafka.
tshark_decode=()
IFS=, read -ra ports <<<"$KWIRE_PORTS"
for p in "${ports[@]}"; do
	tshark_decode+=(-d "tcp.port==$p,kafka")
done

wanted() { [[ " $BENCH_MODES " == *" $1 "* ]]; }

# A TLS capture has its key log beside it (X.pcap, X.keylog): kwire gets
# --tls-keylog, tshark the key log and the Kafka dissector over TLS; the
# baseline's frames and inflate floors do not apply (they cannot decrypt).
tls_args() { # FILE: sets kw_tls and ts_decode
	local kl=${1%.pcap}.keylog
	kw_tls=() ts_decode=("${tshark_decode[@]}")
	if [ -r "$kl" ]; then
		kw_tls=(--tls-keylog "$kl")
		ts_decode=(-o "tls.keylog_file:$kl")
		for p in "${ports[@]}"; do
			ts_decode+=(-d "tls.port==$p,kafka")
		done
	fi
}

# command_for MODE FILE: the command line of a mode (in the array cmd).
command_for() {
	local f=$2
	tls_args "$f"
	case $1 in
	cat) cmd=(cat "$f") ;;
	baseline) cmd=("$BASELINE" "$f") ;;
	frames) cmd=("$BASELINE" -frames -port "$KWIRE_PORTS" "$f") ;;
	inflate) cmd=("$BASELINE" -inflate -port "$KWIRE_PORTS" "$f") ;;
	read) cmd=("$KWIRE" read --color=never --port "$KWIRE_PORTS" "${kw_tls[@]}" "$f") ;;
	read-V) cmd=("$KWIRE" read --color=never -V --port "$KWIRE_PORTS" "${kw_tls[@]}" "$f") ;;
	read-json) cmd=("$KWIRE" read --color=never --json --port "$KWIRE_PORTS" "${kw_tls[@]}" "$f") ;;
	stats) cmd=("$KWIRE" stats --color=never --port "$KWIRE_PORTS" "${kw_tls[@]}" "$f") ;;
	tshark) cmd=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka) ;;
	tshark-O) cmd=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka -O kafka) ;;
	tshark-json) cmd=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka -T json) ;;
	esac
}

# measure MODE FILE: sets secs, cpu, rss_kb and status (fastest of
# BENCH_RUNS; cpu is that run's user+system seconds).
measure() {
	local tf i t0 t1 e m x u y
	tf=$(mktemp)
	secs="" cpu="" rss_kb=0 status=0
	command_for "$1" "$2"
	for ((i = 0; i < BENCH_RUNS; i++)); do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M %x %U %S' -o "$tf" "${cmd[@]}" >/dev/null 2>"$tf.err"
		t1=$EPOCHREALTIME
		# /usr/bin/time writes "Command exited with non-zero status N" first.
		read -r m x u y < <(tail -1 "$tf")
		e=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		if [ -z "$secs" ] || awk -v a="$e" -v b="$secs" 'BEGIN { exit !(a < b) }'; then
			secs=$e
			cpu=$(awk -v a="$u" -v b="$y" 'BEGIN { printf "%.2f", a + b }')
		fi
		((m > rss_kb)) && rss_kb=$m
		status=$x
		if [ "$x" -gt 1 ] 2>/dev/null; then
			echo "bench-e2e: $1 on $2 exited $x:" >&2
			head -5 "$tf.err" >&2
		fi
	done
	rm -f "$tf" "$tf.err"
}

declare -A T C R S

row() { # mode label
	local m=$1
	if [ -z "${T[$m]:-}" ]; then
		printf '  %-9s %6s %6s %7s %8s %6s %3s' "$2" - - - - - -
		return
	fi
	printf '  %-9s %6.2f %6.2f %7.1f %8.0f %6.1f %3s' "$2" "${T[$m]}" "${C[$m]}" \
		"$(awk -v s="$size" -v t="${T[$m]}" 'BEGIN { print (t > 0 ? s / 1e6 / t : 0) }')" \
		"$(awk -v p="$packets" -v t="${T[$m]}" 'BEGIN { print (t > 0 ? p / t : 0) }')" \
		"$(awk -v k="${R[$m]}" 'BEGIN { print k / 1024 }')" "${S[$m]}"
}

label() {
	case $1 in
	tshark) echo "-Y kafka" ;;
	tshark-O) echo "-O kafka" ;;
	tshark-json) echo "-T json" ;;
	*) echo "$1" ;;
	esac
}

ratio() { # numerator-mode denominator-mode: wall-time ratio/cpu-time ratio
	if [ -n "${T[$1]:-}" ] && [ -n "${T[$2]:-}" ]; then
		awk -v a="${T[$1]}" -v b="${T[$2]}" -v c="${C[$1]}" -v d="${C[$2]}" \
			'BEGIN { printf "%s/%s", (b > 0 ? sprintf("%.1f", a / b) : "-"), (d > 0 ? sprintf("%.1f", c / d) : "-") }'
	else
		printf '%s' -
	fi
}

echo "$("$KWIRE" version 2>/dev/null | head -1), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
[ $have_tshark = 1 ] && tshark --version 2>/dev/null | head -1
echo "time: wall seconds (fastest of $BENCH_RUNS); cpu: user+system seconds of that run; MB/s, pkt/s: capture bytes (10^6)"
echo "and captured packets per wall second;"
echo "RSS: peak resident set size in MiB; ex: exit status; ratios: of wall times / of cpu times"

for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "bench-e2e: cannot read $f" >&2
		exit 2
	fi
	size=$(stat -c %s "$f")
	cat "$f" >/dev/null # into the page cache
	T=() C=() R=() S=()
	packets=$("$BASELINE" "$f" | sed -n 's/.*: \([0-9]*\) packets.*/\1/p')
	packets=${packets:-0}
	mb=$((size / 1000000))
	for m in cat baseline frames inflate read read-V read-json stats tshark tshark-O tshark-json; do
		wanted "$m" || continue
		[ "$m" = stats ] && [ $have_stats = 0 ] && continue
		if [ -r "${f%.pcap}.keylog" ] && { [ "$m" = frames ] || [ "$m" = inflate ]; }; then
			continue
		fi
		if [[ $m == tshark* ]] && { [ $have_tshark = 0 ] || [ "$mb" -gt "$BENCH_TSHARK_MAX_MB" ]; }; then
			continue
		fi
		measure "$m" "$f"
		T[$m]=$secs C[$m]=$cpu R[$m]=$rss_kb S[$m]=$status
	done

	echo
	echo "$(basename "$f"): $mb MB, $packets packets"
	printf '  %-9s %6s %6s %7s %8s %6s %3s |' mode time cpu MB/s pkt/s RSS ex
	printf '  %-9s %6s %6s %7s %8s %6s %3s | %11s %11s\n' tshark time cpu MB/s pkt/s RSS ex tshark/kw kw/base
	for pair in "cat:" "baseline:" "frames:" "inflate:" "read:tshark" "read-V:tshark-O" "read-json:tshark-json" "stats:"; do
		k=${pair%%:*} t=${pair#*:}
		row "$k" "$k"
		printf ' |'
		if [ -n "$t" ]; then
			row "$t" "$(label "$t")"
			printf ' | %11s' "$(ratio "$t" "$k")"
		else
			printf '  %-9s %6s %6s %7s %8s %6s %3s | %11s' "" "" "" "" "" "" "" ""
		fi
		case $k in
		cat | baseline) printf ' %11s\n' "" ;;
		*) printf ' %11s\n' "$(ratio "$k" baseline)" ;;
		esac
	done
done
