#!/usr/bin/env bash
# bench-e2e.sh — time kwire against cat, the read-and-reassemble baseline,
# the floors of kwire's modes and tshark on capture files, and print
# tables per capture.
#
#   scripts/bench-e2e.sh CAPTURE...        (make bench-e2e runs it)
#
# Each mode runs in its own process under /usr/bin/time, output to
# /dev/null: wall time, user+system CPU time, peak RSS (maximum resident
# set size) and exit status of every run are recorded. The capture is
# read once with cat first so every mode reads it from the page cache.
# Runs are interleaved (run 1 of every mode, then run 2 of every mode...)
# so that a machine whose speed drifts disturbs all modes alike. The
# tables give the median of the runs and their range; every run is
# printed under its table with the load average before it, and written
# to BENCH_LOG. Method and results: docs/performance.md.
#
# Rows without tshark columns are kwire-baseline's floors: gopacket is
# the libraries alone (pcapgo, gopacket's layer parser and Assembler with
# streams that count bytes); copy is gopacket with every reassembled byte
# copied once into a reused buffer and CRC-32C'd (the least work kwire
# read adds: a frame is decoded whole, a batch's CRC covers its bytes);
# baseline reads and reassembles with kwire's
# reassembly package only; frames adds kwire read's one-line dissection
# (frames cut, paired, decoded with record batch headers and CRCs) and
# renders nothing: the floor of read; inflate adds the decompression of
# every compressed record batch on every core: the floor of read -V and
# read --json. Modes ending in @1 are kwire's with GOMAXPROCS=1 (one
# core), to compare with the default (every core).
#
# Per capture: the broker ports are those in X.ports beside X.pcap
# (comma-separated, one line) or KWIRE_PORTS; a key log X.keylog beside
# it is given to kwire (--tls-keylog) and tshark. The exchanges and
# connections are counted by one kwire read (its summary line) before
# the timed runs.
#
# Environment:
#   KWIRE         kwire binary (default bin/kwire)
#   BASELINE      kwire-baseline binary (default bin/kwire-baseline)
#   KWIRE_PORTS   broker ports of captures without X.ports (default
#                 19200,19201,19202: tools/capgen -bench)
#   BENCH_MODES   modes to run, space-separated (default all): cat gopacket copy baseline
#                 frames inflate read read-V read-json stats read@1
#                 read-V@1 read-json@1 stats@1 tshark tshark-O tshark-json
#   BENCH_TSHARK  0: skip the tshark modes
#   BENCH_TSHARK_MAX_MB  skip tshark on captures larger than this (default
#                 600: tshark keeps per-packet state and needs gigabytes of
#                 memory on the 1 GB capture)
#   BENCH_RUNS    runs per mode (default 3); the median counts
#   BENCH_LOG     append every run to this file, tab-separated (default:
#                 none): date, capture, mode, run, wall s, cpu s, RSS KiB,
#                 exit status, 1-minute load average before the run
set -u

KWIRE=${KWIRE:-bin/kwire}
BASELINE=${BASELINE:-bin/kwire-baseline}
KWIRE_PORTS=${KWIRE_PORTS:-19200,19201,19202}
BENCH_MODES=${BENCH_MODES:-}
BENCH_TSHARK=${BENCH_TSHARK:-1}
BENCH_TSHARK_MAX_MB=${BENCH_TSHARK_MAX_MB:-600}
BENCH_RUNS=${BENCH_RUNS:-3}
BENCH_LOG=${BENCH_LOG:-}
ALL_MODES="cat gopacket copy baseline frames inflate read read-V read-json stats read@1 read-V@1 read-json@1 stats@1 tshark tshark-O tshark-json"
[ -n "$BENCH_MODES" ] || BENCH_MODES=$ALL_MODES

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

