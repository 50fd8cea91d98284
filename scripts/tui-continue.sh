#!/usr/bin/env bash
# tui-continue.sh: issue 15's "TUI c within 1.5x of headless run", measured
# end to end as a user sees it, on the issue's input (300k lines of 3 to 8
# words over 200k distinct words, the same as BenchmarkContinue's shape,
# made here with a fixed generator, MINSTD, whose products awk's doubles
# hold exactly, so every run has the same lines).
#
# Each trial times, alternately:
#   run: `streamdbg run wordcount --input FILE >/dev/null`, wall time of the
#        whole process (start, reading the input and writing JSON included);
#   c:   the TUI (`streamdbg debug wordcount --input FILE` in a 120x40 tmux
#        pane), from the c key press to the first status line that shows
#        record 300,000 and no longer says running (process start and the
#        first screen are not counted). Polling the pane costs processes
#        (tmux, a subshell) that compete with the TUI for the cores, so the
#        script sleeps through 1.25 times the last run's time before it
#        polls every 20 ms: a c that ended sooner is reported as ending at
#        the first poll, so the quiet start can only make c look slower (a
#        c/run below 1.25 comes out as about 1.25; the bound is 1.5).
# It prints both per trial and c/run of the medians. Process start favours
# the TUI side (run pays it, c does not).
#
#   scripts/tui-continue.sh [TRIALS] [WORK_DIR]
set -euo pipefail

trials=${1:-5}
work=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v tmux >/dev/null; then
	apt-get install -y tmux >/dev/null
fi
mkdir -p "$work"
bin=$work/streamdbg
input=$work/words300k.txt
(cd "$root" && go build -o "$bin" .)
if [ ! -s "$input" ]; then
	awk 'BEGIN {
		x = 15
		for (i = 0; i < 300000; i++) {
			line = "w" ((2 * i) % 200000)
			x = (x * 48271) % 2147483647
			n = 2 + x % 6
			for (j = 0; j < n; j++) {
				x = (x * 48271) % 2147483647
				line = line " w" (x % 200000)
			}
			print line
		}
	}' >"$input"
fi

session=tui-continue-$$
now() { date +%s.%N; }

tui_c() {
	tmux kill-session -t "$session" 2>/dev/null || true
	tmux new-session -d -s "$session" -x 120 -y 40 "$bin debug wordcount --input $input"
	local line i
	for i in $(seq 300); do
		tmux capture-pane -p -t "$session" | head -1 | grep -q "at the start" && break
		sleep 0.1
	done
	local t0 t1
	t0=$(now)
	tmux send-keys -t "$session" c
	sleep "$1"
	for i in $(seq 6000); do
		line=$(tmux capture-pane -p -t "$session" -S 0 -E 0)
		case "$line" in *"record 300,000"*) case "$line" in *running*) ;; *) break ;; esac ;; esac
		sleep 0.02
	done
	t1=$(now)
	tmux kill-session -t "$session" 2>/dev/null || true
	case "$line" in *"record 300,000"*) ;; *)
		echo "tui-continue: the TUI did not reach record 300,000: $line" >&2
		exit 1
		;;
	esac
	echo "$t1 - $t0" | bc
}

headless_run() {
	local t0 t1
	t0=$(now)
	"$bin" run wordcount --input "$input" >/dev/null 2>&1
	t1=$(now)
	echo "$t1 - $t0" | bc
}

uptime
runs=() cs=()
quiet() { echo "1.25 * $1" | bc -l; }
r=
for i in $(seq "$trials"); do
	if ((i % 2)); then
		r=$(headless_run)
		c=$(tui_c "$(quiet "$r")")
	else
		c=$(tui_c "$(quiet "$r")") # the last trial's run
		r=$(headless_run)
	fi
	runs+=("$r") cs+=("$c")
	printf 'trial %d: run %.2f s, c %.2f s, c/run %.2f\n' "$i" "$r" "$c" "$(echo "$c / $r" | bc -l)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mr=$(median "${runs[@]}")
mc=$(median "${cs[@]}")
printf 'median: run %.2f s, c %.2f s, c/run %.2f (bound 1.5)\n' "$mr" "$mc" "$(echo "$mc / $mr" | bc -l)"
