# Sourced by the end-to-end suites: one line per check ("ok - ", "FAIL - ", "skip - ") and
# a closing "N passed, M failed, K skipped" line. Callers set TD (the binary) and WORK.
pass=0 fail=0 skip=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# run ARGS... : one torchdock call; its stdout, stderr and exit code land in $WORK/{out,err,rc}
run() { "$TD" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; keep_failure "$@"; }
# A failing (exit 1) build, validate, doctor or node-check whose report is text, kept in
# $TD_FAILURE_SINK for the explain_e2e_failures test: explain must answer every one.
keep_failure() {
  [[ -n "${TD_FAILURE_SINK:-}" && "$(cat "$WORK/rc")" == 1 ]] || return 0
  case "$1" in build | validate | doctor | node-check) ;; *) return 0 ;; esac
  [[ "$(head -c1 "$WORK/out")" == "{" || "$(head -c1 "$WORK/out")" == "[" ]] && return 0
  mkdir -p "$TD_FAILURE_SINK"
  local n; n=$(find "$TD_FAILURE_SINK" -name '*.log' | wc -l)
  { echo "# torchdock $*"; cat "$WORK/out" "$WORK/err"; } >"$TD_FAILURE_SINK/$(basename "$0" .sh)-$n-$1.log"
}
rc() { cat "$WORK/rc"; }
has() { grep -qF -- "$2" "$WORK/$1"; }
# finish: the closing line; the exit status says whether every check passed.
finish() {
  echo "$pass passed, $fail failed, $skip skipped"
  test "$fail" = 0
}
