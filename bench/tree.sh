#!/usr/bin/env bash
# Scale-out: one root radio-relay, EDGES edges relaying it without re-encoding, HAProxy in front of the edges (the
# choices of deploy/haproxy.cfg), and the root pushing to Icecast 2; all on 127.0.0.1, separate ports.
#
#   bench/tree.sh                                                   # N=3000: about 2.5 minutes
#   N=600 DURATION=20 KILL_DURATION=25 ICE_DURATION=10 RECORD=0 bench/tree.sh   # a quick check
#
# Environment:
#   N, DURATION        listeners through HAProxy and seconds of scenario A                            (3000, 60)
#   KILL_DURATION      seconds of the kill scenario's N listeners (40); KILL_AT s in (15), one edge gets SIGKILL
#   ICE_N, ICE_DURATION  Icecast listeners and seconds of scenario B                                  (500, 30)
#   ICE_RAMP           seconds over which scenario B's listeners connect (5): Icecast listens with a backlog of 5,
#                      so a crowd at once waits for SYN retransmits (1 s) and measures that, not the stream
#   EDGES              edges behind HAProxy (3)
#   BASE_PORT          first of the ports on 127.0.0.1 (18400): root +0, root status +1, edge i +10+i, edge i status
#                      +20+i, HAProxy +30, HAProxy stats +31, Icecast +40
#   WARMUP             seconds between everything being up and the first load (5)
#   RADIO_RELAY, LOAD  binaries (default: the static release builds when built, else .build/release/radio-relay,
#                      .build/release/radio-relay-load)
#   RECORD             1: append the figures to bench/README.md's tree.sh section (default); 0: do not
#   KEEP_TMP=1         keep the temp dir (configs, logs, JSON reports)
#
# The processes: Icecast 2 (Debian's icecast2, generated config); the root (`serve`, the bundled demo at real time,
# --status, --push to Icecast's /tree.opus); each edge (`serve --upstream tcp://127.0.0.1:ROOT --proxy-protocol yes
# --status …`); HAProxy (`haproxy -db`), whose defaults and backend options are copied from deploy/haproxy.cfg, with
# 127.0.0.1 servers, a stats page to read its view of the edges, and maxconn sized to N.
#
# Scenario A: N raw-TCP listeners (radio-relay-load: every byte checked as Ogg) through HAProxy for DURATION s.
#   Each process's pipeline thread (pipe-main) CPU from /proc/PID/task/*/stat around the window: each edge's against
#   the root's (target <= 0.2: an edge relays pages, the root decodes and encodes); the whole processes' CPU too.
#   Per-edge listener counts from each edge's /status.json halfway through.
# Kill: N listeners through HAProxy for KILL_DURATION s; KILL_AT s in, the last edge gets SIGKILL. The listeners of
#   the other edges must see no gap (the longest stall of the listeners still open at the end < 1 s); the killed
#   edge's listeners are disconnected (as many as its /status.json had); at once a second load tool connects as many
#   listeners through HAProxy (they reconnect): each must connect and get audio within 2 s (p99).
# Scenario B: the edges and HAProxy are stopped; ICE_N HTTP listeners read the root's push from Icecast's /tree.opus:
#   valid Ogg Opus (0 errors) and first audio.
# Every process is started by the script and stopped by its PID on exit; loopback only.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMAND_LINE="$(for v in N DURATION KILL_DURATION KILL_AT ICE_N ICE_DURATION ICE_RAMP EDGES BASE_PORT WARMUP; do
    if [[ -n ${!v:-} ]]; then printf '%s=%s ' "$v" "${!v}"; fi; done)bench/tree.sh"

bench_defaults N=3000 DURATION=60 KILL_DURATION=40 KILL_AT=15 ICE_N=500 ICE_DURATION=30 ICE_RAMP=5 EDGES=3 \
    BASE_PORT=18400 WARMUP=5 RECORD=1
