// onnxc for JavaScript: the API of onnxruntime-web (InferenceSession, Tensor,
// env) over libonnxc.wasm, so that an app switches with one import:
//   import * as ort from 'onnxc';   // instead of 'onnxruntime-web'
export { InferenceSession } from './session.mjs';
export { Tensor } from './tensor.mjs';
export { env } from './loader.mjs';
