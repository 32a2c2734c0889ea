/* _session.c - the Session type: runs a model on numpy arrays, lists
 * (sequences), dicts (maps) and None (empty optionals).
 *
 * Element types cross as numpy dtypes: the numeric ones as themselves
 * (float16 included), bool as bool, strings as object arrays of str.
 * numpy has no bfloat16, float8, float4, int4/uint4 or int2/uint2: those
 * cross as the library's storage (onnxc.h, "values"): bfloat16 bits in
 * uint16, float8 and float4 bits in uint8, 4- and 2-bit integers one per
 * byte (int8 sign-extended for the signed ones, uint8 otherwise). An input
 * declared with one of those types takes an array of its carrier dtype. */
#include <stdlib.h>
#include <string.h>

#include "_onnxc.h"

/* ------------------------------------------------------------ element types */

enum { DT_FLOAT = 1, DT_STRING = 8, DT_INT64 = 7 };

/* The numpy type number of an array's dtype in native byte order, or -1 for
 * the dtypes with no ONNX element type (datetime, void, long double).
 * Strings of any kind (str, bytes, object) map to NPY_OBJECT. */
static int native_typenum(const PyArray_Descr *d) {
  int size = (int)d->elsize;
  switch (d->kind) {
    case 'b':
      return NPY_BOOL;
    case 'i':
      return size == 1 ? NPY_INT8 : size == 2 ? NPY_INT16 : size == 4 ? NPY_INT32 : NPY_INT64;
    case 'u':
      return size == 1 ? NPY_UINT8 : size == 2 ? NPY_UINT16 : size == 4 ? NPY_UINT32 : NPY_UINT64;
    case 'f':
      return size == 2 ? NPY_FLOAT16 : size == 4 ? NPY_FLOAT32 : size == 8 ? NPY_FLOAT64 : -1;
    case 'c':
      return size == 8 ? NPY_COMPLEX64 : size == 16 ? NPY_COMPLEX128 : -1;
    case 'O':
    case 'U':
    case 'S':
      return NPY_OBJECT;
    default:
      return -1;
  }
}

/* The ONNX element type a numpy type number stands for by itself. */
static int32_t dtype_of_typenum(int t) {
  switch (t) {
    case NPY_FLOAT32:
      return 1;
    case NPY_UINT8:
      return 2;
    case NPY_INT8:
      return 3;
    case NPY_UINT16:
      return 4;
    case NPY_INT16:
      return 5;
    case NPY_INT32:
      return 6;
    case NPY_INT64:
      return 7;
    case NPY_OBJECT:
      return 8;
    case NPY_BOOL:
      return 9;
    case NPY_FLOAT16:
      return 10;
    case NPY_FLOAT64:
      return 11;
    case NPY_UINT32:
      return 12;
    case NPY_UINT64:
      return 13;
    case NPY_COMPLEX64:
      return 14;
    case NPY_COMPLEX128:
      return 15;
    default:
      return 0;
  }
}

/* The numpy type number that carries an ONNX element type (see the top of
 * this file), or -1. */
static int typenum_of_dtype(int32_t dt) {
  switch (dt) {
    case 16:
      return NPY_UINT16; /* bfloat16 */
    case 17:
    case 18:
    case 19:
    case 20: /* float8 kinds */
    case 21:
    case 23:
    case 24:
    case 25: /* uint4, float4e2m1, float8e8m0, uint2 */
      return NPY_UINT8;
    case 22:
    case 26:
      return NPY_INT8; /* int4, int2 */
    case 1:
      return NPY_FLOAT32;
    case 2:
      return NPY_UINT8;
    case 3:
      return NPY_INT8;
    case 4:
      return NPY_UINT16;
    case 5:
      return NPY_INT16;
    case 6:
      return NPY_INT32;
    case 7:
      return NPY_INT64;
    case 9:
      return NPY_BOOL;
    case 10:
      return NPY_FLOAT16;
    case 11:
      return NPY_FLOAT64;
    case 12:
      return NPY_UINT32;
    case 13:
      return NPY_UINT64;
    case 14:
      return NPY_COMPLEX64;
    case 15:
      return NPY_COMPLEX128;
    default:
      return -1;
  }
}

