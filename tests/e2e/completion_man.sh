#!/usr/bin/env bash
# Shell completion and man pages (cli/docgen) against the commands themselves:
#   - no drift: every flag that `gpufleet PATH --help` prints, for every command path (bench's
#     forwarded commands included, whose help comes from gpufleet-bench), is completed for that
#     path and described in the command's man page;
#   - completion at work in bash: commands, subcommands, flags, enum values (--flag VALUE and
#     --flag=VALUE), emit targets, and file names where a value is free;
#   - every man page renders with no groff or man warning (what lintian runs);
#   - the zsh script parses in zsh.
# Usage: completion_man.sh GPUFLEET
set -euo pipefail
BIN=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BIN" completion bash > "$WORK/gpufleet.bash"
"$BIN" completion zsh > "$WORK/_gpufleet"
mkdir "$WORK/man"
"$BIN" man-pages "$WORK/man" --date 2026-01-01

# ---- completion in bash
cat > "$WORK/complete.sh" << 'EOF'
source "$1"
cd "$2"
c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _gpufleet; echo "${COMPREPLY[*]}"; }
EOF
complete_is() { # EXPECTED WORDS...
  local want=$1 got
  shift
  got=$(bash -c "source '$WORK/complete.sh' '$WORK/gpufleet.bash' '$WORK'; c $*")
  [[ $got == "$want" ]] || fail "completing '$*': got '$got', want '$want'"
}
complete_is "plan topo emit check agent sim bench completion" gpufleet "''"
complete_is "topo" gpufleet to
complete_is "show matrix nccl-xml lint capture affinity" gpufleet topo "''"
complete_is "step goodput" gpufleet sim "''"
complete_is "text json markdown html" gpufleet plan --format "''"
complete_is "json" gpufleet plan --format = j
complete_is "--format" gpufleet plan -o out.json --for
complete_is "sbatch slurm-conf" gpufleet emit s
complete_is "nccl" gpufleet bench collective --backend n
complete_is "--backend" gpufleet bench pairs --back
complete_is "bash zsh" gpufleet completion "''"
# A free value (a file) is left to bash's file-name completion (complete -o default).
complete_is "" gpufleet plan -o "''"
echo "   bash completion: commands, flags, values"

# ---- no drift between --help, completion and man pages
paths=$(sed -n '/^_gpufleet_flags() {/,/^}/s/^    "\([^"]*\)") REPLY=.*/\1/p' "$WORK/gpufleet.bash")
checked=0
while read -r path; do
  [[ -z $path ]] && continue
  # shellcheck disable=SC2086  # the path is words
  help=$("$BIN" $path --help 2>&1) || fail "gpufleet $path --help failed"
  # The option column of the Options section: "  -o,--output TEXT    Write ...".
  flags=$(echo "$help" | awk '/^Options:/ { on = 1; next } /^[^ ]/ { on = 0 }
    on && /^  -/ { n = split($1, names, ","); for (i = 1; i <= n; i++) if (names[i] ~ /^--/) print names[i] }' |
    sed 's/=.*//' | sort -u)
  listed=$(bash -c "source '$WORK/gpufleet.bash'; _gpufleet_flags '$path'; echo \"\$REPLY\"")
  page=$WORK/man/gpufleet-${path%% *}.1.gz
  [[ -f $page ]] || fail "no man page for gpufleet ${path%% *}"
  text=$(zcat "$page" | sed 's/\\-/-/g')
  for f in $flags; do
    [[ " $listed " == *" $f "* ]] || fail "gpufleet $path: $f is in --help but not completed"
    grep -qF -- "$f" <<< "$text" || fail "gpufleet $path: $f is in --help but not in $(basename "$page")"
    checked=$((checked + 1))
  done
done <<< "$paths"
((checked > 150)) || fail "only $checked flags checked"
echo "   $checked flags: each in --help, the completion and the man page"

# ---- man pages render cleanly
for page in "$WORK"/man/*.1.gz; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 > /dev/null)
  [[ -z $warnings ]] || fail "$(basename "$page"): $warnings"
  grep -q '^\.SH EXIT STATUS' <<< "$(zcat "$page")" || fail "$(basename "$page") has no EXIT STATUS"
done
echo "   $(ls "$WORK"/man | wc -l) man pages render with no warning"

# ---- zsh
command -v zsh > /dev/null || fail "zsh is not installed (scripts/deps.sh)"
zsh -n "$WORK/_gpufleet" || fail "the zsh completion does not parse"
grep -q '^#compdef gpufleet' <(sed -n 1p "$WORK/_gpufleet") || fail "no #compdef line"
echo "PASS"
