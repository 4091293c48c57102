# Sourced by the real-image suites: one validate or doctor call on an image and reads of its
# verdicts. Callers set TD, PROBES and WORK; validate writes $WORK/v.json, doctor $WORK/d.json,
# both $WORK/{out,err,rc} (rc: tests/e2e/lib/check.sh).
field() { python3 -c "import json,sys; d=json.load(open('$WORK/v.json')); print(next((c[sys.argv[2]] for c in d['images'][0]['checks'] if c['id']==sys.argv[1]), 'missing'))" "$1" "$2"; }
status() { field "$1" status; }
msg() { field "$1" message; }
validate() { "$TD" validate --probes "$PROBES" --json="$WORK/v.json" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
doctor() { "$TD" doctor --probes "$PROBES" --json="$WORK/d.json" --image "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
findings() { python3 -c "import json; d=json.load(open('$WORK/d.json')); print(' | '.join(f['id']+' '+f['severity']+': '+f['title']+' '+f['detail'] for f in d['findings']))"; }
# contains TEXT PART...: every PART is in TEXT; lacks TEXT PART: it is not
contains() { local text=$1; shift; for part in "$@"; do [[ $text == *"$part"* ]] || return 1; done; }
lacks() { [[ $1 != *"$2"* ]]; }