/* ------------------------------------------------------------ Python -> value */

/* A run's conversions: what must live until the run returns. */
typedef struct conv {
  PyObject *keep;   /* arrays whose memory the inputs wrap */
  const char *name; /* the input, for messages */
} conv;

static onnxc_value *fail_value(onnxc_error *err) {
  opy_raise((onnxc_status)err->code, err);
  return NULL;
}

static onnxc_value *strings_from(PyArrayObject *a, const int64_t *dims, size_t rank,
                                 const conv *c) {
  PyArrayObject *o =
      (PyArrayObject *)PyArray_FromArray(a, PyArray_DescrFromType(NPY_OBJECT), NPY_ARRAY_CARRAY_RO);
  if (!o) return NULL;
  npy_intp n = PyArray_SIZE(o);
  const char **strs = malloc(sizeof *strs * (size_t)(n ? n : 1));
  size_t *lens = malloc(sizeof *lens * (size_t)(n ? n : 1));
  PyObject **items = (PyObject **)PyArray_DATA(o);
  onnxc_value *v = NULL;
  if (!strs || !lens) {
    PyErr_NoMemory();
    goto done;
  }
  for (npy_intp i = 0; i < n; i++) {
    Py_ssize_t len = 0;
    PyObject *s = items[i];
    if (s && PyUnicode_Check(s)) {
      strs[i] = PyUnicode_AsUTF8AndSize(s, &len);
    } else if (s && PyBytes_Check(s)) {
      char *p = NULL;
      if (PyBytes_AsStringAndSize(s, &p, &len) == 0)
        strs[i] = p;
      else
        strs[i] = NULL;
    } else {
      opy_invalid("input '%s': element %zd of an object array is %s, not str or bytes", c->name,
                  (Py_ssize_t)i, s ? Py_TYPE(s)->tp_name : "NULL");
      goto done;
    }
    if (!strs[i]) goto done;
    lens[i] = (size_t)len;
  }
  onnxc_error err = {0};
  v = onnxc_tensor_create_strings(dims, rank, strs, lens, &err);
  if (!v) fail_value(&err);
done:
  free(strs);
  free(lens);
  Py_DECREF(o);
  return v;
}

/* 4- and 2-bit types take one element per byte: a byte outside the type's
 * range would break the library's storage contract (onnxc.h, "values"). */
static int check_subbyte(PyArrayObject *a, int32_t dt, const conv *c) {
  int bits = dt == 25 || dt == 26 ? 2 : dt >= 21 && dt <= 23 ? 4 : 0;
  if (!bits) return 0;
  int lo = 0, hi = (1 << bits) - 1;
  if (dt == 22 || dt == 26) { /* signed, one int8 each */
    lo = -(1 << (bits - 1));
    hi = (1 << (bits - 1)) - 1;
  }
  npy_intp n = PyArray_SIZE(a);
  const uint8_t *u = PyArray_DATA(a);
  for (npy_intp i = 0; i < n; i++) {
    int v = lo < 0 ? (int)(int8_t)u[i] : (int)u[i];
    if (v < lo || v > hi) {
      opy_invalid("input '%s': element %zd is %d, outside %s's range %d..%d", c->name,
                  (Py_ssize_t)i, v, onnxc_dtype_name(dt), lo, hi);
      return -1;
    }
  }
  return 0;
}

/* A tensor from an array, or from anything numpy makes an array of (scalars,
 * nested lists) in the declared element type when it has a numpy one.
 * The value wraps the array's memory when it is C-contiguous, aligned and
 * native-endian; otherwise a contiguous copy is made and kept. */
