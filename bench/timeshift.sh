#!/usr/bin/env bash
# Time-shifted listeners against live ones: one station (a local MP3 file, looped) with an archive in a temporary
# folder (60 s files), WARMUP s archived first, then rounds of N HTTP listeners of /NAME.opus ("live") and of
# /NAME.opus?offset=K ("shifted", K spread evenly over OFFSET_MIN…OFFSET_MAX s), in the same run, the two kinds
# interleaved (the first kind alternates from round to round). In each round the listeners connect over RAMP s, then
# stay HOLD s; the steady window runs from RAMP + SETTLE s to RAMP + HOLD s (every listener connected, its 2 s burst
# long done), the ramp window before it. bench/timeshift.py is the client (one process, every listener checked page
# by page as Ogg) and reads the server's /proc and status at the windows' edges.
#
#   bench/timeshift.sh                           # N=200, WARMUP=180, ROUNDS=3, HOLD=60: about 11 minutes
#   WARMUP=40 HOLD=20 ROUNDS=1 N=50 bench/timeshift.sh   # a quick check
#   UPSTREAM=/path/to/file.mp3 bench/timeshift.sh
#
# Environment: N (200), ROUNDS (3), WARMUP (180 s archived before the first round), HOLD (60), RAMP (10), SETTLE (5),
# OFFSET_MIN (5), OFFSET_MAX (WARMUP - 10), SOURCES (40: listener i connects from 127.0.0.(2 + i mod SOURCES), as
# the server takes at most 8 time-shifted listeners per address), UPSTREAM (Tests/Fixtures/stereo-44k-128k.mp3),
# CAP_CHECK (1: at the end, 10 time-shifted listeners from one address, of which the server should refuse 2),
# RADIO_RELAY, KEEP_TMP=1 (keeps the archive, the server's log and the rounds' JSON).
#
# Printed per round: a line from the client; at the end, the table (medians over the rounds of each kind, the ratio
# shifted/live, each round's value) and the server's log lines that are not a listener arriving or leaving normally
# (refusals, slow listeners, warnings), counted. Loopback only; the server and the clients are stopped by PID;
# bounded: WARMUP + ROUNDS × 2 × (RAMP + HOLD + 5) s and a minute more.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RR=$(relay_binary)
bench_defaults N=200 ROUNDS=3 WARMUP=180 HOLD=60 RAMP=10 SETTLE=5 OFFSET_MIN=5 SOURCES=40 CAP_CHECK=1 \
    "UPSTREAM=$REPO_ROOT/Tests/Fixtures/stereo-44k-128k.mp3"
bench_defaults OFFSET_MAX=$((WARMUP - 10))
require_int --positive N ROUNDS WARMUP HOLD RAMP SOURCES OFFSET_MAX
require_int SETTLE OFFSET_MIN
((SETTLE < HOLD)) || die "SETTLE must be below HOLD"
((OFFSET_MIN < OFFSET_MAX && OFFSET_MAX < WARMUP)) || die "need OFFSET_MIN < OFFSET_MAX < WARMUP"
((SOURCES <= 200)) || die "SOURCES must be at most 200 (127.0.0.2 … 127.0.0.201)"
(((N + SOURCES - 1) / SOURCES <= 8)) || say "warning: more than 8 listeners per source address: expect refusals"
UPSTREAM=$(abs_path "$UPSTREAM")
[[ -r $UPSTREAM ]] || die "no upstream file $UPSTREAM"
require_binaries "radio-relay:$RR"
require_tools python3 python3 curl
require_python python3 9
raise_nofile
need_nofile $((2 * N + 100)) "2 N + 100"
bench_tmpdir --keepable timeshift
TMP=$BENCH_TMP
bench_traps

NAME=ts
HTTP_PORT=$(bench_free_port)
STATUS_PORT=$(bench_free_port)
[[ $HTTP_PORT != "$STATUS_PORT" ]] || STATUS_PORT=$(bench_free_port)
CLIENT="$REPO_ROOT/bench/timeshift.py"
# The server's lines for a listener arriving or leaving normally (and their rate limit's notes).
ROUTINE='connected \(|starts at|left after .*(closed by listener|: left)( \(and [0-9]+ more like it\))?$'
ROUTINE+='|listener (connects|leaves) repeated'