wanted() { [[ " $BENCH_MODES " == *" $1 "* ]]; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# capture_args FILE: sets ports (the capture's broker ports), kw_tls and
# ts_decode (tshark's -d/-o arguments). A TLS capture has its key log
# beside it (X.pcap, X.keylog): kwire gets --tls-keylog, tshark the key
# log and the Kafka dissector over TLS; the baseline's frames and
# inflate floors do not apply (they cannot decrypt).
capture_args() {
	local f=$1 kl=${1%.pcap}.keylog pf=${1%.pcap}.ports p
	ports=$KWIRE_PORTS
	if [ -r "$pf" ]; then
		ports=$(head -1 "$pf" | tr -d ' \n')
	fi
	IFS=, read -ra port_list <<<"$ports"
	kw_tls=() ts_decode=()
	for p in "${port_list[@]}"; do
		ts_decode+=(-d "tcp.port==$p,kafka")
	done
	if [ -r "$kl" ]; then
		kw_tls=(--tls-keylog "$kl")
		ts_decode+=(-o "tls.keylog_file:$kl")
		for p in "${port_list[@]}"; do
			ts_decode+=(-d "tls.port==$p,kafka")
		done
	fi
}

# command_for MODE FILE: the command line of a mode (in the array cmd).
command_for() {
	local f=$2 m=$1
	cmd=()
	if [[ $m == *@1 ]]; then
		cmd=(env GOMAXPROCS=1)
		m=${m%@1}
	fi
	case $m in
	cat) cmd+=(cat "$f") ;;
	gopacket) cmd+=("$BASELINE" -gopacket "$f") ;;
	copy) cmd+=("$BASELINE" -gopacket -copy "$f") ;;
	baseline) cmd+=("$BASELINE" "$f") ;;
	frames) cmd+=("$BASELINE" -frames -port "$ports" "$f") ;;
	inflate) cmd+=("$BASELINE" -inflate -port "$ports" "$f") ;;
	read) cmd+=("$KWIRE" read --color=never --port "$ports" "${kw_tls[@]}" "$f") ;;
	read-V) cmd+=("$KWIRE" read --color=never -V --port "$ports" "${kw_tls[@]}" "$f") ;;
	read-json) cmd+=("$KWIRE" read --color=never --json --port "$ports" "${kw_tls[@]}" "$f") ;;
	stats) cmd+=("$KWIRE" stats --color=never --port "$ports" "${kw_tls[@]}" "$f") ;;
	tshark) cmd+=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka) ;;
	tshark-O) cmd+=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka -O kafka) ;;
	tshark-json) cmd+=(tshark -n -r "$f" "${ts_decode[@]}" -Y kafka -T json) ;;
	esac
}

# run_once MODE FILE RUN: one run; appends its wall and cpu seconds to
# W[MODE] and C[MODE], keeps the largest RSS in R and the largest exit
# status in S, and the run's line in RUNS[MODE].
run_once() {
	local tf t0 t1 e c m x u y la
	tf=$(mktemp)
	command_for "$1" "$2"
	la=$(cut -d' ' -f1 /proc/loadavg)
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%M %x %U %S' -o "$tf" "${cmd[@]}" >/dev/null 2>"$tf.err"
	t1=$EPOCHREALTIME
	# /usr/bin/time writes "Command exited with non-zero status N" first.
	read -r m x u y < <(tail -1 "$tf")
	e=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	c=$(awk -v a="$u" -v b="$y" 'BEGIN { printf "%.2f", a + b }')
	W[$1]="${W[$1]:-} $e"
	C[$1]="${C[$1]:-} $c"
	((m > ${R[$1]:-0})) && R[$1]=$m
	((x >= ${S[$1]:-0})) && S[$1]=$x
	RUNS[$1]="${RUNS[$1]:-} $(printf '%.2f/%.2f@%s' "$e" "$c" "$la")"
	if [ -n "$BENCH_LOG" ]; then
		printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n' "$(date -u '+%Y-%m-%dT%H:%M:%SZ')" \
			"$(basename "$2")" "$1" "$3" "$e" "$c" "$m" "$x" "$la" >>"$BENCH_LOG"
	fi
	if [ "$x" -gt 1 ] 2>/dev/null; then
		echo "bench-e2e: $1 on $2 exited $x:" >&2
		head -5 "$tf.err" >&2
	fi
	rm -f "$tf" "$tf.err"
}

# stat3 "V1 V2 ...": median min max of the values.
stat3() {
	tr ' ' '\n' <<<"$1" | sort -g | awk 'NF { v[++n] = $1 } END {
		if (n == 0) { print "- - -"; exit }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%.3f %.3f %.3f\n", m, v[1], v[n]
	}'
}

declare -A W C R S RUNS MW MC

label() {
	case $1 in
	tshark) echo "-Y kafka" ;;
	tshark-O) echo "-O kafka" ;;
	tshark-json) echo "-T json" ;;
	*) echo "$1" ;;
	esac
}

row() { # mode
	local m=$1 wm wl wh cm cl ch
	if [ -z "${W[$m]:-}" ]; then
		return
	fi
	read -r wm wl wh <<<"$(stat3 "${W[$m]}")"
	read -r cm cl ch <<<"$(stat3 "${C[$m]}")"
	MW[$m]=$wm MC[$m]=$cm
	awk -v l="$(label "$m")" -v wm="$wm" -v wl="$wl" -v wh="$wh" -v cm="$cm" -v cl="$cl" -v ch="$ch" \
		-v s="$size" -v p="$packets" -v x="$exchanges" -v r="${R[$m]}" -v st="${S[$m]}" 'BEGIN {
		printf "  %-11s %6.2f %11s %6.2f %11s %8.1f %8.0f %8.0f %7.2f %6.2f %6.1f %3s\n", l,
			wm, sprintf("%.2f-%.2f", wl, wh), cm, sprintf("%.2f-%.2f", cl, ch),
			(wm > 0 ? s / 1e6 / wm : 0), (wm > 0 ? p / wm : 0),
			(wm > 0 && x > 0 ? x / wm : 0), (x > 0 ? cm * 1e6 / x : 0),
			(s > 0 ? cm * 1e9 / s : 0), r / 1024, st
	}'
}

