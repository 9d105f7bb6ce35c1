#!/bin/bash
# Stops the daemons scripts/start-slurm.sh started for DIR (munged too unless STOP_MUNGE=0).
# usage: scripts/stop-slurm.sh DIR
D=$1; pids=""
for f in "$D"/*.pid; do [ -s "$f" ] && pids="$pids $(cat "$f")"; done
[ "${STOP_MUNGE:-1}" = 1 ] && [ -s /run/munge/munged.pid ] && pids="$pids $(cat /run/munge/munged.pid)"
[ -n "$pids" ] && kill $pids 2>/dev/null
for p in $pids; do for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
exit 0
