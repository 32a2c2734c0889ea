// fill.mjs - the made-up inputs of the demo page (zeros, random, ramp, typed
// values), as plain numbers; shared with the page test (js/test/page_test.mjs),
// which writes the same numbers to an .npy for `onnxc run`.

// A small seeded generator (xorshift32, the seed first spread by a
// multiply so that 1, 2, 3 start far apart): the same seed gives the same
// "random" input in every browser and in node. Uniform in [0, 1).
function xorshift32(seed) {
  let x = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

// n numbers of the kind asked: 'zeros'; 'random' (uniform in [-1, 1), or
// integers 0..99 when integral); 'ramp' (a repeating saw, (37 i mod 101)/100
// - 1/2, or 37 i mod 101 when integral); 'values' (the list given, repeated).
export function fillValues(kind, n, { seed = 1, integral = false, values = [] } = {}) {
  const out = new Array(n);
  if (kind === 'zeros') return out.fill(0);
  if (kind === 'random') {
    const r = xorshift32(seed);
    for (let i = 0; i < n; i++) out[i] = integral ? Math.floor(r() * 100) : r() * 2 - 1;
    return out;
  }
  if (kind === 'ramp') {
    for (let i = 0; i < n; i++) out[i] = integral ? (37 * i) % 101 : ((37 * i) % 101) / 100 - 0.5;
    return out;
  }
  if (kind === 'values') {
    if (!values.length) throw new Error('no values typed in');
    for (let i = 0; i < n; i++) out[i] = values[i % values.length];
    return out;
  }
  throw new Error(`unknown input kind '${kind}'`);
}

// "1, 2.5 -3" -> [1, 2.5, -3]; throws on a word that is not a number.
export function parseValues(text) {
  const words = String(text).split(/[\s,;]+/).filter(Boolean);
  return words.map((w) => {
    const v = Number(w);
    if (!Number.isFinite(v)) throw new Error(`'${w}' is not a number`);
    return v;
  });
}
