/* _module.c - the module onnxc._onnxc: errors, the Model type and the
 * tooling over a model (encode, print, save, check, infer, convert). */
#define ONNXC_PY_IMPORT_ARRAY
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "_onnxc.h"

PyObject *opy_errors[OPY_N_ERRORS];

/* ------------------------------------------------------------ errors */

PyObject *opy_raise(onnxc_status st, const onnxc_error *err) {
  int code = (int)st;
  if (code <= 0 || code >= OPY_N_ERRORS) code = 0;
  const char *msg = err && err->msg[0] ? err->msg : "onnxc: unknown error";
  PyErr_SetString(opy_errors[code], msg);
  return NULL;
}

PyObject *opy_invalid(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  PyErr_SetString(opy_errors[ONNXC_ERR_INVALID_ARG], msg);
  return NULL;
}

/* The classes, by status code. Some also derive from the builtin exception
 * a Python caller would catch for that kind of failure. */
static int make_errors(PyObject *mod) {
  static const struct {
    int code;
    const char *name;
    const char *doc;
  } kinds[] = {
      {ONNXC_ERR_INVALID_ARG, "InvalidArgument",
       "A bad argument: unknown input or output name, wrong element type or shape, bad option."},
      {ONNXC_ERR_NOMEM, "OutOfMemory", "Out of memory, or a run's memory limit exceeded."},
      {ONNXC_ERR_IO, "FileError", "A file could not be read or written."},
      {ONNXC_ERR_PARSE, "ParseError", "A model file or text that does not decode or parse."},
      {ONNXC_ERR_INVALID_MODEL, "InvalidModel",
       "A model that breaks the ONNX rules (check_model, session creation)."},
      {ONNXC_ERR_UNSUPPORTED, "Unsupported", "Something the library does not support."},
      {ONNXC_ERR_RUNTIME, "RuntimeFailure", "A run that failed inside an operator."},
      {ONNXC_ERR_CANCELLED, "Cancelled", "A run that was cancelled."},
  };
  opy_errors[0] = PyErr_NewExceptionWithDoc(
      "onnxc.Error",
      "Base class of the errors of onnxc; str(e) is the library's message and e.code its "
      "status code.",
      NULL, NULL);
  if (!opy_errors[0] || PyObject_SetAttrString(opy_errors[0], "code", PyLong_FromLong(0)) < 0)
    return -1;
  if (PyModule_AddObjectRef(mod, "Error", opy_errors[0]) < 0) return -1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    PyObject *extra = NULL;
    if (kinds[i].code == ONNXC_ERR_INVALID_ARG) extra = PyExc_ValueError;
    if (kinds[i].code == ONNXC_ERR_NOMEM) extra = PyExc_MemoryError;
    if (kinds[i].code == ONNXC_ERR_IO) extra = PyExc_OSError;
    PyObject *bases =
        extra ? PyTuple_Pack(2, opy_errors[0], extra) : PyTuple_Pack(1, opy_errors[0]);
    if (!bases) return -1;
    char full[64];
    snprintf(full, sizeof full, "onnxc.%s", kinds[i].name);
    PyObject *cls = PyErr_NewExceptionWithDoc(full, kinds[i].doc, bases, NULL);
    Py_DECREF(bases);
    if (!cls) return -1;
    PyObject *code = PyLong_FromLong(kinds[i].code);
    int bad = !code || PyObject_SetAttrString(cls, "code", code) < 0;
    Py_XDECREF(code);
    if (bad || PyModule_AddObjectRef(mod, kinds[i].name, cls) < 0) {
      Py_DECREF(cls);
      return -1;
    }
    opy_errors[kinds[i].code] = cls;
  }
  return 0;
}

/* ------------------------------------------------------------ types */

