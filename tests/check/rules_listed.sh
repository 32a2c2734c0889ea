#!/bin/sh
# Every rule the checker sources report is listed by `onnxc check --rules`.
# usage: rules_listed.sh ONNXC SOURCE_DIR
onnxc=$1 src=$2
listed=$("$onnxc" check --rules | awk '{print $1}')
used=$(grep -oh 'ox_ck_fail([a-z&>-]*c, "[a-z0-9-]*"' "$src"/src/check/*.c |
  sed 's/.*"\([a-z0-9-]*\)"/\1/' | sort -u)
n=0 bad=0
for r in $used; do
  n=$((n + 1))
  if ! echo "$listed" | grep -qx "$r"; then
    echo "rule $r is reported but not listed"
    bad=1
  fi
done
[ "$n" -gt 40 ] || { echo "found only $n rules in the sources"; exit 1; }
echo "$n rules reported, all listed"
exit $bad
