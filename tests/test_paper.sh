#!/usr/bin/env bash
# tools/paper.sh (the commands behind docs/results.md) against the lipgnn it drives:
# test_paper.sh LIPGNN_BINARY TESTS_DIR. Runs every experiment with a stand-in lipgnn
# that records its arguments (nothing is trained), then checks that every experiment
# is named in the script's header, that each issues lipgnn commands, and that every
# option those commands pass is one the real lipgnn's help for that command lists
# (a misspelt option in paper.sh would otherwise surface only hours into a study).
set -u
bin=$1 dir=$2
. "$dir/testlib.sh"
paper=$dir/../tools/paper.sh
[ -f "$paper" ] || { echo "SKIP: $paper not found"; exit 77; }

stub=$tmp/lipgnn
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s"\n' "$tmp/calls" > "$stub"
chmod +x "$stub"

exps=$(grep -oE '^    [a-z0-9][a-z0-9-]*\)' "$paper" | tr -d ' )' | grep -v '^all$')
[ -n "$exps" ] || fail "no experiment found in paper.sh"
header=$(sed -n '2,/^set -euo/p' "$paper")
for e in $exps; do
  echo "$header" | grep -qw -- "$e" || fail "experiment $e is not named in paper.sh's header"
  : > "$tmp/calls"
  LIPGNN_DATA=$tmp bash "$paper" --lipgnn "$stub" --out "$tmp/out" --threads 1 "$e" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
    fail "paper.sh $e: exit $?: $(head -c 300 "$tmp/err.txt")"
  [ -s "$tmp/calls" ] || { fail "paper.sh $e ran no lipgnn command"; continue; }
  while read -r cmd args; do
    if [ ! -f "$tmp/help_$cmd" ]; then
      "$bin" "$cmd" --help > "$tmp/help_$cmd" 2>&1 || fail "paper.sh $e: lipgnn has no command '$cmd'"
      # depth-study takes every option of train too
      [ "$cmd" = depth-study ] && "$bin" train --help >> "$tmp/help_$cmd" 2>&1
    fi
    for o in $(printf '%s\n' $args | grep -E '^--[a-z]'); do
      grep -qE -- "(^|[ ,|])$o([ =,]|$)" "$tmp/help_$cmd" || fail "paper.sh $e: 'lipgnn $cmd' does not list $o"
    done
  done < "$tmp/calls"
done
# negative control: the check must notice an option lipgnn does not have
grep -qE -- "(^|[ ,|])--hiden([ =,]|$)" "$tmp/help_depth-study" && fail "the option check accepts --hiden"
LIPGNN_DATA=$tmp bash "$paper" --lipgnn "$stub" --out "$tmp/out" no-such-exp 2>/dev/null && fail "an unknown experiment ran"
[ "$fails" -eq 0 ] && echo "paper.sh: passed ($(echo $exps | wc -w) experiments)"
exit $((fails > 0))
