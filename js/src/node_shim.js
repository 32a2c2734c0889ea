// node_shim.js - put before emscripten's ES module output (--extern-pre-js):
// emscripten 3.1.6 writes, for node, CommonJS names (require, __dirname) that
// an ES module lacks; this makes them from import.meta.url. In a browser the
// branches are not taken and nothing is imported.
const onnxcInNode = typeof process === 'object' && !!(process.versions && process.versions.node);
var require = onnxcInNode ? (await import('node:module')).createRequire(import.meta.url) : undefined;
var __dirname = onnxcInNode ? require('node:path').dirname(require('node:url').fileURLToPath(import.meta.url)) : undefined;