RR=$(relay_binary)
LOAD=$(load_binary)
DEPLOY_CFG=$REPO_ROOT/deploy/haproxy.cfg

require_int --positive N DURATION KILL_DURATION KILL_AT ICE_N ICE_DURATION EDGES BASE_PORT
require_int WARMUP ICE_RAMP
((EDGES >= 2 && EDGES <= 9)) || die "EDGES must be 2 to 9"
((KILL_DURATION >= KILL_AT + 6)) || die "KILL_DURATION must be at least KILL_AT + 6"
((BASE_PORT + 40 <= 65535)) || die "BASE_PORT too high"

require_binaries "radio-relay:$RR" "radio-relay-load:$LOAD"
need_tools haproxy icecast2 jq curl
command -v haproxy >/dev/null || die "haproxy is missing (Debian: haproxy; .ci/deps --bench)"
id icecast2 >/dev/null 2>&1 || die "no icecast2 user (Debian's icecast2 package creates it)"
[[ -f $DEPLOY_CFG ]] || die "missing $DEPLOY_CFG"

# Every listener is a descriptor in the load tool, two in HAProxy and one on an edge.
raise_nofile 65536
need_nofile $((4 * N + 200)) "4N+200 (HAProxy); lower N"

ROOT_PORT=$BASE_PORT ROOT_STATUS=$((BASE_PORT + 1))
FRONT=$((BASE_PORT + 30)) STATS=$((BASE_PORT + 31)) ICE_PORT=$((BASE_PORT + 40))
EDGE_PORT=() EDGE_STATUS=()
for ((i = 1; i <= EDGES; i++)); do EDGE_PORT[i]=$((BASE_PORT + 10 + i)) EDGE_STATUS[i]=$((BASE_PORT + 20 + i)); done
for port in "$ROOT_PORT" "$ROOT_STATUS" "$FRONT" "$STATS" "$ICE_PORT" "${EDGE_PORT[@]}" "${EDGE_STATUS[@]}"; do
    port_busy "$port" && die "port $port on 127.0.0.1 is already in use (set BASE_PORT)"
done

# ---------------------------------------------------------------- processes and cleanup
bench_tmpdir --keepable tree
TMP=$BENCH_TMP
chmod 755 "$TMP"
bench_traps

healthy() { curl -sf -m 1 "http://127.0.0.1:$1/health" >/dev/null 2>&1; }
listeners() { curl -sf -m 2 "http://127.0.0.1:$1/status.json" | jq '.stations[0].listeners' 2>/dev/null || echo "-"; }
# HAProxy's stats CSV, one line per proxy/server: NAME STATUS RETRIES REDISPATCHES CONNECT-ERRORS.
haproxy_stats() {
    curl -sf -m 2 "http://127.0.0.1:$STATS/stats;csv" | awk -F, '
        NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 == "edges" { print $2, $col["status"], $col["wretr"] + 0, $col["wredis"] + 0, $col["econ"] + 0 }'
}
edges_up() { [[ $(haproxy_stats | awk '$1 ~ /^edge/ && $2 == "UP"' | wc -l) == "$EDGES" ]]; }
tck=$CLK_TCK
secs() { awk -v t="$1" -v k="$tck" 'BEGIN { printf "%.2f", t / k }'; }
verdict() { if awk "BEGIN { exit !($1) }"; then echo "met"; else echo "MISSED"; fi; }
# Stream errors in a load report: Ogg errors of every kind and sequence gaps beyond the join gap.
errors() { jq -r '[.ogg.crc_errors, .ogg.framing_errors, .ogg.start_errors, .ogg.serial_changes,
                   .ogg.gaps_beyond_join, .ogg.granule_regressions] | add' "$1"; }