static onnxc_value *tensor_from(PyObject *obj, int32_t declared, const conv *c) {
  PyArrayObject *a;
  if (PyArray_Check(obj)) {
    a = (PyArrayObject *)Py_NewRef(obj);
  } else {
    PyArray_Descr *d = NULL;
    int t = declared == DT_STRING ? NPY_OBJECT : declared ? typenum_of_dtype(declared) : -1;
    if (t >= 0) d = PyArray_DescrFromType(t);
    a = (PyArrayObject *)PyArray_FromAny(obj, d, 0, 0, 0, NULL);
    if (!a) return NULL;
  }
  int t = native_typenum(PyArray_DESCR(a));
  int rank = PyArray_NDIM(a);
  int64_t dims[NPY_MAXDIMS];
  for (int i = 0; i < rank; i++) dims[i] = (int64_t)PyArray_DIM(a, i);
  onnxc_value *v = NULL;
  if (t < 0) {
    PyObject *repr = PyObject_Str((PyObject *)PyArray_DESCR(a));
    opy_invalid("input '%s': numpy dtype %s has no ONNX element type", c->name,
                repr ? PyUnicode_AsUTF8(repr) : "?");
    Py_XDECREF(repr);
  } else if (t == NPY_OBJECT) {
    v = strings_from(a, dims, (size_t)rank, c);
  } else {
    int32_t dt = dtype_of_typenum(t);
    /* bit patterns of a type numpy lacks, in the carrier dtype */
    if (declared && declared != dt && typenum_of_dtype(declared) == t && declared >= 16)
      dt = declared;
    PyArrayObject *ca =
        (PyArrayObject *)PyArray_FromArray(a, PyArray_DescrFromType(t), NPY_ARRAY_CARRAY_RO);
    if (ca && check_subbyte(ca, dt, c) < 0) Py_CLEAR(ca);
    if (ca) {
      onnxc_error err = {0};
      v = onnxc_tensor_wrap(dt, dims, (size_t)rank, PyArray_DATA(ca), &err);
      if (!v)
        fail_value(&err);
      else if (PyList_Append(c->keep, (PyObject *)ca) < 0) {
        onnxc_value_free(v);
        v = NULL;
      }
      Py_DECREF(ca);
    }
  }
  Py_DECREF(a);
  return v;
}

static onnxc_value *value_from(PyObject *obj, const onnxc_type *t, const conv *c);

static onnxc_value *sequence_from(PyObject *obj, const onnxc_type *elem, const conv *c) {
  PyObject *fast = PySequence_Fast(obj, "a sequence input must be a list or tuple");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  onnxc_value **items = calloc((size_t)(n ? n : 1), sizeof *items);
  onnxc_value *v = NULL;
  Py_ssize_t made = 0;
  if (!items) {
    PyErr_NoMemory();
    goto done;
  }
  for (; made < n; made++)
    if (!(items[made] = value_from(PySequence_Fast_GET_ITEM(fast, made), elem, c))) goto done;
  onnxc_error err = {0};
  v = onnxc_sequence_create((const onnxc_value *const *)items, (size_t)n, &err);
  if (!v) fail_value(&err);
done:
  /* the sequence holds its own references to the items */
  for (Py_ssize_t i = 0; items && i < made; i++) onnxc_value_free(items[i]);
  free(items);
  Py_DECREF(fast);
  return v;
}

static onnxc_value *map_from(PyObject *obj, const onnxc_type *t, const conv *c) {
  if (!PyDict_Check(obj)) return (onnxc_value *)opy_invalid("input '%s': a map is a dict", c->name);
  int32_t key_type = onnxc_type_map_key(t);
  int32_t value_type = onnxc_type_elem_type(onnxc_type_map_value(t));
  PyObject *keys = PyDict_Keys(obj), *values = PyDict_Values(obj);
  onnxc_value *k = NULL, *v = NULL, *m = NULL;
  if (!keys || !values) goto done;
  if (!key_type) /* undeclared: str keys make a string map, others int64 */
    key_type =
        PyList_GET_SIZE(keys) && PyUnicode_Check(PyList_GET_ITEM(keys, 0)) ? DT_STRING : DT_INT64;
  if (!value_type && !PyList_GET_SIZE(values)) value_type = DT_FLOAT;
  if (!(k = tensor_from(keys, key_type, c)) || !(v = tensor_from(values, value_type, c))) goto done;
  onnxc_error err = {0};
  m = onnxc_map_create(k, v, &err);
  if (!m) fail_value(&err);
done:
  onnxc_value_free(k);
  onnxc_value_free(v);
  Py_XDECREF(keys);
  Py_XDECREF(values);
  return m;
}

