# compare.awk -v out=GOT EXPECTED: exit 0 when GOT has the lines of EXPECTED,
# word by word: numbers within a relative 1e-5 (absolute below 1), the other
# words as text.
function num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
{
  if ((getline got < out) <= 0) exit 1
  n = split($0, w, " ")
  if (split(got, g, " ") != n) exit 1
  for (i = 1; i <= n; i++) {
    if (num(w[i]) && num(g[i])) {
      d = g[i] - w[i]; if (d < 0) d = -d
      m = w[i] < 0 ? -w[i] : w[i]; if (m < 1) m = 1
      if (d > 1e-5 * m) exit 1
    } else if (w[i] != g[i]) exit 1
  }
}
END { if ((getline got < out) > 0) exit 1 }
