#!/usr/bin/env bash
# install-deps.sh's apt source detection over the layouts apt accepts (deb822 only,
# one-line only, both, none, and the odd ones: disabled stanzas, deb-src only, options,
# security first, a missing sources.list). The first command of the README once ended in
# silence on a deb822-only machine; this keeps every layout answered.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/scripts/lib/apt_sources.sh"
source "$ROOT/tests/e2e/lib/check.sh"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT

layout() { local d=$WORK/$1; mkdir -p "$d/etc/apt/sources.list.d"; echo "$d"; }
# expect NAME ROOT WANT: apt_debian_mirror ROOT prints WANT (status 0), or fails when WANT is "".
expect() {
  local got rc
  got=$(apt_debian_mirror "$2"); rc=$?
  if [ -z "$3" ]; then check "$1: no mirror (status 1, got '$got')" test "$rc" = 1 -a -z "$got"
  else check "$1: $3 (got '$got', status $rc)" test "$rc" = 0 -a "$got" = "$3"; fi
}

r=$(layout deb822)
printf 'Types: deb\nURIs: http://mirror.test/debian\nSuites: bookworm\nComponents: main\n\nTypes: deb\nURIs: http://mirror.test/debian-security\nSuites: bookworm-security\n' \
  >"$r/etc/apt/sources.list.d/debian.sources"
expect "deb822 only, no sources.list" "$r" http://mirror.test/debian

r=$(layout oneline)
printf '# a comment\ndeb http://one.test/debian bookworm main\n' >"$r/etc/apt/sources.list"
expect "one-line sources.list only" "$r" http://one.test/debian

r=$(layout both)
printf 'deb [arch=amd64 signed-by=/k.gpg] http://both-line.test/debian bookworm main\n' >"$r/etc/apt/sources.list"
printf 'Types: deb\nURIs: http://both-822.test/debian\nSuites: bookworm\n' >"$r/etc/apt/sources.list.d/d.sources"
expect "both layouts: sources.list first, options skipped" "$r" http://both-line.test/debian

r=$(layout none)
expect "no source files at all" "$r" ""
check "no source files: nothing listed" test -z "$(apt_source_files "$r")"

r=$(layout listd)
printf 'deb http://listd.test/debian bookworm main\n' >"$r/etc/apt/sources.list.d/extra.list"
expect "one-line file in sources.list.d" "$r" http://listd.test/debian

r=$(layout security-first)
printf 'deb http://sec.test/debian-security bookworm-security main\ndeb http://main.test/debian bookworm main\n' >"$r/etc/apt/sources.list"
expect "security archive skipped" "$r" http://main.test/debian

r=$(layout disabled)
printf 'Types: deb\nURIs: http://off.test/debian\nSuites: bookworm\nEnabled: no\n\nTypes: deb-src\nURIs: http://src.test/debian\nSuites: bookworm\n\nTypes: deb deb-src\nURIs: http://on.test/debian\nSuites: bookworm\n' \
  >"$r/etc/apt/sources.list.d/d.sources"
expect "disabled and deb-src-only stanzas skipped" "$r" http://on.test/debian

r=$(layout commented)
printf '# deb http://commented.test/debian bookworm main\n' >"$r/etc/apt/sources.list"
expect "only commented lines" "$r" ""

r=$(layout multi-uri)
printf 'Types: deb\nURIs: http://a.test/debian-security http://b.test/debian\nSuites: bookworm\n' >"$r/etc/apt/sources.list.d/d.sources"
expect "several URIs in one stanza: first non-security" "$r" http://b.test/debian

# The installer itself, run as it is on this machine: every exit path prints a line.
out=$(bash "$ROOT/scripts/install-deps.sh" 2>&1); rc=$?
check "install-deps.sh succeeds here and says so (rc $rc)" test "$rc" = 0
check "install-deps.sh prints its result" grep -q '^install-deps: ok' <<<"$out"
finish
