// wasm_size.mjs - `node js/wasm_size.mjs FILE.wasm...`: each file's size raw,
// gzip -9 and brotli (quality 9: 11 takes minutes on 14 MB; node's zlib), the download a page pays.
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

for (const f of process.argv.slice(2)) {
  const b = readFileSync(f);
  const gz = gzipSync(b, { level: 9 }).length;
  const br = brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }).length;
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  console.log(`${f}: raw ${kib(b.length)}, gzip -9 ${kib(gz)}, brotli ${kib(br)}`);
}