/* A value from a Python object, led by the declared type t (may be NULL). */
static onnxc_value *value_from(PyObject *obj, const onnxc_type *t, const conv *c) {
  onnxc_type_kind kind = onnxc_type_kind_of(t);
  onnxc_error err = {0};
  if (kind == ONNXC_TYPE_OPTIONAL) {
    if (obj == Py_None) {
      onnxc_value *v = onnxc_optional_create(NULL, &err);
      return v ? v : fail_value(&err);
    }
    onnxc_value *inner = value_from(obj, onnxc_type_element(t), c);
    if (!inner) return NULL;
    onnxc_value *v = onnxc_optional_create(inner, &err);
    onnxc_value_free(inner);
    return v ? v : fail_value(&err);
  }
  if (obj == Py_None) {
    if (kind == ONNXC_TYPE_UNKNOWN) {
      onnxc_value *v = onnxc_optional_create(NULL, &err);
      return v ? v : fail_value(&err);
    }
    return (onnxc_value *)opy_invalid("input '%s': None for a value that is not optional", c->name);
  }
  if (kind == ONNXC_TYPE_SEQUENCE ||
      (kind == ONNXC_TYPE_UNKNOWN && (PyList_Check(obj) || PyTuple_Check(obj))))
    return sequence_from(obj, onnxc_type_element(t), c);
  if (kind == ONNXC_TYPE_MAP || (kind == ONNXC_TYPE_UNKNOWN && PyDict_Check(obj)))
    return map_from(obj, t, c);
  if (kind == ONNXC_TYPE_SPARSE_TENSOR) {
    PyErr_Format(opy_errors[ONNXC_ERR_UNSUPPORTED],
                 "input '%s': sparse tensor inputs are not supported by the Python package",
                 c->name);
    return NULL;
  }
  return tensor_from(obj, onnxc_type_elem_type(t), c);
}

/* ------------------------------------------------------------ value -> Python */

static PyObject *tensor_to_py(const onnxc_value *v) {
  int32_t dt = onnxc_tensor_dtype(v);
  size_t rank = onnxc_tensor_rank(v);
  const int64_t *d = onnxc_tensor_dims(v);
  npy_intp dims[NPY_MAXDIMS];
  if (rank > NPY_MAXDIMS)
    return PyErr_Format(opy_errors[ONNXC_ERR_UNSUPPORTED],
                        "an output of rank %zu: numpy allows at most %d dims", rank, NPY_MAXDIMS);
  for (size_t i = 0; i < rank; i++) dims[i] = (npy_intp)d[i];
  if (dt == DT_STRING) {
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew((int)rank, dims, NPY_OBJECT);
    if (!a) return NULL;
    PyObject **items = (PyObject **)PyArray_DATA(a);
    npy_intp n = PyArray_SIZE(a);
    for (npy_intp i = 0; i < n; i++) {
      size_t len = 0;
      const char *s = onnxc_tensor_string(v, (size_t)i, &len);
      PyObject *o = PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)len, NULL);
      if (!o) { /* not UTF-8: the bytes as they are */
        PyErr_Clear();
        o = PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
      }
      if (!o) {
        Py_DECREF(a);
        return NULL;
      }
      Py_XSETREF(items[i], o);
    }
    return (PyObject *)a;
  }
  int t = typenum_of_dtype(dt);
  if (t < 0)
    return PyErr_Format(opy_errors[ONNXC_ERR_UNSUPPORTED], "an output of element type %s (%d)",
                        onnxc_dtype_name(dt), (int)dt);
  PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew((int)rank, dims, t);
  if (!a) return NULL;
  /* copied, not wrapped: an output may share storage with the model's
     mapped weights or a caller's input, which must not become writable */
  size_t nbytes = onnxc_tensor_nbytes(v);
  if ((size_t)PyArray_NBYTES(a) != nbytes) {
    Py_DECREF(a);
    return PyErr_Format(opy_errors[ONNXC_ERR_RUNTIME],
                        "an output of %zu bytes for %zd elements of %s", nbytes,
                        (Py_ssize_t)PyArray_SIZE(a), onnxc_dtype_name(dt));
  }
  if (nbytes) memcpy(PyArray_DATA(a), onnxc_tensor_data_const(v), nbytes);
  return (PyObject *)a;
}