echo "== time-shifted vs live HTTP listeners: N=$N, $ROUNDS rounds of each, ramp $RAMP s, hold $HOLD s (steady from" \
    "$((RAMP + SETTLE)) s to $((RAMP + HOLD)) s), offsets $OFFSET_MIN…$OFFSET_MAX s, $SOURCES source addresses;" \
    "$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "   $(machine), $(cpu_model); $(relay_version "$RR"); upstream $(basename "$UPSTREAM") (looped)"
"$RR" serve --name "$NAME" --port none --http "127.0.0.1:$HTTP_PORT" --status "127.0.0.1:$STATUS_PORT" \
    --upstream "$UPSTREAM" --archive "$TMP/archive" --archive-span 60 --log-level info >"$TMP/server.log" 2>&1 &
RR_PID=$!
bench_track "$RR_PID"
wait_until 15 "$RR_PID" port_busy "$HTTP_PORT" || { cat "$TMP/server.log" >&2; die "radio-relay did not start"; }
say "archiving for $WARMUP s before the first round"
sleep "$WARMUP"
kill -0 "$RR_PID" 2>/dev/null || { cat "$TMP/server.log" >&2; die "radio-relay stopped during the warm-up"; }
# The oldest offset asked for must be in the archive (else every shifted listener gets a 416).
code=$(curl -s -o /dev/null -w '%{http_code}' -m 1 "http://127.0.0.1:$HTTP_PORT/$NAME.opus?offset=$OFFSET_MAX" || true)
[[ $code == 200 ]] || die "offset $OFFSET_MAX is not served ($code): the archive does not reach that far back"
sleep 1

# round KIND ROUND: one round of N listeners, its JSON in $TMP/KIND-ROUND.json.
round() {
    local kind=$1 r=$2
    local args=(listen --port "$HTTP_PORT" --mount "/$NAME.opus" -n "$N" --ramp "$RAMP"
        --settle "$SETTLE" --hold "$HOLD" --sources "$SOURCES" --first-source 2 --server-pid "$RR_PID"
        --status-port "$STATUS_PORT" --label "round $r $kind" --json "$TMP/$kind-$r.json")
    [[ $kind == shifted ]] && args+=(--offsets "$OFFSET_MIN:$OFFSET_MAX")
    local before
    before=$(wc -l <"$TMP/server.log")
    timeout --kill-after=10 $((RAMP + HOLD + 60)) python3 "$CLIENT" "${args[@]}" || true
    kill -0 "$RR_PID" 2>/dev/null || { tail -20 "$TMP/server.log" >&2; die "radio-relay stopped in round $r ($kind)"; }
    [[ -s $TMP/$kind-$r.json ]] || die "no report from round $r ($kind)"
    # the server's lines of this round that are not an arrival or a normal departure
    tail -n +"$((before + 1))" "$TMP/server.log" | grep -v -E "$ROUTINE" | sed "s/^/   [round $r $kind] /" \
        >>"$TMP/notes" || true
    sleep 3   # the sockets closed, the server's lists emptied
}
: >"$TMP/notes"
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then round live "$r"; round shifted "$r"; else round shifted "$r"; round live "$r"; fi
done

echo
python3 "$CLIENT" summary "$TMP"/live-*.json "$TMP"/shifted-*.json
if [[ $CAP_CHECK == 1 ]]; then
    echo
    echo "== the per-address cap: 10 time-shifted listeners from 127.0.0.250 (the server takes 8 per address)"
    before=$(wc -l <"$TMP/server.log")
    python3 "$CLIENT" listen --port "$HTTP_PORT" --mount "/$NAME.opus" -n 10 --offsets "$OFFSET_MIN:$OFFSET_MAX" \
        --ramp 1 --settle 1 --hold 3 --sources 1 --first-source 250 --server-pid "$RR_PID" \
        --status-port "$STATUS_PORT" --label "cap check" --json "$TMP/cap.json" || true
    tail -n +"$((before + 1))" "$TMP/server.log" | grep -E 'refused' | sed 's/^/   /' || true
fi
echo
echo "== the server's log: lines other than listeners arriving and leaving normally, per round"
if [[ -s $TMP/notes ]]; then
    sed -E 's/#[0-9]+ 127\.0\.0\.[0-9]+:[0-9]+/#ID ADDR/; s/after [0-9.]+ s, [0-9]+ bytes/after T s, B bytes/' \
        "$TMP/notes" | sed -E 's/ [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} / /' | sort | uniq -c | sort -rn | head -30
else
    echo "   none"
fi
echo "   refusal lines in the whole log: $(grep -c -E 'refused' "$TMP/server.log" || true)"
