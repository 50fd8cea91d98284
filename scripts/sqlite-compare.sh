#!/usr/bin/env bash
# sqlite-compare.sh: the same rows (key, value) in sqlite3 and in a streamdbg
# savepoint, the same queries timed on both: a full scan with a value filter
# and a point lookup (sqlite3 without an index, then with one).
#
#   scripts/sqlite-compare.sh SAVEPOINT_DIR [WORK_DIR]
#
# SAVEPOINT_DIR is one of our savepoints with a keyed state of (key, value)
# rows, e.g. the one BenchmarkQuery writes:
#
#   STREAMDBG_BENCH_DIR=/tmp/sdbg-bench go test ./query/querytest -run '^$' -bench BenchmarkQuery/point -benchtime 1x
#   scripts/sqlite-compare.sh /tmp/sdbg-bench/sum-1000000-kg128
#
# The rows are exported with `streamdbg query ... --format csv`. Times are
# wall clock of one process run each (best of RUNS, default 3), so they
# include starting the process and opening the savepoint or database.
set -euo pipefail

sp=${1:?usage: $0 SAVEPOINT_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
runs=${RUNS:-3}
key=${KEY:-key_662}
root=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v sqlite3 >/dev/null; then
	apt-get install -y sqlite3 >/dev/null
fi
mkdir -p "$work"
bin=$work/streamdbg
(cd "$root" && go build -o "$bin" .)

# best_ms CMD...: the fastest of $runs runs of CMD (output discarded), in ms.
best_ms() {
	local best=
	for _ in $(seq "$runs"); do
		local t0 t1
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		local ms=$(((t1 - t0) / 1000000))
		if [[ -z $best || $ms -lt $best ]]; then best=$ms; fi
	done
	echo "$best"
}

scan_q="SELECT key, value FROM keyed_state WHERE value % 1000 = 7"
point_q="SELECT value FROM keyed_state WHERE key = '$key'"
sql_scan="SELECT key, value FROM kv WHERE value % 1000 = 7;"
sql_point="SELECT value FROM kv WHERE key = '$key';"

db=$work/kv.db
csv=$work/kv.csv
rm -f "$db"
t0=$(date +%s%N)
"$bin" query "$sp" "SELECT key, value FROM keyed_state" --format csv >"$csv"
t1=$(date +%s%N)
rows=$(($(wc -l <"$csv") - 1))
sqlite3 "$db" <<SQL
CREATE TABLE kv (key TEXT NOT NULL, value INTEGER NOT NULL);
.import --csv --skip 1 $csv kv
SQL
t2=$(date +%s%N)

ours_start=$(best_ms "$bin" query "$sp" "SELECT COUNT(*) FROM state_meta" --format csv)
lite_start=$(best_ms sqlite3 "$db" "SELECT 1;")
ours_scan=$(best_ms "$bin" query "$sp" "$scan_q" --format csv)
ours_point=$(best_ms "$bin" query "$sp" "$point_q" --format csv)
lite_scan=$(best_ms sqlite3 "$db" "$sql_scan")
lite_point=$(best_ms sqlite3 "$db" "$sql_point")
sqlite3 "$db" "CREATE INDEX kv_key ON kv (key);"
lite_point_idx=$(best_ms sqlite3 "$db" "$sql_point")

# The answers must agree.
ours_n=$("$bin" query "$sp" "$scan_q" --format csv | tail -n +2 | wc -l)
lite_n=$(sqlite3 "$db" "$sql_scan" | wc -l)
ours_v=$("$bin" query "$sp" "$point_q" --format csv | tail -n +2)
lite_v=$(sqlite3 "$db" "$sql_point")
if [[ $ours_n != "$lite_n" || $ours_v != "$lite_v" ]]; then
	echo "results differ: scan $ours_n vs $lite_n rows, $key $ours_v vs $lite_v" >&2
	exit 1
fi

rate() { awk -v n="$rows" -v ms="$1" 'BEGIN { if (ms == 0) ms = 1; printf "%.2fM", n / ms / 1000 }'; }
echo "rows: $rows (export $(((t1 - t0) / 1000000)) ms, sqlite3 import $(((t2 - t1) / 1000000)) ms); scan keeps $ours_n rows; $key = $ours_v"
printf '%-34s %12s %12s\n' "query (ms, best of $runs runs)" streamdbg sqlite3
printf '%-34s %12s %12s\n' "start, open, trivial query" "$ours_start" "$lite_start"
printf '%-34s %12s %12s\n' "scan value % 1000 = 7" "$ours_scan" "$lite_scan"
printf '%-34s %12s %12s\n' "  rows/s" "$(rate "$ours_scan")" "$(rate "$lite_scan")"
printf '%-34s %12s %12s\n' "point key = '$key' (no index)" "$ours_point" "$lite_point"
printf '%-34s %12s %12s\n' "point key = '$key' (index)" "-" "$lite_point_idx"