static PyObject *value_to_py(const onnxc_value *v);

static PyObject *map_to_py(const onnxc_value *v) {
  PyObject *keys = NULL, *values = NULL, *kl = NULL, *vl = NULL, *d = NULL;
  if (!(keys = value_to_py(onnxc_map_keys(v))) || !(values = value_to_py(onnxc_map_values(v))))
    goto done;
  /* Python scalars, as onnxruntime gives them (ZipMap's dicts) */
  if (!(kl = PySequence_List(keys)) || !(vl = PyObject_CallMethod(values, "tolist", NULL)))
    goto done;
  if (!PyList_Check(vl) || PyList_GET_SIZE(kl) != PyList_GET_SIZE(vl)) {
    PyErr_SetString(opy_errors[ONNXC_ERR_RUNTIME], "a map whose keys and values differ in length");
    goto done;
  }
  if (!(d = PyDict_New())) goto done;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(kl); i++) {
    PyObject *k = PyList_GET_ITEM(kl, i);
    PyObject *key =
        PyArray_IsScalar(k, Generic) ? PyObject_CallMethod(k, "item", NULL) : Py_NewRef(k);
    int rc = key ? PyDict_SetItem(d, key, PyList_GET_ITEM(vl, i)) : -1;
    Py_XDECREF(key);
    if (rc < 0) {
      Py_CLEAR(d);
      break;
    }
  }
done:
  Py_XDECREF(keys);
  Py_XDECREF(values);
  Py_XDECREF(kl);
  Py_XDECREF(vl);
  return d;
}

static PyObject *value_to_py(const onnxc_value *v) {
  if (!v) Py_RETURN_NONE; /* an optional output without a value */
  switch (onnxc_value_kind(v)) {
    case ONNXC_TYPE_TENSOR:
      return tensor_to_py(v);
    case ONNXC_TYPE_SEQUENCE: {
      size_t n = onnxc_sequence_length(v);
      PyObject *list = PyList_New((Py_ssize_t)n);
      for (size_t i = 0; list && i < n; i++) {
        PyObject *item = value_to_py(onnxc_sequence_at(v, i));
        if (!item)
          Py_CLEAR(list);
        else
          PyList_SET_ITEM(list, (Py_ssize_t)i, item);
      }
      return list;
    }
    case ONNXC_TYPE_MAP:
      return map_to_py(v);
    case ONNXC_TYPE_OPTIONAL:
      if (!onnxc_optional_has_value(v)) Py_RETURN_NONE;
      return value_to_py(onnxc_optional_value(v));
    default:
      return PyErr_Format(
          opy_errors[ONNXC_ERR_UNSUPPORTED],
          "an output of kind %d (sparse tensor): not supported by the Python package",
          (int)onnxc_value_kind(v));
  }
}

/* ------------------------------------------------------------ Session */