PyObject *opy_describe_type(const onnxc_type *t) {
  char small[256];
  size_t need = onnxc_type_describe(t, small, sizeof small);
  PyObject *name;
  if (need < sizeof small) {
    name = PyUnicode_FromString(small);
  } else { /* deeply nested types: map(string,seq(tensor(...))) */
    char *big = malloc(need + 1);
    if (!big) return PyErr_NoMemory();
    onnxc_type_describe(t, big, need + 1);
    name = PyUnicode_FromString(big);
    free(big);
  }
  if (!name) return NULL;
  PyObject *shape;
  onnxc_type_kind kind = onnxc_type_kind_of(t);
  int64_t rank = onnxc_type_rank(t);
  if (kind != ONNXC_TYPE_TENSOR && kind != ONNXC_TYPE_SPARSE_TENSOR) {
    shape = PyList_New(0);
  } else if (rank < 0) {
    shape = Py_NewRef(Py_None);
  } else {
    shape = PyList_New((Py_ssize_t)rank);
    for (int64_t i = 0; shape && i < rank; i++) {
      int64_t d = onnxc_type_dim(t, (size_t)i);
      const char *p = onnxc_type_dim_param(t, (size_t)i);
      PyObject *item = d >= 0 ? PyLong_FromLongLong(d)
                       : p    ? PyUnicode_FromString(p)
                              : Py_NewRef(Py_None);
      if (!item)
        Py_CLEAR(shape);
      else
        PyList_SET_ITEM(shape, (Py_ssize_t)i, item);
    }
  }
  if (!shape) {
    Py_DECREF(name);
    return NULL;
  }
  return Py_BuildValue("(NN)", name, shape);
}

/* ------------------------------------------------------------ Model */

static opy_model *model_new(onnxc_model *m, PyObject *buffer, PyObject *base_dir) {
  opy_model *self = PyObject_New(opy_model, &opy_model_type);
  if (!self) {
    onnxc_model_free(m);
    return NULL;
  }
  self->model = m;
  self->buffer = Py_XNewRef(buffer);
  self->base_dir = base_dir && base_dir != Py_None ? Py_NewRef(base_dir) : NULL;
  return self;
}

static void model_dealloc(opy_model *self) {
  onnxc_model_free(self->model);
  Py_XDECREF(self->buffer);
  Py_XDECREF(self->base_dir);
  PyObject_Free(self);
}

/* A model decoded from bytes; the bytes object is kept, since the model's
 * raw data point into it. */
static PyObject *load_bytes_impl(PyObject *data, PyObject *base_dir, const onnxc_load_options *o) {
  PyObject *bytes = PyBytes_CheckExact(data) ? Py_NewRef(data) : PyBytes_FromObject(data);
  if (!bytes) return NULL;
  PyObject *dir_enc = NULL;
  if (base_dir && base_dir != Py_None && !PyUnicode_FSConverter(base_dir, &dir_enc)) {
    Py_DECREF(bytes);
    return NULL;
  }
  onnxc_model *m = NULL;
  onnxc_error err = {0};
  onnxc_status st;
  const char *dir = dir_enc ? PyBytes_AS_STRING(dir_enc) : NULL;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_model_load_buffer(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes), dir, o,
                               &m, &err);
  Py_END_ALLOW_THREADS;
  Py_XDECREF(dir_enc);
  PyObject *r = st == ONNXC_OK ? (PyObject *)model_new(m, bytes, base_dir) : opy_raise(st, &err);
  Py_DECREF(bytes);
  return r;
}

/* load(path, ...) and load_bytes(data, ...): the same arguments. */
static PyObject *load_any(PyObject *args, PyObject *kw, int from_bytes) {
  static char *names[] = {"source", "base_dir", "load_external_data", "verify_checksums", NULL};
  PyObject *source, *base_dir = Py_None;
  int load_external = 1, verify = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Opp", names, &source, &base_dir, &load_external,
                                   &verify))
    return NULL;
  onnxc_load_options o = {0};
  o.no_external_data = !load_external;
  o.skip_checksum = !verify;
  if (from_bytes) return load_bytes_impl(source, base_dir, &o);
  PyObject *path;
  if (!PyUnicode_FSConverter(source, &path)) return NULL;
  onnxc_model *m = NULL;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_model_load(PyBytes_AS_STRING(path), &o, &m, &err);
  Py_END_ALLOW_THREADS;
  Py_DECREF(path);
  if (st != ONNXC_OK) return opy_raise(st, &err);
  return (PyObject *)model_new(m, NULL, base_dir);
}

static PyObject *mod_load(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  return load_any(args, kw, 0);
}

static PyObject *mod_load_bytes(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  return load_any(args, kw, 1);
}

static PyObject *mod_parse_text(PyObject *mod, PyObject *args, PyObject *kw) {
  (void)mod;
  static char *names[] = {"text", "name", NULL};
  const char *text, *name = "<text>";
  Py_ssize_t size;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|s", names, &text, &size, &name)) return NULL;
  onnxc_model *m = NULL;
  onnxc_error err = {0};
  onnxc_status st = onnxc_model_parse_text(text, (size_t)size, name, &m, &err);
  if (st != ONNXC_OK) return opy_raise(st, &err);
  return (PyObject *)model_new(m, NULL, NULL);
}

