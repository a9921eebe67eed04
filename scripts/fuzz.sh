#!/usr/bin/env bash
# Runs every Go fuzz target (func FuzzXxx) for a bounded time, one at a
# time, and prints one line per target: execs, new interesting inputs and
# whether it failed. A failing input is written by Go to the package's
# testdata/fuzz/FuzzXxx/ directory: fix the bug and keep the file as a
# regression seed (see docs/fuzzing.md).
#
# Environment:
#   FUZZTIME          time per target (default 10s; FUZZTIME=10m make fuzz)
#   FUZZMINIMIZETIME  time to minimise each new input (default 1s: short runs
#                     should explore, not polish the corpus)
#   FUZZPARALLEL      fuzzing workers per target (default 1)
#   FUZZ_PKGS         packages to search for targets
#                     (default ./pkg/... ./services/... ./internal/...)
#   FUZZ_MATCH        regexp selecting target names (default ^Fuzz)
#   FUZZLOG           directory for the full output of each run (default: a
#                     new temporary directory, printed at the end)
set -u -o pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-1s}
FUZZPARALLEL=${FUZZPARALLEL:-1}
FUZZ_MATCH=${FUZZ_MATCH:-^Fuzz}
read -r -a pkgs <<<"${FUZZ_PKGS:-./pkg/... ./services/... ./internal/...}"
logdir=${FUZZLOG:-$(mktemp -d "${TMPDIR:-/tmp}/trawler-fuzz.XXXXXX")}
mkdir -p "$logdir"

# `go test -list` prints a package's matching names, then its "ok" line.
listing=$("$GO" test -run '^$' -list "$FUZZ_MATCH" "${pkgs[@]}" 2>&1) || {
	echo "$listing"
	echo "fuzz: listing the targets failed" >&2
	exit 1
}
targets=()
names=()
while IFS= read -r line; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]}"; do targets+=("$pkg $n"); done
		names=()
		;;
	*) names=() ;;
	esac
done <<<"$listing"

if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: no targets match $FUZZ_MATCH in ${pkgs[*]}" >&2
	exit 1
fi
echo "fuzz: ${#targets[@]} targets, $FUZZTIME each, logs in $logdir"

failed=0
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	log="$logdir/$(tr '/' '_' <<<"${pkg#github.com/trawler-crawl/trawler/}").$name.log"
	start=$(date +%s)
	"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" \
		-fuzzminimizetime "$FUZZMINIMIZETIME" -parallel "$FUZZPARALLEL" "$pkg" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	# The last progress line has the totals:
	# "fuzz: elapsed: 10s, execs: 12345 (1234/sec), new interesting: 6 (total: 40)"
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -n 1)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	corpus=$(sed -nE 's/.*\(total: ([0-9]+)\).*/\1/p' <<<"$last")
	status=ok
	detail=""
	if [ $rc -ne 0 ]; then
		status=FAIL
		failed=$((failed + 1))
		input=$(sed -nE 's/.*(testdata\/fuzz\/[^ ]+).*/\1/p' "$log" | head -n 1)
		if [ -n "$input" ]; then
			detail=" input=${pkg#github.com/trawler-crawl/trawler/}/$input"
		fi
		detail="$detail log=$log"
	fi
	printf '%-4s %-45s %-24s execs=%-9s new=%-5s corpus=%-5s %3ss%s\n' \
		"$status" "${pkg#github.com/trawler-crawl/trawler/}" "$name" "${execs:-0}" "${newi:-0}" "${corpus:-0}" "$took" "$detail"
done

echo "fuzz: ${#targets[@]} targets, $failed failed"
[ $failed -eq 0 ]
