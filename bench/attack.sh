#!/usr/bin/env bash
# Bounded attacks on radio-relay: one server per attack, its CPU, RSS growth and an honest listener, PASS/FAIL.
#
#   bench/attack.sh                              # all 11 attacks: about 3 minutes
#   bench/attack.sh forged-proxy dns-blackhole   # just these
#   bench/attack.sh --list                       # the attacks' names
#   RADIO_RELAY=/tmp/old/radio-relay bench/attack.sh
#
# Environment:
#   RADIO_RELAY     the binary (default: the static release build when built, else .build/release/radio-relay)
#   ATTACK_TIMEOUT  seconds the whole run may take before it is stopped (default 480)
#   MARKDOWN        also write the markdown table to this file
#   KEEP_TMP        1: keep the work directory (configs, server logs, captures) and print its path
#   PYTHON          python3 (3.9+, standard library)
#
# Each attack (bench/attack.py's docstring and bench/README.md say what each sends and expects) writes its own config,
# starts `radio-relay --config FILE` on 127.0.0.1 (status and HTTP addresses included), attacks it from 127.0.0.2
# (or from an upstream the script runs on 127.0.0.1) for at most 20 s, and measures the server's CPU (% of one
# core, /proc/PID/stat) and RSS growth (VmRSS) over the attack, and whether an honest HTTP listener from 127.0.0.1
# kept a valid stream (oggz-validate). A row passes with CPU <= 25 %, RSS growth <= 10 MB, a valid honest stream
# and the attack's own expectation. It prints one table, then the same as markdown; exit 1 if any row fails.
# dns-blackhole needs root (unshare -m, a bind mount over /etc/resolv.conf, UDP port 53 on 127.0.0.2). Every process
# is started here and stopped by its PID; nothing is left listening.
set -euo pipefail
export LC_ALL=C

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RR=$(relay_binary)
PY=${PYTHON:-python3}
ATTACK_TIMEOUT=${ATTACK_TIMEOUT:-480}
HELPER=$REPO_ROOT/bench/attack.py

if [[ ${1:-} == --list ]]; then exec "$PY" "$HELPER" --list; fi
known=" $("$PY" "$HELPER" --list | tr '\n' ' ')"
for name in "$@"; do
    [[ $known == *" $name "* ]] || die "unknown attack '$name'; known:$known"
done
[[ $ATTACK_TIMEOUT =~ ^[0-9]+$ ]] || die "ATTACK_TIMEOUT must be a whole number of seconds (got '$ATTACK_TIMEOUT')"

require_binaries "radio-relay:$RR"
require_tools "ffmpeg, oggz-tools, opus-tools, util-linux, coreutils" ffmpeg oggz-validate opusdec unshare timeout
require_python "$PY" 9
"$PY" -c 'import socket; socket.socket().bind(("127.0.0.2", 0))' 2>/dev/null \
    || die "cannot bind 127.0.0.2 (the attacker's address): the loopback interface must hold 127.0.0.0/8"

bench_tmpdir --keepable radio-relay-attack
WORK=$BENCH_TMP
# The servers the helper started, should it have been killed before stopping them itself (it writes their PIDs).
bench_on_exit() {
    if [[ -f $WORK/pids ]]; then
        while read -r pid; do bench_stop_pid "$pid"; done <"$WORK/pids"
    fi
}
bench_traps

echo "attack: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(machine), load $(loadavg)"
echo "attack: $RR ($(relay_version "$RR")); work directory $WORK"

args=(--radio-relay "$RR" --repo "$REPO_ROOT" --work "$WORK")
[[ -n ${MARKDOWN:-} ]] && args+=(--markdown "$(abs_path "$MARKDOWN")")
status=0
timeout --signal=TERM --kill-after=15 "$ATTACK_TIMEOUT" "$PY" "$HELPER" "${args[@]}" "$@" &
HELPER_PID=$!
bench_track "$HELPER_PID"
wait "$HELPER_PID" || status=$?
bench_stop "$HELPER_PID"
exit "$status"
