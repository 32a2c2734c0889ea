/* _generate.c - the Generator type: onnxc_generate_start / _next of onnxc.h
 * as a Python iterator of new token ids over a Session. onnxc.generate
 * (_generation.py) is the friendly front. */
#include <stdlib.h>
#include <string.h>

#include "_onnxc.h"

typedef struct opy_generator {
  PyObject_HEAD onnxc_generator *gen;
  opy_session *session; /* the generator runs the session: kept alive */
} opy_generator;

/* A sequence of ints -> malloc'd int64 array (*n its length); NULL with an
 * exception set. */
static int64_t *int_list(PyObject *obj, const char *what, size_t *n) {
  PyObject *seq = PySequence_Fast(obj, what);
  if (!seq) return NULL;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  int64_t *v = malloc(((size_t)len + 1) * sizeof *v);
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (x == -1 && PyErr_Occurred()) {
      free(v);
      Py_DECREF(seq);
      return NULL;
    }
    v[i] = x;
  }
  Py_DECREF(seq);
  *n = (size_t)len;
  return v;
}

static PyObject *generator_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {
      "session", "ids", "max_new_tokens", "do_sample",  "top_k",   "top_p", "temperature",
      "seed",    "eos", "context_length", "config_dir", "threads", NULL};
  PyObject *session, *ids_obj, *eos_obj = Py_None;
  long long max_new = 0, context = 0;
  int do_sample = 0, top_k = 0, threads = 0;
  float top_p = 0, temperature = 0;
  unsigned long long seed = 0;
  const char *config_dir = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|LpiffKOLzi", names, &opy_session_type, &session,
                                   &ids_obj, &max_new, &do_sample, &top_k, &top_p, &temperature,
                                   &seed, &eos_obj, &context, &config_dir, &threads))
    return NULL;
  size_t n_ids = 0, n_eos = 0;
  int64_t *ids = int_list(ids_obj, "ids: a sequence of token ids", &n_ids), *eos = NULL;
  if (!ids) return NULL;
  if (eos_obj != Py_None && !(eos = int_list(eos_obj, "eos: a sequence of token ids", &n_eos))) {
    free(ids);
    return NULL;
  }
  onnxc_generate_options o = {0};
  o.max_new_tokens = max_new;
  o.do_sample = do_sample;
  o.top_k = top_k;
  o.top_p = top_p;
  o.temperature = temperature;
  o.seed = seed;
  o.eos_ids = eos;
  o.n_eos = n_eos;
  o.context_length = context;
  o.config_dir = config_dir;
  o.threads = threads;
  opy_generator *self = (opy_generator *)type->tp_alloc(type, 0);
  if (!self) {
    free(ids);
    free(eos);
    return NULL;
  }
  self->session = (opy_session *)Py_NewRef(session);
  onnxc_error err = {0};
  onnxc_status st = onnxc_generate_start(self->session->session, ids, n_ids, &o, &self->gen, &err);
  free(ids);
  free(eos);
  if (st != ONNXC_OK) {
    Py_DECREF(self);
    return opy_raise(st, &err);
  }
  return (PyObject *)self;
}

static void generator_dealloc(opy_generator *self) {
  onnxc_generate_free(self->gen);
  Py_XDECREF(self->session);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *generator_iter(PyObject *self) { return Py_NewRef(self); }

/* The next token; NULL without an exception at the end (StopIteration). */
static PyObject *generator_next(opy_generator *self) {
  int64_t token;
  int done;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_generate_next(self->gen, &token, &done, &err);
  Py_END_ALLOW_THREADS;
  if (st != ONNXC_OK) return opy_raise(st, &err);
  if (done) return NULL;
  return PyLong_FromLongLong((long long)token);
}

static PyObject *generator_stats(opy_generator *self, PyObject *unused) {
  (void)unused;
  onnxc_generate_stats s;
  onnxc_generate_get_stats(self->gen, &s);
  return Py_BuildValue("{s:d,s:d,s:n,s:n,s:K}", "first_token_ms", s.first_token_ms, "decode_ms",
                       s.decode_ms, "prompt_tokens", (Py_ssize_t)s.prompt_tokens, "new_tokens",
                       (Py_ssize_t)s.new_tokens, "cache_copied_bytes",
                       (unsigned long long)s.cache_copied_bytes);
}

static PyObject *generator_get_layout(opy_generator *self, void *unused) {
  (void)unused;
  return PyUnicode_FromString(onnxc_generate_layout(self->gen));
}

static PyMethodDef generator_methods[] = {
    {"stats", (PyCFunction)generator_stats, METH_NOARGS,
     "stats() -> {first_token_ms, decode_ms, prompt_tokens, new_tokens}"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef generator_getset[] = {
    {"layout", (getter)generator_get_layout, NULL,
     "The decoder's layout: 'no-cache', 'decoder-with-past' or 'genai-shared-buffer'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject opy_generator_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxc._onnxc.Generator",
    .tp_basicsize = sizeof(opy_generator),
    .tp_dealloc = (destructor)generator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "Generator(session, ids, max_new_tokens=0, do_sample=False, top_k=0, top_p=0, "
        "temperature=0, seed=0, eos=None, context_length=0, config_dir=None, threads=0): "
        "an iterator of new token ids (onnxc_generate_options in onnxc.h; use "
        "onnxc.generate).",
    .tp_iter = generator_iter,
    .tp_iternext = (iternextfunc)generator_next,
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
    .tp_new = generator_new,
};

int opy_generator_init_type(void) { return PyType_Ready(&opy_generator_type); }