ratio() { # numerator-mode denominator-mode: median wall ratio/median cpu ratio
	if [ -n "${MW[$1]:-}" ] && [ -n "${MW[$2]:-}" ]; then
		awk -v a="${MW[$1]}" -v b="${MW[$2]}" -v c="${MC[$1]}" -v d="${MC[$2]}" \
			'BEGIN { printf "%s/%s", (b > 0 ? sprintf("%.2f", a / b) : "-"), (d > 0 ? sprintf("%.2f", c / d) : "-") }'
	else
		printf '%s' -
	fi
}

echo "$("$KWIRE" version 2>/dev/null | head -1), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(loadavg)"
[ $have_tshark = 1 ] && tshark --version 2>/dev/null | head -1
runs=runs; [ "$BENCH_RUNS" = 1 ] && runs=run
echo "$BENCH_RUNS $runs of each mode, interleaved; wall, cpu: median seconds and range over the runs (cpu: user+system);"
echo "MB/s, pkt/s, ex/s: capture bytes (10^6), packets, Kafka exchanges per median wall second;"
echo "us/ex, ns/B: median cpu microseconds per exchange, nanoseconds per capture byte;"
echo "RSS: largest peak resident set size of the runs in MiB; ex: largest exit status;"
echo "ratios: of median wall times / of median cpu times"

for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "bench-e2e: cannot read $f" >&2
		exit 2
	fi
	size=$(stat -c %s "$f")
	cat "$f" >/dev/null # into the page cache
	W=() C=() R=() S=() RUNS=() MW=() MC=()
	capture_args "$f"
	packets=$("$BASELINE" "$f" | sed -n 's/.*: \([0-9]*\) packets.*/\1/p')
	packets=${packets:-0}
	summary=$("$KWIRE" read --color=never --port "$ports" "${kw_tls[@]}" "$f" 2>/dev/null | tail -4)
	exchanges=$(sed -n 's/.*exchanges \([0-9]*\).*/\1/p' <<<"$summary" | head -1)
	exchanges=${exchanges:-0}
	conns=$(sed -n 's/.*connections \([0-9]*\).*/\1/p' <<<"$summary" | head -1)
	mb=$((size / 1000000))
	modes=()
	for m in $ALL_MODES; do
		wanted "$m" || continue
		[[ $m == stats* ]] && [ $have_stats = 0 ] && continue
		if [ -r "${f%.pcap}.keylog" ] && { [ "$m" = frames ] || [ "$m" = inflate ]; }; then
			continue
		fi
		if [[ $m == tshark* ]] && { [ $have_tshark = 0 ] || [ "$mb" -gt "$BENCH_TSHARK_MAX_MB" ]; }; then
			continue
		fi
		modes+=("$m")
	done
	load0=$(loadavg)
	for ((i = 1; i <= BENCH_RUNS; i++)); do
		for m in "${modes[@]}"; do
			run_once "$m" "$f" "$i"
		done
	done

	echo
	echo "$(basename "$f"): $mb MB, $packets packets, ${conns:-?} connections, $exchanges exchanges (ports $ports)"
	echo "load average $load0 before, $(loadavg) after"
	printf '  %-11s %6s %11s %6s %11s %8s %8s %8s %7s %6s %6s %3s\n' \
		mode wall range cpu range MB/s pkt/s ex/s us/ex ns/B RSS ex
	for m in cat gopacket copy baseline frames inflate read read-V read-json stats read@1 read-V@1 read-json@1 stats@1 tshark tshark-O tshark-json; do
		row "$m"
	done
	printf '  %-18s %11s %11s %11s %11s\n' "ratio" read read-V read-json stats
	printf '  %-18s %11s %11s %11s %11s\n' "tshark/kwire" "$(ratio tshark read)" "$(ratio tshark-O read-V)" "$(ratio tshark-json read-json)" ""
	printf '  %-18s %11s %11s %11s %11s\n' "kwire/gopacket" "$(ratio read gopacket)" "$(ratio read-V gopacket)" "$(ratio read-json gopacket)" "$(ratio stats gopacket)"
	printf '  %-18s %11s %11s %11s %11s\n' "kwire/copy" "$(ratio read copy)" "$(ratio read-V copy)" "$(ratio read-json copy)" "$(ratio stats copy)"
	printf '  %-18s %11s %11s %11s %11s\n' "kwire/baseline" "$(ratio read baseline)" "$(ratio read-V baseline)" "$(ratio read-json baseline)" "$(ratio stats baseline)"
	printf '  %-18s %11s %11s %11s %11s\n' "kwire/floor" "$(ratio read frames)" "$(ratio read-V inflate)" "$(ratio read-json inflate)" "$(ratio stats inflate)"
	printf '  %-18s %11s %11s %11s %11s\n' "1 core/all cores" "$(ratio read@1 read)" "$(ratio read-V@1 read-V)" "$(ratio read-json@1 read-json)" "$(ratio stats@1 stats)"
	echo "  runs (wall/cpu seconds@1-minute load average before the run):"
	for m in "${modes[@]}"; do
		printf '    %-11s%s\n' "$(label "$m")" "${RUNS[$m]}"
	done
done
