#!/bin/bash
# `-o PATH` writes what PATH is: a character device, a FIFO and /dev/stdout in place (never
# replaced by a regular file), a symlink's target (the link stays a link), a regular file atomically
# with its mode and owner kept; nothing else is left in the folder. Devices are made in a scratch
# folder (a /dev/null clone), never the machine's own. Ownership needs root; as another user that
# part is skipped with a note. usage: output_targets.sh GPUFLEET_BINARY
set -uo pipefail
BIN=$1
D=$(mktemp -d /tmp/gpufleet-output.XXXXXX)
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; ls -la "$D"; exit 1; }
kind() { stat -c %F "$1"; }

# A character device: stays one.
if [ "$(id -u)" = 0 ]; then
  mknod -m 666 "$D/null" c 1 3
  "$BIN" plan -o "$D/null" || fail "plan -o a character device exited $?"
  [ "$(kind "$D/null")" = "character special file" ] || fail "the device became a $(kind "$D/null")"
fi

# A FIFO: written through, stays a FIFO.
mkfifo "$D/fifo"
cat "$D/fifo" > "$D/from-fifo" &
reader=$!
timeout 30 "$BIN" plan --format json -o "$D/fifo" || fail "plan -o a FIFO exited $?"
wait "$reader"
[ "$(kind "$D/fifo")" = fifo ] || fail "the FIFO became a $(kind "$D/fifo")"
grep -q '"schema": "gpufleet.plan/v1"' "$D/from-fifo" || fail "nothing came through the FIFO"

# A symlink to a regular file, and a dangling one: the target is written, the link stays.
echo old > "$D/target.json"
ln -s target.json "$D/link"
"$BIN" plan --format json -o "$D/link" || fail "plan -o a symlink exited $?"
[ -L "$D/link" ] || fail "the symlink was replaced"
grep -q gpufleet.plan/v1 "$D/target.json" || fail "the symlink's target was not written"
ln -s new.json "$D/dangling"
"$BIN" plan --format json -o "$D/dangling" || fail "plan -o a dangling symlink exited $?"
[ -L "$D/dangling" ] && grep -q gpufleet.plan/v1 "$D/new.json" || fail "dangling symlink"

# An existing file keeps its mode (and, as root, its owner and group).
echo old > "$D/kept.txt"
chmod 0640 "$D/kept.txt"
if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$D/kept.txt"; fi
before=$(stat -c '%a %U %G' "$D/kept.txt")
"$BIN" plan -o "$D/kept.txt" || fail "plan -o an existing file exited $?"
after=$(stat -c '%a %U %G' "$D/kept.txt")
[ "$before" = "$after" ] || fail "mode/owner changed: '$before' -> '$after'"
grep -q "Memory per GPU" "$D/kept.txt" || fail "the existing file was not rewritten"

# /dev/stdout is the descriptor, not a file reopened by name: an appending redirect keeps its start.
echo first > "$D/appended"
"$BIN" plan -o /dev/stdout >> "$D/appended" || fail "plan -o /dev/stdout exited $?"
[ "$(head -n 1 "$D/appended")" = first ] || fail "-o /dev/stdout truncated the shell's file"
grep -q "Memory per GPU" "$D/appended" || fail "-o /dev/stdout wrote nothing"
out=$("$BIN" plan -o /dev/stdout | cat) && [[ "$out" == *"Memory per GPU"* ]] || fail "-o /dev/stdout into a pipe"

# Symlinks planted at the temporary names a writer might use (the old NAME.tmp.PID, and the
# dot-prefixed form with the same PID; exec keeps the shell's PID): the victim they point at is
# never written and the output is a regular file. The temporary's random part cannot be planted.
mkdir "$D/planted"
echo victim > "$D/planted/victim"
bash -c 'cd "$1" && ln -s victim out.txt.tmp.$$ && ln -s victim .out.txt.tmp.$$ && exec "$2" plan -o out.txt' \
  _ "$D/planted" "$(realpath "$BIN")" || fail "plan -o beside planted symlinks exited $?"
[ "$(cat "$D/planted/victim")" = victim ] || fail "written through a planted symlink"
[ -f "$D/planted/out.txt" ] && [ ! -L "$D/planted/out.txt" ] || fail "out.txt is not a regular file"
grep -q "Memory per GPU" "$D/planted/out.txt" || fail "out.txt was not written"
rm -rf "$D/planted"

# A directory is refused with one line; no temporary is left anywhere.
mkdir "$D/dir"
out=$("$BIN" plan -o "$D/dir" 2>&1); rc=$?
[ $rc = 2 ] && [ "$out" = "gpufleet: $D/dir: is a directory" ] || fail "directory: rc=$rc '$out'"
left=$(find "$D" -name '*.tmp.*' | wc -l)
[ "$left" = 0 ] || fail "temporaries left behind"
echo "ok: device, FIFO, symlinks, planted temporaries, mode/owner, /dev/stdout, directory"