static PyObject *session_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"model",        "threads",         "optimization_level",
                          "max_memory",   "no_quant_fusion", "low_bit_int8",
                          "disabled_passes", "thread_spin_us", "pin_threads",
                          "parallel_branches", NULL};
  PyObject *model, *disabled = Py_None;
  int threads = 0, level = 1, no_quant_fusion = 0, low_bit_int8 = 0, spin_us = 0, pin = 0,
      branches = 0;
  Py_ssize_t max_memory = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|iinppOipp", names, &opy_model_type, &model,
                                   &threads, &level, &max_memory, &no_quant_fusion, &low_bit_int8,
                                   &disabled, &spin_us, &pin, &branches))
    return NULL;
  if (threads < 0 || level < 0 || max_memory < 0)
    return opy_invalid("threads, optimization_level and max_memory must not be negative");
  /* graph passes to leave out: a sequence of names (the strings' UTF-8 stays
   * valid while `seq` holds them; the library copies the names) */
  PyObject *seq = NULL;
  const char **off = NULL;
  Py_ssize_t n_off = 0;
  if (disabled != Py_None) {
    if (PyUnicode_Check(disabled))
      return opy_invalid("disabled_passes: a list of pass names, not one string");
    seq = PySequence_Fast(disabled, "disabled_passes: a list of pass names");
    if (!seq) return NULL;
    n_off = PySequence_Fast_GET_SIZE(seq);
    off = calloc((size_t)n_off + 1, sizeof *off);
    if (!off) {
      Py_DECREF(seq);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n_off; i++) {
      PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
      off[i] = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
      if (!off[i]) {
        free(off);
        Py_DECREF(seq);
        return PyErr_Occurred() ? NULL : opy_invalid("disabled_passes: names must be strings");
      }
    }
  }
  opy_session *self = (opy_session *)type->tp_alloc(type, 0);
  if (!self) {
    free(off);
    Py_XDECREF(seq);
    return NULL;
  }
  self->model = (opy_model *)Py_NewRef(model);
  onnxc_session_options o = {0};
  o.threads = threads;
  o.optimization_level = level;
  o.max_memory = (size_t)max_memory;
  o.no_quant_fusion = no_quant_fusion;
  o.low_bit_int8 = low_bit_int8;
  o.disabled_passes = off;
  o.n_disabled_passes = (size_t)n_off;
  o.thread_spin_us = spin_us;
  o.pin_threads = pin;
  o.parallel_branches = branches;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_session_create(self->model->model, &o, &self->session, &err);
  Py_END_ALLOW_THREADS;
  free(off);
  Py_XDECREF(seq);
  if (st != ONNXC_OK) {
    Py_DECREF(self);
    return opy_raise(st, &err);
  }
  return (PyObject *)self;
}

