# Shared helpers of the shell tests (test_cli.sh, test_depth.sh, test_gradmap.sh):
# source it after setting bin (the lipgnn binary). Gives tmp (a directory removed at
# exit), fails (the count), and:
#   fail MSG              count a failure and print it
#   run ARGS...           run lipgnn as a user would: stdout, stderr, status to $tmp
#   rc                    the status of the last run
#   expect_rc N WHAT      fail unless the last run exited with N
#   no_sanitizer WHAT     fail if the last run's stderr holds a sanitizer report
#   wellformed FILE       fail unless FILE is well-formed XML (python3 or xmllint)
#   count PATTERN FILE    occurrences of PATTERN in FILE
#   expect_refusals PATTERN 'ARGS|OPT'...
#                         run each ARGS (split at spaces); fail unless it exits 2 with a
#                         message matching PATTERN (@OPT@ replaced by OPT, the option the
#                         refusal names) and computed nothing (no epoch or node rows)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"; }
rc() { cat "$tmp/rc"; }
expect_refusals() {
  local pat=$1 cmdline c o
  shift
  for cmdline in "$@"; do
    IFS='|' read -r c o <<<"$cmdline"
    # shellcheck disable=SC2086
    run $c; expect_rc 2 "$c"
    grep -q -- "${pat//@OPT@/$o}" "$tmp/err" || fail "$c: $(cat "$tmp/err")"
    if grep -q "^epoch\|^node" "$tmp/out"; then fail "$c: worked before refusing"; fi
  done
}
expect_rc() { [ "$(rc)" = "$1" ] || fail "lipgnn $2: exit $(rc), expected $1; stderr: $(head -c 400 "$tmp/err")"; }
no_sanitizer() { grep -qiE "sanitizer|runtime error|leak" "$tmp/err" && fail "$1: sanitizer report: $(head -c 600 "$tmp/err")"; }
wellformed() {
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])' "$1" 2>"$tmp/xmlerr" ||
      fail "$1 is not well-formed XML: $(tail -1 "$tmp/xmlerr")"
  elif command -v xmllint >/dev/null; then
    xmllint --noout "$1" 2>"$tmp/xmlerr" || fail "$1 is not well-formed XML: $(head -3 "$tmp/xmlerr")"
  else
    echo "no XML parser (/usr/bin/python3 or xmllint): well-formedness of $1 not checked"
  fi
}
count() { grep -o "$1" "$2" | wc -l | tr -d ' '; }