# load NAME PORT COUNT SECONDS [ARGS...]: the load tool in the background (LOAD_PID), report in $TMP/NAME.{json,txt}.
load() {
    local name=$1 port=$2 count=$3 seconds=$4
    shift 4
    timeout --kill-after=10 $((seconds + 120)) "$LOAD" --port "$port" -n "$count" --duration "$seconds" \
        --json "$TMP/$name.json" "$@" >"$TMP/$name.txt" 2>&1 &
    LOAD_PID=$!
    bench_track "$LOAD_PID"
}
# finish PID: waits for a load tool; its exit status in LOAD_RC.
finish() { LOAD_RC=0; wait "$1" || LOAD_RC=$?; bench_stop "$1"; }

echo "== tree: root + $EDGES edges + HAProxy + Icecast on 127.0.0.1, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model)"
echo "   $(relay_version "$RR"); $(haproxy -v | head -1 | cut -d' ' -f1-3); $(icecast2 -v 2>&1 | head -1)"
echo "   load $(loadavg) before the run; ulimit -n $(ulimit -n)"

# ---------------------------------------------------------------- Icecast
PASSWORD=tree$RANDOM$RANDOM
bench_icecast_config "$TMP" "$ICE_PORT" "$PASSWORD" $((ICE_N + 10)) 65535 524288
start_icecast "$TMP" "$ICE_PORT"

# ---------------------------------------------------------------- root and edges
root_args=(serve --bind 127.0.0.1 --port "$ROOT_PORT" --status "127.0.0.1:$ROOT_STATUS"
    --push "icecast://source:$PASSWORD@127.0.0.1:$ICE_PORT/tree.opus")
"$RR" "${root_args[@]}" >"$TMP/root.log" 2>&1 &
ROOT_PID=$!
bench_track "$ROOT_PID"
wait_until 15 "$ROOT_PID" healthy "$ROOT_STATUS" || { cat "$TMP/root.log" >&2; die "the root did not start"; }
EDGE_PID=()
for ((i = 1; i <= EDGES; i++)); do
    "$RR" serve --bind 127.0.0.1 --port "${EDGE_PORT[i]}" --upstream "tcp://127.0.0.1:$ROOT_PORT" \
        --proxy-protocol yes --status "127.0.0.1:${EDGE_STATUS[i]}" --max-listeners 0 >"$TMP/edge$i.log" 2>&1 &
    EDGE_PID[i]=$!
    bench_track "${EDGE_PID[i]}"
done
for ((i = 1; i <= EDGES; i++)); do
    wait_until 15 "${EDGE_PID[i]}" healthy "${EDGE_STATUS[i]}" || { cat "$TMP/edge$i.log" >&2; die "edge $i did not start"; }
done
wait_until 15 "$ROOT_PID" icecast_mounted "$ICE_PORT" "$PASSWORD" /tree.opus || { cat "$TMP/root.log" "$TMP/icecast-log/error.log" >&2; die "no /tree.opus on Icecast"; }

