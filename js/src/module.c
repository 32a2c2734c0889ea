/* module.c - the few helpers the JavaScript package needs beyond onnxc.h,
 * linked into libonnxc.wasm (cmake/wasm.cmake). They keep the layout of
 * the C structs on the C side, so that js/ never writes a field by offset. */
#include <stdlib.h>

#include "onnxc.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define WASM_API EMSCRIPTEN_KEEPALIVE
#else
#define WASM_API
#endif

/* Session options with the fields js/ sets (profile: time every node, for
 * onnxc_session_profile_top), the others zero (their defaults); free with
 * free(). NULL on OOM. */
WASM_API onnxc_session_options *onnxc_wasm_session_options(int threads, int optimization_level,
                                                           int profile) {
  onnxc_session_options *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->threads = threads;
  o->optimization_level = optimization_level;
  o->profile = profile;
  return o;
}

/* An error buffer (code, then the message), zeroed; free with free(). */
WASM_API onnxc_error *onnxc_wasm_error_new(void) { return calloc(1, sizeof(onnxc_error)); }

/* The message and code of an error buffer. */
WASM_API const char *onnxc_wasm_error_message(const onnxc_error *e) { return e->msg; }
WASM_API int onnxc_wasm_error_code(const onnxc_error *e) { return e->code; }