static void session_dealloc(opy_session *self) {
  /* no run can be in flight: each holds a reference to self */
  onnxc_session_free(self->session);
  Py_XDECREF(self->model);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A session's inputs and outputs are its model's (onnxc.h). */
static PyObject *session_inputs(opy_session *self, PyObject *unused) {
  (void)unused;
  return opy_model_args(onnxc_session_model(self->session), 0);
}

static PyObject *session_outputs(opy_session *self, PyObject *unused) {
  (void)unused;
  return opy_model_args(onnxc_session_model(self->session), 1);
}

static const onnxc_type *declared_input(const onnxc_session *s, const char *name) {
  for (size_t i = 0; i < onnxc_session_input_count(s); i++)
    if (strcmp(onnxc_session_input_name(s, i), name) == 0) return onnxc_session_input_type(s, i);
  return NULL; /* an input with an initializer, or a wrong name the run reports */
}

/* run(output_names, feeds, threads=0, tag=None) -> list */
static PyObject *session_run(opy_session *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"output_names", "feeds", "threads", "tag", NULL};
  PyObject *out_list, *feeds;
  int threads = 0;
  const char *tag = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|iz", names, &out_list, &PyDict_Type, &feeds,
                                   &threads, &tag))
    return NULL;
  if (threads < 0) return opy_invalid("run: threads must not be negative");
  PyObject *keep = PyList_New(0), *out_names = NULL, *result = NULL;
  Py_ssize_t n_in = PyDict_Size(feeds), n_out = 0, made = 0;
  const char **in_names = calloc((size_t)n_in + 1, sizeof *in_names);
  onnxc_value **ins = calloc((size_t)n_in + 1, sizeof *ins);
  const char **out_cnames = NULL;
  onnxc_value **outs = NULL;
  if (!keep || !in_names || !ins) {
    if (keep) PyErr_NoMemory();
    goto done;
  }
  /* inputs: the keys and arrays stay referenced by `keep` while the run
     reads them without the GIL */
  PyObject *key, *val;
  Py_ssize_t pos = 0;
  while (PyDict_Next(feeds, &pos, &key, &val)) {
    if (!PyUnicode_Check(key)) {
      opy_invalid("run: input names must be str, not %s", Py_TYPE(key)->tp_name);
      goto done;
    }
    if (!(in_names[made] = PyUnicode_AsUTF8(key)) || PyList_Append(keep, key) < 0) goto done;
    conv c = {keep, in_names[made]};
    if (!(ins[made] = value_from(val, declared_input(self->session, in_names[made]), &c)))
      goto done;
    made++;
  }
  if (out_list == Py_None) {
    n_out = (Py_ssize_t)onnxc_session_output_count(self->session);
  } else {
    if (!(out_names = PySequence_Fast(out_list, "run: output_names must be a list or None")))
      goto done;
    n_out = PySequence_Fast_GET_SIZE(out_names);
    if (!(out_cnames = calloc((size_t)n_out + 1, sizeof *out_cnames))) {
      PyErr_NoMemory();
      goto done;
    }
    for (Py_ssize_t i = 0; i < n_out; i++) {
      PyObject *o = PySequence_Fast_GET_ITEM(out_names, i);
      if (!PyUnicode_Check(o)) {
        opy_invalid("run: output names must be str, not %s", Py_TYPE(o)->tp_name);
        goto done;
      }
      if (!(out_cnames[i] = PyUnicode_AsUTF8(o))) goto done;
    }
  }
  if (!(outs = calloc((size_t)n_out + 1, sizeof *outs))) {
    PyErr_NoMemory();
    goto done;
  }
  onnxc_run_options ro = {0};
  ro.threads = threads;
  ro.tag = tag;
  onnxc_error err = {0};
  onnxc_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = onnxc_session_run_with(self->session, &ro, in_names, ins, (size_t)made, out_cnames, outs,
                              (size_t)n_out, &err);
  Py_END_ALLOW_THREADS;
  if (st != ONNXC_OK) {
    opy_raise(st, &err);
    goto done;
  }
  result = PyList_New(n_out);
  for (Py_ssize_t i = 0; result && i < n_out; i++) {
    PyObject *o = value_to_py(outs[i]);
    if (!o)
      Py_CLEAR(result);
    else
      PyList_SET_ITEM(result, i, o);
  }
done:
  for (Py_ssize_t i = 0; ins && i < made; i++) onnxc_value_free(ins[i]);
  for (Py_ssize_t i = 0; outs && i < n_out; i++) onnxc_value_free(outs[i]);
  free(in_names);
  free(ins);
  free(out_cnames);
  free(outs);
  Py_XDECREF(out_names);
  Py_XDECREF(keep);
  return result;
}

static PyObject *session_get_model(opy_session *self, void *unused) {
  (void)unused;
  return Py_NewRef((PyObject *)self->model);
}

static PyMethodDef session_methods[] = {
    {"inputs", (PyCFunction)session_inputs, METH_NOARGS,
     "inputs() -> [(name, type, shape)]: what a run is fed."},
    {"outputs", (PyCFunction)session_outputs, METH_NOARGS,
     "outputs() -> [(name, type, shape)]: what a run returns."},
    {"run", (PyCFunction)(void (*)(void))session_run, METH_VARARGS | METH_KEYWORDS,
     "run(output_names, feeds, threads=0, tag=None) -> list. output_names None: every output. "
     "The GIL is released while the model runs; runs may be concurrent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef session_getset[] = {
    {"model", (getter)session_get_model, NULL, "The Model the session runs.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject opy_session_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onnxc._onnxc.Session",
    .tp_basicsize = sizeof(opy_session),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "Session(model, threads=0, optimization_level=1, max_memory=0, no_quant_fusion=False, "
        "low_bit_int8=False): a model prepared for running (use onnxc.InferenceSession; the "
        "options are onnxc_session_options' in onnxc.h).",
    .tp_methods = session_methods,
    .tp_getset = session_getset,
    .tp_new = session_new,
};

int opy_session_init_type(void) { return PyType_Ready(&opy_session_type); }
