#!/usr/bin/env bash
# io_uring vs epoll + sendmsg for the per-listener writes of the station network loop, measured with a minimal C
# program (bench/uring/fanwrite.c), not with the server.
#
#   bench/uring.sh                            # N 2000 and 10000, FLUSH 100/300/1000 ms, every mode 3 times
#   NS=10000 FLUSHES=300 ROUNDS=5 bench/uring.sh
#   HOLD=10 MODES="sendmsg uring" bench/uring.sh
#
# Environment:
#   NS          listener counts (default "2000 10000")
#   FLUSHES     flush intervals in ms: each listener is written once per interval, phases spread (default "100 300 1000")
#   MODES       sendmsg uring uringfix zerocopy (default all four; see fanwrite.c)
#   ROUNDS      runs per mode and (N, FLUSH); within a round the modes run back to back, and the order rotates from
#               round to round (default 3)
#   HOLD        seconds of steady state measured per run (default 20); SETTLE seconds after the connects first (3)
#   PAGE, PAGE_MS   page size in bytes and page period (default 1600 bytes every 100 ms: 128 kbit/s, the server's
#               100 ms pages)
#   ENTRIES     io_uring SQ entries (default 4096)
#   READER_NAP_MS   the reader drains its sockets in rounds READER_NAP_MS apart (default 10), so the writer's sends
#               almost never wake it: like remote listeners, whose wake-ups cost the relay nothing. 0: the reader
#               sleeps in epoll_wait and every burst of sends wakes it, and on a shared core it then preempts the
#               writer between two sendmsg calls (not between two io_uring batches), which flatters io_uring: the
#               ivcsw column (the writer's involuntary context switches in the hold) shows it.
#
# Every run is one fanwrite process on 127.0.0.1: the writer (measured) and a forked reader that drains the N sockets
# with epoll and counts bytes (its CPU is reported apart). The writer's CPU (user and system, all its threads) over the
# hold is divided by N x hold seconds: CPU microseconds per listener-second. A run counts only if every byte written
# was received (the reader drains to EOF after the writer closes). Medians per mode, and each mode over sendmsg: the
# ratio of the medians and the median of the per-round ratios (paired runs, fairer when something else shares the
# machine).
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_defaults "NS=2000 10000" "FLUSHES=100 300 1000" "MODES=sendmsg uring uringfix zerocopy" ROUNDS=3 HOLD=20 \
    SETTLE=3 PAGE=1600 PAGE_MS=100 ENTRIES=4096 READER_NAP_MS=10
require_int ROUNDS HOLD SETTLE PAGE PAGE_MS ENTRIES READER_NAP_MS
((ROUNDS >= 1 && HOLD >= 1)) || die "ROUNDS and HOLD must be at least 1"
for n in $NS; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "NS holds '$n', not a count"; done
for f in $FLUSHES; do [[ $f =~ ^[1-9][0-9]*$ ]] || die "FLUSHES holds '$f', not a number of ms"; done
read -r -a MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
    case $m in sendmsg | uring | uringfix | zerocopy) ;; *) die "unknown mode '$m'" ;; esac
done
[[ ${MODE_LIST[0]} == sendmsg ]] || die "MODES must start with sendmsg (the baseline of the ratios)"

# liburing and a C compiler, only when missing.
if [[ ! -f /usr/include/liburing.h ]] || ! command -v cc >/dev/null; then
    say "installing liburing-dev and gcc"
    apt-get install -y liburing-dev gcc >/dev/null || die "apt-get install liburing-dev gcc failed"
fi

raise_nofile
max_n=0
for n in $NS; do ((n > max_n)) && max_n=$n; done
(($(ulimit -n) >= max_n + 64)) || die "open-file limit $(ulimit -n) is below $max_n + 64 (each process holds N sockets)"

bench_tmpdir --keepable uring
TMP=$BENCH_TMP
bench_traps

BIN=$TMP/fanwrite
cc -O2 -Wall -o "$BIN" "$REPO_ROOT/bench/uring/fanwrite.c" -luring || die "cannot build fanwrite.c"

kv() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2; exit }'; }
fmt() { if [[ $1 == - ]]; then echo -; else calc "$1" "$2"; fi; }

