#!/usr/bin/env bash
# Listening report benchmark: `radio-relay report` over a week of synthetic access logs as logrotate leaves them
# (one file a day, the five oldest gzipped), LINES lines from LISTENERS distinct listeners; its time, lines per second
# and peak RSS, next to what only reading the same files costs (gzip -dcf, which inflates the .gz files and copies the plain ones).
#
#   bench/report.sh                              # 1 000 000 lines, 12 000 listeners, 3 runs
#   LINES=200000 RUNS=1 bench/report.sh
#   RADIO_RELAY=/path/to/radio-relay KEEP_TMP=1 bench/report.sh
#
# Environment: LINES, LISTENERS, RUNS (medians over them), RADIO_RELAY (default the static release build when built,
# else .build/release), KEEP_TMP=1 keeps the generated logs. Needs python3 (to write the logs), gzip and GNU time.
set -euo pipefail
export LC_ALL=C
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_defaults LINES=1000000 LISTENERS=12000 RUNS=3
RR=$(relay_binary)
require_int --positive LINES LISTENERS RUNS
require_binaries "radio-relay:$RR"
need_tools python3 gzip /usr/bin/time
require_python python3 7

bench_tmpdir --keepable report-bench
TMP=$BENCH_TMP
bench_traps

echo "== radio-relay report: $LINES lines, $LISTENERS listeners, a week in 7 files (5 gzipped), $RUNS runs," \
    "$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine); $(cpu_model); $(relay_version "$RR")"

# The access log lines of a week (from 2026-12-02 00:00 UTC), by the time each listener left, as the server writes
# them: 4 mounts (raw TCP, HTTP, an HLS directory), IDs of one run, 8 % probes, 1 % relay edges, 1 % title events.
python3 - "$TMP" "$LINES" "$LISTENERS" <<'EOF'
import random, sys, time
out, lines, listeners = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(7)
start = 1796169600
agents = ["VLC/3.0.18 LibVLC/3.0.18", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120", "foobar2000/2.1",
          "Lavf/60.3.100", "AppleCoreMedia/1.0.0.21A329 (iPhone; U; CPU OS 17_0 like Mac OS X)"]
leaves = sorted(random.randrange(start, start + 7 * 86400) for _ in range(lines))
days = [open(f"{out}/access.log{'' if d == 6 else '.' + str(6 - d)}", "w") for d in range(7)]
stamp_cache = {}
for number, leave in enumerate(leaves, 1):
    who = random.randrange(listeners)
    kind = random.random()
    seconds = random.randrange(0, 5) if kind < 0.08 else int(random.expovariate(1 / 2400))
    seconds = min(seconds, leave)
    hour = leave - leave % 3600
    if hour not in stamp_cache:
        stamp_cache[hour] = time.strftime("%d/%b/%Y:%H", time.gmtime(hour))
    stamp = f"{stamp_cache[hour]}:{leave % 3600 // 60:02d}:{leave % 60:02d} +0000"
    agent = "radio-relay/1.4 (edge)" if kind > 0.99 else agents[who % len(agents)]
    mount = who % 4
    if kind > 0.98 and kind <= 0.99:
        request = "GET /jazz/events HTTP/1.1"
    elif mount == 0:
        request, agent = "TCP /jazz.opus", "-"
    else:
        request = ["", "GET /jazz.mp3 HTTP/1.1", "GET /jazz/live.m3u8 HTTP/1.1", "GET /news.opus HTTP/1.1"][mount]
    address = f"10.{who >> 16 & 255}.{who >> 8 & 255}.{who & 255}"
    day = min(6, (leave - start) // 86400)
    days[day].write(f'{address} 5f3a09c1-{number} - [{stamp}] "{request}" 200 {seconds * 12000} "-" "{agent}" {seconds}\n')
for f in days:
    f.close()
EOF
for age in 2 3 4 5 6; do gzip "$TMP/access.log.$age"; done
FILES=("$TMP/access.log" "$TMP/access.log.1" "$TMP"/access.log.[2-6].gz)
plain_bytes=$( (cat "$TMP/access.log" "$TMP/access.log.1"; zcat "$TMP"/access.log.*.gz) | wc -c)
on_disk=$(cat "${FILES[@]}" | wc -c)
echo "   logs: $(calc "$plain_bytes / 1048576" 1) MB of text, $(calc "$on_disk / 1048576" 1) MB on disk"

# timed OUTPUT COMMAND...: "elapsed_s max_rss_kb" of one run (GNU time), the command's output in OUTPUT.
timed() {
    local output=$1
    shift
    /usr/bin/time -f '%e %M' -o "$TMP/time" "$@" >"$output"
    cat "$TMP/time"
}
: >"$TMP/runs"
for run in $(seq "$RUNS"); do
    read -r text_s text_kb < <(timed "$TMP/report.txt" "$RR" report "${FILES[@]}")
    read -r json_s json_kb < <(timed "$TMP/report.json" "$RR" report --json "${FILES[@]}")
    read -r read_s _ < <(timed /dev/null gzip -dcf "${FILES[@]}")
    echo "$text_s $text_kb $json_s $json_kb $read_s" >>"$TMP/runs"
    printf '   run %d: text %s s (%s MB peak RSS), --json %s s, reading alone (gzip -dcf) %s s\n' "$run" "$text_s" \
        "$(calc "$text_kb / 1024" 1)" "$json_s" "$read_s"
done
col() { awk -v c="$1" '{ print $c }' "$TMP/runs" | median -f %.2f; }
text_s=$(col 1) rss_kb=$(col 2) json_s=$(col 3) read_s=$(col 5)
counted=$(sed -n 's/^radio-relay listening report: [0-9]* files, \([0-9]*\) lines.*/\1/p' "$TMP/report.txt")
[[ $counted == "$LINES" ]] || die "the report read $counted lines, not $LINES (see $TMP/report.txt)"
echo
sed -n '4,9p' "$TMP/report.txt" | sed 's/^/   /'
grep -E '^(left out|duplicates|unreadable|missing):' "$TMP/report.txt" | sed 's/^/   /'
echo
echo "== medians over $RUNS runs: $LINES lines"
printf '   report (text)   %8s s  %10s lines/s  %6s MB/s of text  peak RSS %s MB\n' "$text_s" \
    "$(calc "$LINES / $text_s" 0)" "$(calc "$plain_bytes / 1048576 / $text_s" 1)" "$(calc "$rss_kb / 1024" 1)"
printf '   report --json   %8s s  %10s lines/s\n' "$json_s" "$(calc "$LINES / $json_s" 0)"
printf '   gzip -dcf       %8s s  (reading and inflating alone)\n' "$read_s"