static PyObject *model_encode(opy_model *self, PyObject *unused) {
  (void)unused;
  void *data = NULL;
  size_t size = 0;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_model_encode(self->model, &data, &size, &err);
  Py_END_ALLOW_THREADS;
  if (st != ONNXC_OK) return opy_raise(st, &err);
  PyObject *r = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
  free(data);
  return r;
}

/* A private copy that tooling may change: encoded and decoded again, with
 * the same folder for external data. */
static opy_model *model_copy(opy_model *self) {
  PyObject *bytes = model_encode(self, NULL);
  if (!bytes) return NULL;
  onnxc_load_options o = {0};
  PyObject *r = load_bytes_impl(bytes, self->base_dir, &o);
  Py_DECREF(bytes);
  return (opy_model *)r;
}

static PyObject *model_to_text(opy_model *self, PyObject *unused) {
  (void)unused;
  char *text = NULL;
  onnxc_error err = {0};
  onnxc_status st = onnxc_model_print(self->model, &text, &err);
  if (st != ONNXC_OK) return opy_raise(st, &err);
  PyObject *r = PyUnicode_FromString(text);
  free(text);
  return r;
}

static PyObject *model_save(opy_model *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"path", "external_data", "size_threshold", "align", "all_inline", NULL};
  PyObject *path, *ext = Py_None;
  Py_ssize_t threshold = 1024, align = 0;
  int all_inline = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|Onnp", names, PyUnicode_FSConverter, &path, &ext,
                                   &threshold, &align, &all_inline))
    return NULL;
  PyObject *ext_enc = NULL;
  if (ext != Py_None && !PyUnicode_FSConverter(ext, &ext_enc)) {
    Py_DECREF(path);
    return NULL;
  }
  if (threshold < 0 || align < 0) {
    Py_DECREF(path);
    Py_XDECREF(ext_enc);
    return opy_invalid("save: size_threshold and align must not be negative");
  }
  onnxc_save_options o = {0};
  o.external_data = ext_enc ? PyBytes_AS_STRING(ext_enc) : NULL;
  o.size_threshold = (size_t)threshold;
  o.align = (size_t)align;
  o.all_inline = all_inline;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_model_save(self->model, PyBytes_AS_STRING(path), &o, &err);
  Py_END_ALLOW_THREADS;
  Py_DECREF(path);
  Py_XDECREF(ext_enc);
  if (st != ONNXC_OK) return opy_raise(st, &err);
  Py_RETURN_NONE;
}

static PyObject *model_check(opy_model *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"full", "strict", NULL};
  int full = 0, strict = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|pp", names, &full, &strict)) return NULL;
  onnxc_check_options o = {0};
  o.full = full;
  o.strict = strict;
  char *report = NULL;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_check(self->model, &o, &report, &err);
  Py_END_ALLOW_THREADS;
  if (st == ONNXC_ERR_INVALID_MODEL && report && report[0]) {
    /* every error, not only the first: the report is what `onnxc check` prints */
    size_t n = strlen(report);
    while (n && report[n - 1] == '\n') report[--n] = 0;
    PyErr_SetString(opy_errors[ONNXC_ERR_INVALID_MODEL], report);
    free(report);
    return NULL;
  }
  free(report);
  if (st != ONNXC_OK) return opy_raise(st, &err);
  Py_RETURN_NONE;
}

static PyObject *model_infer_shapes(opy_model *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"strict", NULL};
  int strict = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", names, &strict)) return NULL;
  opy_model *copy = model_copy(self);
  if (!copy) return NULL;
  onnxc_infer_options o = {0};
  o.strict = strict;
  char *warnings = NULL;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_infer_shapes(copy->model, &o, &warnings, &err);
  Py_END_ALLOW_THREADS;
  if (st != ONNXC_OK) {
    free(warnings);
    Py_DECREF(copy);
    return opy_raise(st, &err);
  }
  PyObject *w = PyUnicode_FromString(warnings ? warnings : "");
  free(warnings);
  if (!w) {
    Py_DECREF(copy);
    return NULL;
  }
  return Py_BuildValue("(NN)", (PyObject *)copy, w);
}

static PyObject *model_convert_opset(opy_model *self, PyObject *args) {
  long long target;
  if (!PyArg_ParseTuple(args, "L", &target)) return NULL;
  opy_model *copy = model_copy(self);
  if (!copy) return NULL;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_convert_opset(copy->model, (int64_t)target, &err);
  Py_END_ALLOW_THREADS;
  if (st != ONNXC_OK) {
    Py_DECREF(copy);
    return opy_raise(st, &err);
  }
  return (PyObject *)copy;
}

