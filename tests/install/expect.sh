#!/bin/sh
# expect.sh SOURCE_DIR EXPECTED COMMAND...: runs the command and compares its
# output with EXPECTED (tests/install/compare.awk).
set -eu
src=$1 expected=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
# shellcheck source=tests/install/check.sh
. "$src/tests/install/check.sh"
check "$(basename "$1")" "$expected" "$@"
exit $fail
