#!/usr/bin/env bash
# Every C++ source is clang-formatted (.clang-format); prints the files that are not.
set -uo pipefail
cd "$(dirname "$0")/../.."
bad=0 total=0
for f in $(git ls-files '*.cpp' '*.hpp'); do
  total=$((total + 1))
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=$((bad + 1)); fi
done
echo "$((total - bad)) passed, $bad failed"
test "$bad" = 0
