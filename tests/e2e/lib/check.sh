# Sourced by the end-to-end suites: one line per check ("ok - ", "FAIL - ", "skip - ") and
# a closing "N passed, M failed, K skipped" line. Callers set TD (the binary) and WORK.
pass=0 fail=0 skip=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# run ARGS... : one torchdock call; its stdout, stderr and exit code land in $WORK/{out,err,rc}
run() { "$TD" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
rc() { cat "$WORK/rc"; }
has() { grep -qF -- "$2" "$WORK/$1"; }
# finish: the closing line; the exit status says whether every check passed.
finish() {
  echo "$pass passed, $fail failed, $skip skipped"
  test "$fail" = 0
}