# ---------------------------------------------------------------- HAProxy, from deploy/haproxy.cfg's choices
# section NAME: the body of deploy/haproxy.cfg's section NAME, without comments and blank lines.
section() {
    awk -v name="$1" '/^[^ \t#]/ { on = ($0 == name); next } on && !/^[ \t]*(#|$)/ { print }' "$DEPLOY_CFG"
}
{
    echo "# Generated by bench/tree.sh from $DEPLOY_CFG: its defaults and backend options, 127.0.0.1 servers."
    echo "global"
    echo "    maxconn $((2 * N + 100))"
    echo "defaults"
    section defaults | grep -Ev '^[[:space:]]*(log |option tcplog)'
    echo "frontend listeners"
    echo "    bind 127.0.0.1:$FRONT"
    section "frontend listeners" | grep -E '^[[:space:]]*backlog '
    echo "    default_backend edges"
    echo "backend edges"
    section "backend edges" | grep -Ev '^[[:space:]]*server '
    for ((i = 1; i <= EDGES; i++)); do
        echo "    server edge$i 127.0.0.1:${EDGE_PORT[i]} check port ${EDGE_STATUS[i]}"
    done
    echo "listen stats"
    echo "    mode http"
    echo "    bind 127.0.0.1:$STATS"
    echo "    stats enable"
    echo "    stats uri /stats"
} >"$TMP/haproxy.cfg"
haproxy -c -q -f "$TMP/haproxy.cfg" >"$TMP/haproxy-check.txt" 2>&1 || { cat "$TMP/haproxy-check.txt" >&2; die "bad HAProxy config"; }
haproxy -db -f "$TMP/haproxy.cfg" >"$TMP/haproxy.log" 2>&1 &
HAPROXY_PID=$!
bench_track "$HAPROXY_PID"
wait_until 15 "$HAPROXY_PID" edges_up || { cat "$TMP/haproxy.log" >&2; haproxy_stats >&2; die "HAProxy did not see the edges UP"; }
echo "   root: radio-relay ${root_args[*]/$PASSWORD/PASS}"
echo "   edges: radio-relay serve --upstream tcp://127.0.0.1:$ROOT_PORT --proxy-protocol yes --status … on" \
    "${EDGE_PORT[*]}"
echo "   HAProxy on $FRONT: $(grep -E '^[[:space:]]*(balance|default-server|option redispatch|retries|timeout connect)' \
    "$TMP/haproxy.cfg" | sed 's/^ *//' | paste -sd ';' | sed 's/;/; /g')"
sleep "$WARMUP"

# ---------------------------------------------------------------- scenario A: N listeners through HAProxy
echo
echo "== A: $N listeners through HAProxy for $DURATION s"
declare -A PIPE0 PROC0
snapshot() {  # the pipeline-thread and process ticks of the root and edges, into PIPE0/PROC0 or PIPE1/PROC1
    local -n pipe=$1 proc=$2
    local i
    pipe[root]=$(thread_ticks "$ROOT_PID" 'pipe-*') proc[root]=$(process_ticks "$ROOT_PID")
    for ((i = 1; i <= EDGES; i++)); do
        pipe[edge$i]=$(thread_ticks "${EDGE_PID[i]}" 'pipe-*') proc[edge$i]=$(process_ticks "${EDGE_PID[i]}")
    done
    proc[haproxy]=$(process_ticks "$HAPROXY_PID") proc[push]=$(thread_ticks "$ROOT_PID" 'push-*')
}
snapshot PIPE0 PROC0
load A "$FRONT" "$N" "$DURATION"
A_PID=$LOAD_PID
sleep $((DURATION / 2))
A_COUNTS=()
for ((i = 1; i <= EDGES; i++)); do A_COUNTS[i]=$(listeners "${EDGE_STATUS[i]}"); done
A_ROOT_LISTENERS=$(listeners "$ROOT_STATUS")
finish "$A_PID"
A_RC=$LOAD_RC
declare -A PIPE1 PROC1
snapshot PIPE1 PROC1
for p in "$ROOT_PID" "${EDGE_PID[@]}" "$HAPROXY_PID"; do kill -0 "$p" 2>/dev/null || die "process $p died in scenario A"; done
cat "$TMP/A.txt"
d_pipe() { echo $((PIPE1[$1] - PIPE0[$1])); }
d_proc() { echo $((PROC1[$1] - PROC0[$1])); }
ROOT_PIPE=$(d_pipe root) ROOT_PROC=$(d_proc root)
printf '   %-8s %14s %14s %12s\n' process "pipeline CPU s" "process CPU s" "listeners"
printf '   %-8s %14s %14s %12s\n' root "$(secs "$ROOT_PIPE")" "$(secs "$ROOT_PROC")" "$A_ROOT_LISTENERS (edges)"
WORST_RATIO=0
for ((i = 1; i <= EDGES; i++)); do
    printf '   %-8s %14s %14s %12s\n' "edge$i" "$(secs "$(d_pipe "edge$i")")" "$(secs "$(d_proc "edge$i")")" "${A_COUNTS[i]}"
    WORST_RATIO=$(awk -v a="$(d_pipe "edge$i")" -v b="$ROOT_PIPE" -v w="$WORST_RATIO" \
        'BEGIN { r = (b > 0) ? a / b : 99; printf "%.3f", (r > w) ? r : w }')
