#!/usr/bin/env bash
# perf-targets.sh: issue 15's performance targets, each measured ROUNDS
# times by its benchmark (both sides of every ratio in the same run, as
# each benchmark's comment says), with the median, lowest and highest
# figure of the rounds beside the bound. One run of a ratio on a shared
# 2-core machine moves by about a tenth either way; the median of several
# is the figure to compare with the bound.
#
#   scripts/perf-targets.sh [ROUNDS] [WORK_DIR]
#
# ROUNDS defaults to 5 (about 15 minutes on 2 cores). WORK_DIR keeps the
# test binaries, the raw benchmark lines (raw.txt) and the query
# benchmarks' savepoints; the 10M-entry one (STREAMDBG_BENCH_ENTRIES) is
# left to scripts/sqlite-compare.sh and BenchmarkVsSQLite's README line.
set -euo pipefail

rounds=${1:-5}
work=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
raw=$work/raw.txt
: >"$raw"

build() { (cd "$root" && go test -c -o "$work/$2.test" "$1"); }
build ./runtime/session session
build ./fixtures fixtures
build ./savepoint savepoint
build ./savepoint/flink flink
build ./query/querytest querytest

# bench PKGDIR BINARY PATTERN BENCHTIME [ENV...]: one run, its lines in raw.
bench() {
	local dir=$1 bin=$2 pattern=$3 benchtime=$4
	shift 4
	(cd "$root/$dir" && env "$@" "$work/$bin.test" -test.run X -test.bench "$pattern" -test.benchtime "$benchtime") |
		grep '^Benchmark' >>"$raw"
}

uptime
for i in $(seq "$rounds"); do
	echo "round $i of $rounds"
	bench runtime/session session 'CheckpointCost$' 2x
	bench runtime/session session 'Back$/replay-499$' 1s
	bench runtime/session session 'Continue$' 4x
	bench fixtures fixtures 'WordCount/ratios$' 20x
	bench savepoint savepoint 'Savepoint/(read|write)-ratio$' 1s
	bench savepoint/flink flink 'OpenScan/synthetic-100MB-ratio$' 4x
	bench query/querytest querytest 'VsSQLite' 4x STREAMDBG_BENCH_DIR="$work/q"
done

# report BENCH METRIC BOUND [below|above [SCALE LABEL]]: the metric over
# the rounds (divided by SCALE and named LABEL: ns/op as ms/op).
report() {
	local bench=$1 metric=$2 bound=$3 want=${4:-below} scale=${5:-1} label=${6:-$2}
	awk -v bench="$bench" -v metric="$metric" -v scale="$scale" '
		$1 ~ "^" bench "(-[0-9]+)?$" { for (i = 3; i <= NF; i++) if ($i == metric) print $(i - 1) / scale }' "$raw" |
		sort -g |
		awk -v bench="$bench" -v metric="$label" -v bound="$bound" -v want="$want" '
			{ v[++n] = $1 }
			END {
				if (n == 0) { printf "%-40s %-20s no figure\n", bench, metric; exit }
				med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				ok = (want == "below") ? (v[n] <= bound) : (v[1] >= bound)
				printf "%-40s %-20s median %10.3f  lowest %10.3f  highest %10.3f  bound %s %s: %s\n",
					bench, metric, med, v[1], v[n], (want == "below" ? "<=" : ">="), bound,
					ok ? "every round within" : "NOT every round within"
			}'
}

echo
report BenchmarkCheckpointCost default/off 1.3
report BenchmarkBack/replay-499 ns/op 50 below 1000000 ms/op
report BenchmarkContinue continue/run-wall 1.5
report BenchmarkContinue continue/run 1.5
report BenchmarkWordCount/ratios heap/baseline 2
report BenchmarkWordCount/ratios heap/count-only 3
report BenchmarkWordCount/ratios pebble/baseline 5
report BenchmarkSavepoint/read-ratio x-plain 0.8 above
report BenchmarkSavepoint/write-ratio x-plain 0.8 above
report BenchmarkOpenScan/synthetic-100MB-ratio scan-MB/s 200 above
report BenchmarkVsSQLite/scan streamdbg/sqlite3 1 above
report BenchmarkVsSQLite/point streamdbg-ms/op 2
echo "raw benchmark lines: $raw"