runs=0
for _ in $NS; do for _ in $FLUSHES; do runs=$((runs + ROUNDS * ${#MODE_LIST[@]})); done; done
echo "== io_uring vs sendmsg fan-out writes, loopback, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model)," \
     "liburing $(dpkg-query -W -f '${Version}' liburing-dev 2>/dev/null || echo '?'), ulimit -n $(ulimit -n)"
echo "   page $PAGE bytes every $PAGE_MS ms ($(calc "$PAGE * 8 / $PAGE_MS" 0) kbit/s), hold $HOLD s after $SETTLE s," \
     "reader nap $READER_NAP_MS ms," \
     "$runs runs of about $((HOLD + SETTLE + 2)) s; load average at the start $(loadavg)"
echo "   (other work on the machine shares the cores: the modes of a round run back to back, so ratios stay fair)"
echo
printf '%6s %6s %5s %-9s %9s %8s %8s %9s %8s %10s %8s %s\n' N FLUSH round mode "us/l-s" user sys "reader" "B/write" \
    "us/write" "ivcsw" "check"

RES=$TMP/results
: >"$RES"
for n in $NS; do
    for flush in $FLUSHES; do
        for ((r = 0; r < ROUNDS; r++)); do
            count=${#MODE_LIST[@]}
            for ((k = 0; k < count; k++)); do
                mode=${MODE_LIST[$(((k + r) % count))]}
                out=$TMP/run.out
                timeout --kill-after=5 $((HOLD + SETTLE + 90)) "$BIN" --mode "$mode" -n "$n" --flush-ms "$flush" \
                    --page "$PAGE" --page-ms "$PAGE_MS" --hold "$HOLD" --settle "$SETTLE" --entries "$ENTRIES" \
                    --reader-nap-ms "$READER_NAP_MS" >"$out" 2>"$TMP/run.err" &
                pid=$!
                bench_track "$pid"
                set +e
                wait "$pid"
                rc=$?
                set -e
                bench_stop "$pid"
                line=$(cat "$out")
                if [[ -z $line ]]; then
                    cat "$TMP/run.err" >&2
                    die "fanwrite --mode $mode -n $n --flush-ms $flush failed (exit $rc) with no report"
                fi
                ok=$(kv "$line" ok)
                check="ok"
                [[ $rc == 0 && $ok == 1 ]] || check="FAILED (exit $rc): written $(kv "$line" bytes_written), received $(kv "$line" bytes_received), errors $(kv "$line" errors)"
                printf '%6s %6s %5s %-9s %9s %8s %8s %9s %8s %10s %8s %s\n' "$n" "$flush" "$((r + 1))" "$mode" \
                    "$(kv "$line" us_per_ls)" "$(kv "$line" user_per_ls)" "$(kv "$line" sys_per_ls)" \
                    "$(kv "$line" r_us_per_ls)" "$(kv "$line" bytes_per_write)" "$(kv "$line" us_per_write)" \
                    "$(kv "$line" ivcsw)" "$check"
                echo "round=$r ok_run=$([[ $check == ok ]] && echo 1 || echo 0) $line" >>"$RES"
            done
        done
    done
done

# Medians over the runs that passed the byte check.
col() {  # N FLUSH MODE KEY: the values of KEY over that cell's good runs
    awk -v n="$1" -v f="$2" -v m="$3" -v k="$4" '{
        delete kv; for (i = 1; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
        if (kv["n"] == n && kv["flush_ms"] == f && kv["mode"] == m && kv["ok_run"] == 1) print kv[k] }' "$RES"
}
paired() {  # N FLUSH MODE: per-round ratios MODE/sendmsg of us_per_ls
    awk -v n="$1" -v f="$2" -v m="$3" '{
        delete kv; for (i = 1; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
        if (kv["n"] != n || kv["flush_ms"] != f || kv["ok_run"] != 1) next
        if (kv["mode"] == m) a[kv["round"]] = kv["us_per_ls"]; if (kv["mode"] == "sendmsg") b[kv["round"]] = kv["us_per_ls"] }
        END { for (r in a) if ((r in b) && b[r] > 0) print a[r] / b[r] }' "$RES"
}
med() { local v; v=$(col "$@"); [[ -n $v ]] && median $v || echo "-"; }

echo
echo "== medians: writer CPU us per listener-second (user / sys), reader's apart; ratios to sendmsg"
printf '%6s %6s %-9s %4s %9s %8s %8s %9s %9s %8s %8s\n' N FLUSH mode runs "us/l-s" user sys "reader" "us/write" \
    "ratio" "paired"
bad=0
for n in $NS; do
    for flush in $FLUSHES; do
        base=$(med "$n" "$flush" sendmsg us_per_ls)
        for mode in "${MODE_LIST[@]}"; do
            good=$(col "$n" "$flush" "$mode" us_per_ls | wc -l)
            ((good == ROUNDS)) || bad=1
            m=$(med "$n" "$flush" "$mode" us_per_ls)
            ratio=- pr=-
            if [[ $m != - && $base != - ]]; then
                ratio=$(calc "$m / $base" 2)
                p=$(paired "$n" "$flush" "$mode")
                [[ -n $p ]] && pr=$(calc "$(median $p)" 2)
            fi
            printf '%6s %6s %-9s %4s %9s %8s %8s %9s %9s %8s %8s\n' "$n" "$flush" "$mode" "$good/$ROUNDS" \
                "$(fmt "$m" 1)" "$(fmt "$(med "$n" "$flush" "$mode" user_per_ls)" 1)" \
                "$(fmt "$(med "$n" "$flush" "$mode" sys_per_ls)" 1)" \
                "$(fmt "$(med "$n" "$flush" "$mode" r_us_per_ls)" 1)" \
                "$(fmt "$(med "$n" "$flush" "$mode" us_per_write)" 2)" "$ratio" "$pr"
        done
    done
done
echo "   load average at the end $(loadavg); decision rule: adopt io_uring if it saves >= 15 % (ratio <= 0.85)" \
     "at N=10000, FLUSH=300"
((bad == 0)) || { echo "uring: some runs failed the byte check; their figures are left out" >&2; exit 1; }