done
printf '   %-8s %14s %14s\n' haproxy "" "$(secs "$(d_proc haproxy)")"
echo "   (root: its push thread took $(secs "$(d_proc push)") s of its process CPU)"
EDGE_PIPE_MEAN=$(awk -v k="$tck" -v n="$EDGES" "BEGIN { printf \"%.2f\", ($(for ((i = 1; i <= EDGES; i++)); do printf '%s+' "$(d_pipe "edge$i")"; done)0) / n / k }")
EDGE_PROC_MEAN=$(awk -v k="$tck" -v n="$EDGES" "BEGIN { printf \"%.2f\", ($(for ((i = 1; i <= EDGES; i++)); do printf '%s+' "$(d_proc "edge$i")"; done)0) / n / k }")

# ---------------------------------------------------------------- kill one edge
VICTIM=$EDGES
echo
echo "== kill: $N listeners through HAProxy for $KILL_DURATION s; edge$VICTIM gets SIGKILL $KILL_AT s in"
load K1 "$FRONT" "$N" "$KILL_DURATION"
K1_PID=$LOAD_PID
K1_START=$SECONDS
sleep "$KILL_AT"
K_COUNTS=()
for ((i = 1; i <= EDGES; i++)); do K_COUNTS[i]=$(listeners "${EDGE_STATUS[i]}"); done
KILLED=${K_COUNTS[VICTIM]}
[[ $KILLED =~ ^[0-9]+$ && $KILLED -gt 0 ]] || die "edge$VICTIM reports no listeners before the kill ($KILLED)"
read -r _ _ RETR0 REDIS0 ECON0 < <(haproxy_stats | awk '$1 == "BACKEND"') || RETR0=0 REDIS0=0 ECON0=0
KILL_T=$(date +%s.%N)
kill -KILL "${EDGE_PID[VICTIM]}"
{ wait "${EDGE_PID[VICTIM]}"; } 2>/dev/null || true  # reaped here, without the shell's "Killed" line
bench_stop "${EDGE_PID[VICTIM]}"
# The killed edge's listeners reconnect through HAProxy at once: as many new listeners, to the end of the first run.
load K2 "$FRONT" "$KILLED" $((KILL_DURATION - KILL_AT - 1))
K2_PID=$LOAD_PID
DOWN_AFTER=-
for _ in $(seq 100); do
    if haproxy_stats | awk -v s="edge$VICTIM" '$1 == s && $2 ~ /^DOWN/ { found = 1 } END { exit !found }'; then
        DOWN_AFTER=$(calc "$(date +%s.%N) - $KILL_T" 1)
        break
    fi
    sleep 0.1
done
sleep 2
K_AFTER=()
for ((i = 1; i < EDGES; i++)); do K_AFTER[i]=$(listeners "${EDGE_STATUS[i]}"); done
finish "$K2_PID"
K2_RC=$LOAD_RC
finish "$K1_PID"
K1_RC=$LOAD_RC
read -r _ _ RETR1 REDIS1 ECON1 < <(haproxy_stats | awk '$1 == "BACKEND"') || RETR1=0 REDIS1=0 ECON1=0
echo "-- the $N listeners (edge$VICTIM killed $KILL_AT s in; $((SECONDS - K1_START)) s)"
cat "$TMP/K1.txt"
echo "-- the $KILLED listeners reconnecting right after the kill"
cat "$TMP/K2.txt"
echo "   listeners before the kill: $(for ((i = 1; i <= EDGES; i++)); do printf 'edge%d %s  ' "$i" "${K_COUNTS[i]}"; done)"
echo "   listeners after the reconnects: $(for ((i = 1; i < EDGES; i++)); do printf 'edge%d %s  ' "$i" "${K_AFTER[i]}"; done)"
echo "   HAProxy marked edge$VICTIM DOWN ${DOWN_AFTER} s after the kill; retries $((RETR1 - RETR0))," \
    "redispatches $((REDIS1 - REDIS0)), connect errors $((ECON1 - ECON0)) meanwhile"

