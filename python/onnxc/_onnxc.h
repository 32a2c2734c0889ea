/* _onnxc.h - what the C files of the extension module onnxc._onnxc share.
 *
 * The module is a thin layer over the public API (onnxc.h): models and
 * tooling in _module.c, sessions and the numpy <-> onnxc_value conversions
 * in _session.c. The Python package (onnxc/__init__.py) builds the
 * onnxruntime- and onnx-shaped API on top of it. */
#ifndef ONNXC_PY_H
#define ONNXC_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* numpy's C API is a table of function pointers imported once by the
 * module's init (_module.c); the other files reach the same table. */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL onnxc_py_array_api
#ifndef ONNXC_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "onnxc.h"

/* A loaded model. Immutable from Python: tooling that changes a model
 * (shape inference, opset conversion) works on a copy, so that a session
 * made from it never sees the model change under it. */
typedef struct opy_model {
  PyObject_HEAD onnxc_model *model;
  PyObject *buffer;   /* bytes the model points into (loaded from memory), or NULL */
  PyObject *base_dir; /* str: where external data are resolved, or NULL */
} opy_model;

/* A session over a model (_session.c). */
typedef struct opy_session {
  PyObject_HEAD onnxc_session *session;
  opy_model *model; /* the session uses the model in place: kept alive */
} opy_session;

extern PyTypeObject opy_model_type;
extern PyTypeObject opy_session_type;
extern PyTypeObject opy_generator_type;

/* The exception classes: [0] onnxc.Error, [code] its subclass for each
 * onnxc_status. */
#define OPY_N_ERRORS 9
extern PyObject *opy_errors[OPY_N_ERRORS];

/* Raises the exception of st with the library's message; returns NULL. */
PyObject *opy_raise(onnxc_status st, const onnxc_error *err);
/* Raises onnxc.InvalidArgument with a formatted message; returns NULL. */
PyObject *opy_invalid(const char *fmt, ...);

/* (type string, shape) of a declared type: shape is a list of int (fixed),
 * str (symbolic) or None (unknown) per dim; None when the rank is unknown;
 * [] for sequences, maps and optionals. */
PyObject *opy_describe_type(const onnxc_type *t);

/* [(name, type string, shape)] of a model's inputs (graph inputs without
 * an initializer) or outputs. */
PyObject *opy_model_args(const onnxc_model *m, int outputs);

/* Session functions registered in the module (_session.c). */
int opy_session_init_type(void);
/* The Generator type (_generate.c). */
int opy_generator_init_type(void);

#endif