PyObject *opy_model_args(const onnxc_model *m, int outputs) {
  size_t n = outputs ? onnxc_model_output_count(m) : onnxc_model_input_count(m);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    const char *name = outputs ? onnxc_model_output_name(m, i) : onnxc_model_input_name(m, i);
    PyObject *ts =
        opy_describe_type(outputs ? onnxc_model_output_type(m, i) : onnxc_model_input_type(m, i));
    PyObject *item =
        ts ? Py_BuildValue("(sOO)", name, PyTuple_GET_ITEM(ts, 0), PyTuple_GET_ITEM(ts, 1)) : NULL;
    Py_XDECREF(ts);
    if (!item)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *model_inputs(opy_model *self, PyObject *unused) {
  (void)unused;
  return opy_model_args(self->model, 0);
}

static PyObject *model_outputs(opy_model *self, PyObject *unused) {
  (void)unused;
  return opy_model_args(self->model, 1);
}

/* Sets d[key] = value and drops the reference to value; -1 on failure. */
static int put(PyObject *d, const char *key, PyObject *value) {
  if (!value) return -1;
  int rc = PyDict_SetItemString(d, key, value);
  Py_DECREF(value);
  return rc;
}

static PyObject *model_info(opy_model *self, PyObject *unused) {
  (void)unused;
  const onnxc_model *m = self->model;
  PyObject *d = PyDict_New(), *opsets = PyDict_New(), *meta = PyDict_New();
  if (!d || !opsets || !meta) goto fail;
  for (size_t i = 0; i < onnxc_model_opset_count(m); i++)
    if (put(opsets, onnxc_model_opset_domain(m, i),
            PyLong_FromLongLong(onnxc_model_opset_version(m, i))) < 0)
      goto fail;
  for (size_t i = 0; i < onnxc_model_metadata_count(m); i++)
    if (put(meta, onnxc_model_metadata_key(m, i),
            PyUnicode_FromString(onnxc_model_metadata_value(m, i))) < 0)
      goto fail;
  if (put(d, "ir_version", PyLong_FromLongLong(onnxc_model_ir_version(m))) < 0 ||
      put(d, "model_version", PyLong_FromLongLong(onnxc_model_version(m))) < 0 ||
      put(d, "producer_name", PyUnicode_FromString(onnxc_model_producer_name(m))) < 0 ||
      put(d, "producer_version", PyUnicode_FromString(onnxc_model_producer_version(m))) < 0 ||
      put(d, "domain", PyUnicode_FromString(onnxc_model_domain(m))) < 0 ||
      put(d, "doc_string", PyUnicode_FromString(onnxc_model_doc_string(m))) < 0 ||
      put(d, "graph_name", PyUnicode_FromString(onnxc_model_graph_name(m))) < 0 ||
      put(d, "opset_import", Py_NewRef(opsets)) < 0 ||
      put(d, "metadata_props", Py_NewRef(meta)) < 0)
    goto fail;
  Py_DECREF(opsets);
  Py_DECREF(meta);
  return d;
fail:
  Py_XDECREF(d);
  Py_XDECREF(opsets);
  Py_XDECREF(meta);
  return NULL;
}

/* pickle: the encoded model and its folder, decoded again by load_bytes (so
 * a model, and a session holding one, can be sent to worker processes) */
static PyObject *model_reduce(opy_model *self, PyObject *unused) {
  (void)unused;
  PyObject *mod = PyImport_ImportModule("onnxc._onnxc");
  PyObject *fn = mod ? PyObject_GetAttrString(mod, "load_bytes") : NULL;
  Py_XDECREF(mod);
  PyObject *bytes = fn ? model_encode(self, NULL) : NULL;
  if (!bytes) {
    Py_XDECREF(fn);
    return NULL;
  }
  return Py_BuildValue("(N(NO))", fn, bytes, self->base_dir ? self->base_dir : Py_None);
}

static PyObject *model_get_base_dir(opy_model *self, void *unused) {
  (void)unused;
  return Py_NewRef(self->base_dir ? self->base_dir : Py_None);
}

static PyMethodDef model_methods[] = {
    {"encode", (PyCFunction)model_encode, METH_NOARGS,
     "encode() -> bytes: the model in the binary format (onnx.proto)."},
    {"to_text", (PyCFunction)model_to_text, METH_NOARGS,
     "to_text() -> str: the model in the ONNX textual syntax."},
    {"save", (PyCFunction)(void (*)(void))model_save, METH_VARARGS | METH_KEYWORDS,
     "save(path, external_data=None, size_threshold=1024, align=0, all_inline=False): "
     "writes the model (text when the extension says so)."},
    {"check", (PyCFunction)(void (*)(void))model_check, METH_VARARGS | METH_KEYWORDS,
     "check(full=False, strict=False): raises InvalidModel listing every error."},
    {"infer_shapes", (PyCFunction)(void (*)(void))model_infer_shapes, METH_VARARGS | METH_KEYWORDS,
     "infer_shapes(strict=False) -> (Model, warnings): a copy with inferred value_info."},
    {"convert_opset", (PyCFunction)model_convert_opset, METH_VARARGS,
     "convert_opset(target) -> Model: a copy that imports ai.onnx at opset target."},
    {"inputs", (PyCFunction)model_inputs, METH_NOARGS,
     "inputs() -> [(name, type, shape)]: graph inputs without an initializer."},
    {"outputs", (PyCFunction)model_outputs, METH_NOARGS,
     "outputs() -> [(name, type, shape)]: graph outputs."},
    {"__reduce__", (PyCFunction)model_reduce, METH_NOARGS, "Pickles as the encoded model."},
    {"info", (PyCFunction)model_info, METH_NOARGS,
     "info() -> dict: versions, producer, domain, doc string, graph name, opsets, metadata."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef model_getset[] = {
    {"base_dir", (getter)model_get_base_dir, NULL,
     "The folder where external data are resolved, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject opy_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxc._onnxc.Model",
    .tp_basicsize = sizeof(opy_model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A loaded ONNX model (made by onnxc.load, onnxc.load_from_string, "
        "onnxc.parse_model). Immutable: tooling returns new models.",
    .tp_methods = model_methods,
    .tp_getset = model_getset,
};

/* ------------------------------------------------------------ module */

static PyObject *mod_dtype_name(PyObject *mod, PyObject *arg) {
  (void)mod;
  long dt = PyLong_AsLong(arg);
  if (dt == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(onnxc_dtype_name((int32_t)dt));
}

/* the table of graph passes: (name, level, default_on, description) per
 * pass, in the order they run */
static PyObject *mod_passes(PyObject *mod, PyObject *unused) {
  (void)mod;
  (void)unused;
  size_t n = onnxc_pass_count();
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *t = Py_BuildValue("(siNs)", onnxc_pass_name(i), onnxc_pass_level(i),
                                PyBool_FromLong(onnxc_pass_default_on(i)),
                                onnxc_pass_description(i));
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

static PyMethodDef module_methods[] = {
    {"passes", mod_passes, METH_NOARGS,
     "passes() -> [(name, level, default_on, description)]: the graph passes in running order."},
    {"load", (PyCFunction)(void (*)(void))mod_load, METH_VARARGS | METH_KEYWORDS,
     "load(source, base_dir=None, load_external_data=True, verify_checksums=True) -> Model"},
    {"load_bytes", (PyCFunction)(void (*)(void))mod_load_bytes, METH_VARARGS | METH_KEYWORDS,
     "load_bytes(source, base_dir=None, load_external_data=True, verify_checksums=True) -> Model"},
    {"parse_text", (PyCFunction)(void (*)(void))mod_parse_text, METH_VARARGS | METH_KEYWORDS,
     "parse_text(text, name='<text>') -> Model"},
    {"dtype_name", mod_dtype_name, METH_O,
     "dtype_name(n) -> str: the name of TensorProto.DataType n ('' if unknown)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "onnxc._onnxc",
    "The C layer of onnxc over libonnxc's public API; use the onnxc package.",
    -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__onnxc(void) {
  import_array();
  if (PyType_Ready(&opy_model_type) < 0 || opy_session_init_type() < 0 ||
      opy_generator_init_type() < 0)
    return NULL;
  PyObject *mod = PyModule_Create(&module_def);
  if (!mod) return NULL;
  if (make_errors(mod) < 0 ||
      PyModule_AddObjectRef(mod, "Model", (PyObject *)&opy_model_type) < 0 ||
      PyModule_AddObjectRef(mod, "Session", (PyObject *)&opy_session_type) < 0 ||
      PyModule_AddObjectRef(mod, "Generator", (PyObject *)&opy_generator_type) < 0 ||
      PyModule_AddStringConstant(mod, "library_version", onnxc_version()) < 0) {
    Py_DECREF(mod);
    return NULL;
  }
  return mod;
}