# ---------------------------------------------------------------- scenario B: the root's push, read from Icecast
for ((i = EDGES; i >= 1; i--)); do bench_stop "${EDGE_PID[i]}"; done
bench_stop "$HAPROXY_PID"
echo
echo "== B: $ICE_N HTTP listeners on Icecast's /tree.opus (the root's push) for $ICE_DURATION s, connecting over $ICE_RAMP s"
ICE0=$(process_ticks "$ICE_PID")
load B "$ICE_PORT" "$ICE_N" "$ICE_DURATION" --http /tree.opus --ramp "$ICE_RAMP"
finish "$LOAD_PID"
B_RC=$LOAD_RC
ICE_CPU=$(secs $(($(process_ticks "$ICE_PID") - ICE0)))
cat "$TMP/B.txt"
PUSH=$(curl -sf -m 2 "http://127.0.0.1:$ROOT_STATUS/status.json" \
    | jq -r '.stations[0].pushes[0] | "\(.state), \(.bytes_sent) bytes sent, \(.reconnects) reconnects"')
echo "   root's push: $PUSH; Icecast CPU $ICE_CPU s"

# ---------------------------------------------------------------- table
A=$TMP/A.json K1=$TMP/K1.json K2=$TMP/K2.json B=$TMP/B.json
A_ERR=$(errors "$A") K1_ERR=$(errors "$K1") K2_ERR=$(errors "$K2") B_ERR=$(errors "$B")
A_DISC=$(load_field "$A" .unexpected_disconnects_normal)
A_STUCK=$(load_field "$A" .stuck_at_end)
K1_DISC=$(load_field "$K1" .unexpected_disconnects_normal)
K1_OPEN_MAX=$(load_field "$K1" .stall_ms_open_at_end.max)
K1_OPEN_P99=$(load_field "$K1" .stall_ms_open_at_end.p99)
K2_P99=$(load_field "$K2" .first_audio_ms.p99)
K2_FAIL=$(jq '.connect_failures + .http_refused + (.listeners - .connected)' "$K2")
B_CONN=$(load_field "$B" .connected)
B_DISC=$(load_field "$B" .unexpected_disconnects_normal)
A_CONN=$(load_field "$A" .connected)
nofig() { [[ $1 == - ]] && echo "no figure" || verdict "$2"; }
SPREAD=$(IFS=/; echo "${A_COUNTS[*]}")
row() { printf '%-52s %-26s %s\n' "$@" | sed 's/ *$//'; }
{
    echo "== summary: $COMMAND_LINE ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores)"
    row "figure" "measured" "target"
    row "A: listeners through HAProxy, connected" "$A_CONN of $N" "all: $(verdict "$A_CONN == $N")"
    row "A: stream errors (Ogg, gaps), disconnects, stuck" "$A_ERR, $A_DISC, $A_STUCK" \
        "0: $(verdict "$A_ERR + $A_DISC + $A_STUCK == 0")"
    row "A: first audio p50 / p99 ms" "$(load_field "$A" .first_audio_ms.p50) / $(load_field "$A" .first_audio_ms.p99)" ""
    row "A: stall p99 / max ms" "$(load_field "$A" .stall_ms.p99) / $(load_field "$A" .stall_ms.max)" ""
    row "A: listeners per edge (status.json, mid-run)" "$SPREAD" ""
    row "A: root pipeline CPU s ($DURATION s, transcoding)" "$(secs "$ROOT_PIPE")" ""
    row "A: edge pipeline CPU s (mean of $EDGES)" "$EDGE_PIPE_MEAN" ""
    row "A: edge / root pipeline CPU (worst edge)" "$WORST_RATIO" "<= 0.2: $(verdict "$WORST_RATIO <= 0.2")"
    row "A: process CPU s, edge (mean) / root" "$EDGE_PROC_MEAN / $(secs "$ROOT_PROC")" \
        "ratio $(calc "$EDGE_PROC_MEAN / ($ROOT_PROC / $tck)")"
    row "A: HAProxy process CPU s" "$(secs "$(d_proc haproxy)")" ""
    row "kill: disconnected / the killed edge's listeners" "$K1_DISC / $KILLED of $N" \
        "equal: $(verdict "$K1_DISC >= $KILLED - $KILLED / 100 - 1 && $K1_DISC <= $KILLED + $KILLED / 100 + 1")"
    row "kill: others' longest stall p99 / max ms" "$K1_OPEN_P99 / $K1_OPEN_MAX" \
        "max < 1000: $(nofig "$K1_OPEN_MAX" "$K1_OPEN_MAX < 1000")"
    row "kill: stream errors, all $N" "$K1_ERR" "0: $(verdict "$K1_ERR == 0")"
    row "kill: reconnecting $KILLED, connect failures" "$K2_FAIL" "0: $(verdict "$K2_FAIL == 0")"
    row "kill: reconnecting, first audio p50 / p99 ms" "$(load_field "$K2" .first_audio_ms.p50) / $K2_P99" \
        "p99 <= 2000: $(nofig "$K2_P99" "$K2_P99 <= 2000")"
    row "kill: reconnecting, errors / disconnects" "$K2_ERR / $(load_field "$K2" .unexpected_disconnects_normal)" \
        "0: $(verdict "$K2_ERR + $(load_field "$K2" .unexpected_disconnects_normal) == 0")"
    row "kill: HAProxy marked the edge DOWN after s" "$DOWN_AFTER" "(inter 1s fall 2)"
    row "B: Icecast listeners connected" "$B_CONN of $ICE_N" "all: $(verdict "$B_CONN == $ICE_N")"
    row "B: stream errors (Ogg Opus), disconnects" "$B_ERR, $B_DISC" "0: $(verdict "$B_ERR + $B_DISC == 0")"
    row "B: first audio p50 / p99 ms" "$(load_field "$B" .first_audio_ms.p50) / $(load_field "$B" .first_audio_ms.p99)" ""
    row "load tool exit codes A / kill / reconnect / B" "$A_RC / $K1_RC / $K2_RC / $B_RC" \
        "0 / 1 (the disconnects) / 0 / 0"
} >"$TMP/summary.txt"
echo
cat "$TMP/summary.txt"
MISSED=$(grep -c 'MISSED' "$TMP/summary.txt" || true)
if ((MISSED == 0)); then echo "result: ok"; else echo "result: $MISSED MISSED"; fi

if [[ $RECORD == 1 ]]; then
    README=$REPO_ROOT/bench/README.md
    MARK='<!-- tree.sh appends its runs above this line -->'
    {
        echo "\`$COMMAND_LINE\`, run on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) cores," \
            "$(cpu_model)):"
        echo
        echo '```'
        tail -n +2 "$TMP/summary.txt"
        echo '```'
        echo
    } >"$TMP/record.md"
    if grep -qF "$MARK" "$README"; then
        awk -v mark="$MARK" -v rec="$TMP/record.md" \
            '$0 == mark { while ((getline line < rec) > 0) print line } { print }' "$README" >"$TMP/README.new"
        cat "$TMP/README.new" >"$README"
    else
        { echo; echo "## \`tree.sh\` runs"; echo; cat "$TMP/record.md"; } >>"$README"
    fi
    echo "tree: figures appended to bench/README.md"
fi
((MISSED == 0))
