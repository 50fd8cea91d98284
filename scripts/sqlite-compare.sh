#!/usr/bin/env bash
# sqlite-compare.sh: the same rows (key_i → i) in sqlite3 and in a streamdbg
# savepoint, the same filtered full scan (value % 1000 = 7) and point lookup
# (key = 'key_k') on both, in one run: BenchmarkVsSQLite in
# query/querytest. Both sides are timed the same way, without process start
# or opening (sqlite3's own .timer; streamdbg on a savepoint opened once, as
# the CLI and the browser do); caches are warm (one untimed run of each);
# the sides alternate, so load on the machine hits both. It prints rows/s of
# both and streamdbg/sqlite3 (above 1: streamdbg is faster), and the point
# lookup's ms of both (sqlite3 without an index).
#
#   scripts/sqlite-compare.sh [ENTRIES] [WORK_DIR]
#
# ENTRIES defaults to 1000000 (10000000 for the 10M figures); WORK_DIR keeps
# the savepoint and the database for later runs.
set -euo pipefail

entries=${1:-1000000}
work=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v sqlite3 >/dev/null; then
	apt-get install -y sqlite3 >/dev/null
fi
mkdir -p "$work"
cd "$root"
uptime
STREAMDBG_BENCH_ENTRIES=$entries STREAMDBG_BENCH_DIR=$work \
	go test ./query/querytest -run '^$' -bench 'BenchmarkVsSQLite' -benchtime "${TIMES:-5x}" -count "${COUNT:-2}"
