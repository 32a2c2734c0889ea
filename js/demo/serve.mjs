// serve.mjs - a static server for the demo page, a few lines of node:http:
//   node js/demo/serve.mjs [--port N] [--dist DIR]   then open http://localhost:N/demo/
// It serves the package folder (js/), so that the page imports ../src/*.mjs
// and the module finds ../dist/libonnxc.{mjs,wasm} as it would in an app;
// --dist serves another build folder there (the page test points it at
// build-wasm). Every answer carries the cross-origin isolation headers
// (COOP/COEP), so that SharedArrayBuffer - and with it a threads build - is
// usable on the page. Local use only: it binds 127.0.0.1.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.json': 'application/json', '.onnx': 'application/octet-stream', '.css': 'text/css',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.svg': 'image/svg+xml',
};

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

// The file under root that a URL path names, or null when it would leave root.
function fileOf(root, urlPath) {
  let p;
  try { p = decodeURIComponent(urlPath); } catch { return null; }
  const f = normalize(join(root, p));
  return f === root || f.startsWith(root + sep) ? f : null;
}

// Starts the server; resolves to {server, port, url}. root: the folder
// served (default js/); dist: the folder served at /dist/ (default
// root/dist); onPost(path, text): called with the body of each POST (the
// page test's way to get the page's results), which is answered 204.
export function startServer({ root, dist, port = 0, onPost } = {}) {
  root = resolve(root ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
  dist = resolve(dist ?? join(root, 'dist'));
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    if (req.method === 'POST' && onPost) {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c) => { body += c; });
      req.on('end', () => { res.writeHead(204, ISOLATION).end(); onPost(path, body); });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, ISOLATION).end();
      return;
    }
    if (path === '/') {
      res.writeHead(302, { ...ISOLATION, Location: '/demo/' }).end();
      return;
    }
    let file = path.startsWith('/dist/') ? fileOf(dist, path.slice('/dist'.length)) : fileOf(root, path);
    let st = null;
    try {
      st = file && statSync(file);
      if (st && st.isDirectory()) {
        file = join(file, 'index.html');
        st = statSync(file);
      }
    } catch { st = null; }
    if (!st || !st.isFile()) {
      res.writeHead(404, { ...ISOLATION, 'Content-Type': 'text/plain' }).end(`not found: ${path}\n`);
      return;
    }
    res.writeHead(200, {
      ...ISOLATION, 'Content-Length': st.size,
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      const p = server.address().port;
      ok({ server, port: p, url: `http://127.0.0.1:${p}/` });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const { url } = await startServer({ port: Number(opt('--port') ?? 8080), dist: opt('--dist') });
  console.log(`serving js/ at ${url} - the demo: ${url}demo/ (Ctrl-C stops)`);
}
