#!/usr/bin/env bash
# bench-bombs.sh — run kwire in every mode on the hostile corpus of
# internal/bombs (decompression bombs, huge records, lying sizes, nested
# legacy sets) and print, per capture and mode, wall and CPU time, peak
# RSS, exit status and the first warning; with KWIRE_BOUND_MB, fail when
# a run's peak RSS exceeds it or when a run ends with an exit status
# above 1 (out of memory is exit 2).
#
#   scripts/bench-bombs.sh CAPTURE...        (make bench-bombs runs it)
#
# Environment:
#   KWIRE            kwire binary (default bin/kwire)
#   BOMBS_MODES      modes to run (default: read read-V read-x read-json
#                    stats versions)
#   KWIRE_FLAGS      extra flags for every run (e.g. --max-decode-memory 64MiB)
#   KWIRE_BOUND_MB   the peak RSS each run must stay under, in MiB
#   BOMBS_LIMIT_MB   address-space limit of each run (prlimit --as; default
#                    12288), so that a run that would exhaust the machine
#                    fails instead
#   BOMBS_TIMEOUT    seconds before a run is killed (default 600)
set -u

KWIRE=${KWIRE:-bin/kwire}
BOMBS_MODES=${BOMBS_MODES:-read read-V read-x read-json stats versions}
KWIRE_FLAGS=${KWIRE_FLAGS:-}
KWIRE_BOUND_MB=${KWIRE_BOUND_MB:-}
BOMBS_LIMIT_MB=${BOMBS_LIMIT_MB:-12288}
BOMBS_TIMEOUT=${BOMBS_TIMEOUT:-600}

if [ $# -eq 0 ]; then
	echo "usage: $0 CAPTURE..." >&2
	exit 2
fi
for b in "$KWIRE" /usr/bin/time; do
	if [ ! -x "$b" ]; then
		echo "bench-bombs: $b is missing (make bench-tools builds kwire; apt-get install time)" >&2
		exit 2
	fi
done
limit=()
command -v prlimit >/dev/null 2>&1 && limit=(prlimit --as=$((BOMBS_LIMIT_MB << 20)))

command_for() { # MODE FILE
	# shellcheck disable=SC2206
	local extra=($KWIRE_FLAGS)
	case $1 in
	read) cmd=("$KWIRE" read --color=never "${extra[@]}" "$2") ;;
	read-V) cmd=("$KWIRE" read --color=never -V "${extra[@]}" "$2") ;;
	read-x) cmd=("$KWIRE" read --color=never -x "${extra[@]}" "$2") ;;
	read-json) cmd=("$KWIRE" read --color=never --json "${extra[@]}" "$2") ;;
	stats) cmd=("$KWIRE" stats --color=never "${extra[@]}" "$2") ;;
	versions) cmd=("$KWIRE" versions --color=never "${extra[@]}" "$2") ;;
	*) echo "bench-bombs: unknown mode $1" >&2; exit 2 ;;
	esac
}

echo "$("$KWIRE" version 2>/dev/null | head -1), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')${KWIRE_FLAGS:+, flags: $KWIRE_FLAGS}"
echo "time: wall s; cpu: user+system s; RSS: peak resident set size in MiB (/usr/bin/time); ex: exit status;"
echo "the first 'kwire:' line of stderr (warnings, errors)${KWIRE_BOUND_MB:+; bound: $KWIRE_BOUND_MB MiB}"
fail=0
tf=$(mktemp)
trap 'rm -f "$tf" "$tf.err"' EXIT
for f in "$@"; do
	echo
	echo "$(basename "$f" .pcap): $(stat -c %s "$f") bytes"
	printf '  %-9s %7s %7s %7s %3s  %s\n' mode time cpu RSS ex stderr
	for m in $BOMBS_MODES; do
		command_for "$m" "$f"
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M %x %U %S' -o "$tf" timeout "$BOMBS_TIMEOUT" "${limit[@]}" "${cmd[@]}" >/dev/null 2>"$tf.err"
		t1=$EPOCHREALTIME
		read -r rss status u s < <(tail -1 "$tf")
		msg=$(grep -m1 -E '^(kwire:|fatal error:|panic:|runtime:)' "$tf.err" | cut -c1-150)
		printf '  %-9s %7.2f %7.2f %7.1f %3s  %s\n' "$m" \
			"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
			"$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" \
			"$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$status" "$msg"
		if [ -n "$KWIRE_BOUND_MB" ] && [ "$((rss / 1024))" -gt "$KWIRE_BOUND_MB" ]; then
			echo "  FAIL: $m peak RSS $((rss / 1024)) MiB > bound $KWIRE_BOUND_MB MiB" >&2
			fail=1
		fi
		if [ "$status" -gt 1 ] 2>/dev/null; then
			echo "  FAIL: $m exited $status" >&2
			fail=1
		fi
	done
done
exit $fail
