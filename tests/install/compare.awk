# compare.awk -v out=GOT EXPECTED: exit 0 when GOT has the lines of EXPECTED,
# word by word: numbers within a relative 1e-5 (absolute below 1), the other
# words as text. A word "*" in EXPECTED stands for any words (none or more):
# the words before it must begin the line, those after it end it.
function num(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
function same(a, b, d, m) {
  if (!(num(a) && num(b))) return a == b
  d = b - a; if (d < 0) d = -d
  m = a < 0 ? -a : a; if (m < 1) m = 1
  return d <= 1e-5 * m
}
{
  if ((getline got < out) <= 0) exit 1
  n = split($0, w, " ")
  ng = split(got, g, " ")
  star = 0
  for (i = 1; i <= n; i++) if (w[i] == "*") star = i
  if (!star) {
    if (ng != n) exit 1
    for (i = 1; i <= n; i++) if (!same(w[i], g[i])) exit 1
  } else {
    if (ng < n - 1) exit 1
    for (i = 1; i < star; i++) if (!same(w[i], g[i])) exit 1
    for (i = n; i > star; i--) if (!same(w[i], g[ng - (n - i)])) exit 1
  }
}
END { if ((getline got < out) > 0) exit 1 }
