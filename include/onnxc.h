/* onnxc.h - the public API of libonnxc: read, write, print, parse, check,
 * infer and run ONNX models.
 *
 * Handles are opaque. Every function that can fail returns an onnxc_status
 * and, when `err` is non-NULL, fills it with a message that says what and
 * where. The library keeps no global mutable state. */
#ifndef ONNXC_H
#define ONNXC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ONNXC_API marks the exported functions: the library is built with
 * -fvisibility=hidden and ONNXC_BUILDING, so only these are visible in
 * libonnxc.so; for callers it expands to nothing. */
#if defined(ONNXC_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define ONNXC_API __attribute__((visibility("default")))
#else
#define ONNXC_API
#endif

typedef enum onnxc_status {
  ONNXC_OK = 0,
  ONNXC_ERR_INVALID_ARG = 1,
  ONNXC_ERR_NOMEM = 2,
  ONNXC_ERR_IO = 3,
  ONNXC_ERR_PARSE = 4,
  ONNXC_ERR_INVALID_MODEL = 5,
  ONNXC_ERR_UNSUPPORTED = 6,
  ONNXC_ERR_RUNTIME = 7,
  ONNXC_ERR_CANCELLED = 8,
} onnxc_status;

/* An error message buffer; same layout as the library's internal one. */
typedef struct onnxc_error {
  int code;
  char msg[1024];
} onnxc_error;

/* ---------------------------------------------------------------- models */

typedef struct onnxc_model onnxc_model;

typedef struct onnxc_load_options {
  int skip_checksum;    /* 1: do not verify external-data SHA-1 checksums */
  int no_external_data; /* 1: leave external data unresolved */
} onnxc_load_options;

/* Loads a model from a file: binary protobuf, or ONNX text (by extension
 * .onnxtxt/.onnxtext/.txt or by content). The file is mapped, not read;
 * external data are mapped too. opts may be NULL. */
ONNXC_API onnxc_status onnxc_model_load(const char *path, const onnxc_load_options *opts,
                                        onnxc_model **out, onnxc_error *err);
/* Decodes a binary model from a caller buffer that must outlive the model
 * (raw data point into it). base_dir resolves external data (may be NULL). */
ONNXC_API onnxc_status onnxc_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                               const onnxc_load_options *opts, onnxc_model **out,
                                               onnxc_error *err);
/* Parses a model from ONNX text. name is used in error messages. */
ONNXC_API onnxc_status onnxc_model_parse_text(const char *text, size_t size, const char *name,
                                              onnxc_model **out, onnxc_error *err);
ONNXC_API void onnxc_model_free(onnxc_model *m);

typedef struct onnxc_save_options {
  const char *external_data; /* file name (relative to the model's folder) or NULL */
  size_t size_threshold;     /* tensors of at least this many bytes go external (default 1024) */
  size_t align;              /* alignment of each tensor in the external file (default 4096) */
  int all_inline;            /* 1: bring all external data back inline */
} onnxc_save_options;

/* Writes binary (or text, by extension) to path. opts may be NULL. */
ONNXC_API onnxc_status onnxc_model_save(const onnxc_model *m, const char *path,
                                        const onnxc_save_options *opts, onnxc_error *err);
/* Encodes to a malloc'd buffer (free with free()). */
ONNXC_API onnxc_status onnxc_model_encode(const onnxc_model *m, void **data, size_t *size,
                                          onnxc_error *err);
/* Prints as ONNX text into a malloc'd NUL-terminated string. */
ONNXC_API onnxc_status onnxc_model_print(const onnxc_model *m, char **text, onnxc_error *err);

/* ---------------------------------------------------------------- check */

typedef struct onnxc_check_options {
  int full;   /* also run strict shape inference */
  int strict; /* rules the reference leaves out */
  /* operators of the caller's domains (see onnxc_op_registry): their nodes are
     checked for arity and, with `full`, typed by their infer callbacks */
  const struct onnxc_op_registry *custom_ops;
} onnxc_check_options;

/* Checks a model. Returns ONNXC_OK if valid, ONNXC_ERR_INVALID_MODEL if not;
 * *report (if non-NULL) receives a malloc'd text listing every error, one
 * per line. */
ONNXC_API onnxc_status onnxc_check(const onnxc_model *m, const onnxc_check_options *opts,
                                   char **report, onnxc_error *err);

/* The rules the checker applies, as named in brackets in its report: the
 * rule's id, the section of the reference notes it comes from and a
 * one-line description. NULL when i >= onnxc_check_rule_count(). */
ONNXC_API size_t onnxc_check_rule_count(void);
ONNXC_API const char *onnxc_check_rule_id(size_t i);
ONNXC_API const char *onnxc_check_rule_section(size_t i);
ONNXC_API const char *onnxc_check_rule_what(size_t i);

/* ---------------------------------------------------------------- infer */

typedef struct onnxc_infer_options {
  int strict;
  /* bind symbolic input dims: names[i] = "input", dims[i] with ranks[i] */
  size_t n_bindings;
  const char *const *binding_names;
  const int64_t *const *binding_dims;
  const size_t *binding_ranks;
  const struct onnxc_op_registry *custom_ops; /* their infer callbacks type their nodes */
} onnxc_infer_options;

/* Fills value_info of every value in place. */
ONNXC_API onnxc_status onnxc_infer_shapes(onnxc_model *m, const onnxc_infer_options *opts,
                                          char **warnings, onnxc_error *err);

/* ---------------------------------------------------------------- opset conversion */

/* Converts the model in place so that it imports the default domain
 * (ai.onnx) at target_opset, one opset step at a time, adapting every node
 * whose operator changed between the versions (attributes that became
 * inputs and back, legacy broadcasting, Softmax's axis, ...); subgraphs and
 * model-local functions included, other domains untouched. A step that
 * cannot keep the model's meaning (an op that does not exist at the target
 * opset, a type the older version lacks, a non-constant input that must
 * become an attribute) fails with ONNXC_ERR_UNSUPPORTED and a message naming
 * the node; the model should then be discarded. */
ONNXC_API onnxc_status onnxc_convert_opset(onnxc_model *m, int64_t target_opset, onnxc_error *err);
/* The lowest opset of the default domain at which every ai.onnx operator of
 * the model (subgraphs included) exists: the highest first version among
 * them, 1 when there is none. The lowest target onnxc_convert_opset can
 * reach. */
ONNXC_API int64_t onnxc_model_min_opset(const onnxc_model *m);

/* ---------------------------------------------------------------- types */

/* The type of a graph input or output (TypeProto). An onnxc_type is
 * borrowed from its model or session and lives as long as it does. Every
 * accessor accepts NULL (an undeclared type) and then answers "unknown". */
typedef struct onnxc_type onnxc_type;

typedef enum onnxc_type_kind {
  ONNXC_TYPE_UNKNOWN = 0,
  ONNXC_TYPE_TENSOR = 1,
  ONNXC_TYPE_SEQUENCE = 2,
  ONNXC_TYPE_MAP = 3,
  ONNXC_TYPE_OPTIONAL = 4,
  ONNXC_TYPE_SPARSE_TENSOR = 5,
  ONNXC_TYPE_OPAQUE = 6, /* a type named by a domain and a name, no structure */
} onnxc_type_kind;

ONNXC_API onnxc_type_kind onnxc_type_kind_of(const onnxc_type *t);
/* Tensor and sparse tensor: the element type (TensorProto.DataType), 0 if
 * unknown. */
ONNXC_API int32_t onnxc_type_elem_type(const onnxc_type *t);
/* Tensor and sparse tensor: the rank, or -1 when the shape is unknown. */
ONNXC_API int64_t onnxc_type_rank(const onnxc_type *t);
/* Dim i: its value, or -1 when it is symbolic or unknown. */
ONNXC_API int64_t onnxc_type_dim(const onnxc_type *t, size_t i);
/* Dim i: its symbolic name ("batch"), or NULL. */
ONNXC_API const char *onnxc_type_dim_param(const onnxc_type *t, size_t i);
/* What dim i holds as stored: a value (onnxc_type_dim gives it, negative
 * too in a malformed model), a symbolic name (onnxc_type_dim_param gives it,
 * NULL when the name is ""), or nothing; UNKNOWN past the rank. */
typedef enum onnxc_dim_kind {
  ONNXC_DIM_UNKNOWN = 0,
  ONNXC_DIM_VALUE = 1,
  ONNXC_DIM_PARAM = 2,
} onnxc_dim_kind;
ONNXC_API onnxc_dim_kind onnxc_type_dim_kind(const onnxc_type *t, size_t i);
/* Sequence and optional: the element type. */
ONNXC_API const onnxc_type *onnxc_type_element(const onnxc_type *t);
/* Map: the key's element type and the value's type. */
ONNXC_API int32_t onnxc_type_map_key(const onnxc_type *t);
ONNXC_API const onnxc_type *onnxc_type_map_value(const onnxc_type *t);
/* Opaque: its domain and name ("" where the model leaves one out); NULL for
 * other kinds. */
ONNXC_API const char *onnxc_type_opaque_domain(const onnxc_type *t);
ONNXC_API const char *onnxc_type_opaque_name(const onnxc_type *t);
/* The type's denotation (TypeProto.denotation: "TENSOR", "IMAGE", ...; see
 * the spec's TypeDenotation.md), or NULL when it has none. */
ONNXC_API const char *onnxc_type_denotation(const onnxc_type *t);
/* Writes "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))",
 * "optional(...)", "sparse_tensor(...)", "opaque(domain,name)", "unknown"
 * into buf (NUL-terminated, truncated to size); returns the length the full
 * text needs. */
ONNXC_API size_t onnxc_type_describe(const onnxc_type *t, char *buf, size_t size);
/* The name of an element type: "float", "int64", "bfloat16", ... ("" for an
 * unknown number). */
ONNXC_API const char *onnxc_dtype_name(int32_t dtype);

/* ---------------------------------------------------------------- model introspection */

/* Inputs are the graph inputs a caller feeds: those without an initializer
 * (an input with an initializer is only a default, see IR.md). Strings are
 * owned by the model; "" where the model leaves a field out. */
ONNXC_API size_t onnxc_model_input_count(const onnxc_model *m);
ONNXC_API const char *onnxc_model_input_name(const onnxc_model *m, size_t i);
ONNXC_API const onnxc_type *onnxc_model_input_type(const onnxc_model *m, size_t i);
ONNXC_API size_t onnxc_model_output_count(const onnxc_model *m);
ONNXC_API const char *onnxc_model_output_name(const onnxc_model *m, size_t i);
ONNXC_API const onnxc_type *onnxc_model_output_type(const onnxc_model *m, size_t i);
ONNXC_API int64_t onnxc_model_ir_version(const onnxc_model *m);
ONNXC_API int64_t onnxc_model_version(const onnxc_model *m);
ONNXC_API const char *onnxc_model_producer_name(const onnxc_model *m);
ONNXC_API const char *onnxc_model_producer_version(const onnxc_model *m);
ONNXC_API const char *onnxc_model_domain(const onnxc_model *m);
ONNXC_API const char *onnxc_model_doc_string(const onnxc_model *m);
ONNXC_API const char *onnxc_model_graph_name(const onnxc_model *m);
/* opset_import: domain ("" is ai.onnx) and version. */
ONNXC_API size_t onnxc_model_opset_count(const onnxc_model *m);
ONNXC_API const char *onnxc_model_opset_domain(const onnxc_model *m, size_t i);
ONNXC_API int64_t onnxc_model_opset_version(const onnxc_model *m, size_t i);
/* metadata_props, in file order. */
ONNXC_API size_t onnxc_model_metadata_count(const onnxc_model *m);
ONNXC_API const char *onnxc_model_metadata_key(const onnxc_model *m, size_t i);
ONNXC_API const char *onnxc_model_metadata_value(const onnxc_model *m, size_t i);
/* ModelProto's optional fields: an ONNX file may leave any of them out, and
 * the accessors above then answer 0 or "" as for a field set to 0 or "".
 * Tools that print a model as stored tell the two apart with this. */
typedef enum onnxc_model_field {
  ONNXC_MODEL_IR_VERSION = 0,
  ONNXC_MODEL_MODEL_VERSION = 1,
  ONNXC_MODEL_PRODUCER_NAME = 2,
  ONNXC_MODEL_PRODUCER_VERSION = 3,
  ONNXC_MODEL_DOMAIN = 4,
  ONNXC_MODEL_DOC_STRING = 5,
  ONNXC_MODEL_GRAPH_NAME = 6, /* the main graph's name */
} onnxc_model_field;
/* non-zero when the model sets the field (to any value, 0 and "" included) */
ONNXC_API int onnxc_model_has_field(const onnxc_model *m, onnxc_model_field field);

/* ---------------------------------------------------------------- graphs and nodes */

/* A model's graphs as stored (all graph inputs, value_info, outputs, nodes,
 * subgraphs), for tools that walk a model. Handles and strings are borrowed
 * from the model; strings are "" where the model leaves a field out. */
typedef struct onnxc_graph onnxc_graph;
typedef struct onnxc_node onnxc_node;

typedef enum onnxc_graph_values {
  ONNXC_GRAPH_INPUTS = 0,     /* every graph input, those with an initializer too */
  ONNXC_GRAPH_VALUE_INFO = 1, /* value_info: types of intermediate values */
  ONNXC_GRAPH_OUTPUTS = 2,
} onnxc_graph_values;

/* The main graph, or NULL when the model has none. */
ONNXC_API const onnxc_graph *onnxc_model_graph(const onnxc_model *m);
ONNXC_API const char *onnxc_graph_name(const onnxc_graph *g);
/* Value i of one list: its name and declared type (NULL: none); NULL when
 * i is past the end. */
ONNXC_API size_t onnxc_graph_value_count(const onnxc_graph *g, onnxc_graph_values which);
ONNXC_API const char *onnxc_graph_value_name(const onnxc_graph *g, onnxc_graph_values which,
                                             size_t i);
ONNXC_API const onnxc_type *onnxc_graph_value_type(const onnxc_graph *g,
                                                   onnxc_graph_values which, size_t i);
/* Nodes in file order. */
ONNXC_API size_t onnxc_graph_node_count(const onnxc_graph *g);
ONNXC_API const onnxc_node *onnxc_graph_node(const onnxc_graph *g, size_t i);
ONNXC_API const char *onnxc_node_name(const onnxc_node *n);
ONNXC_API const char *onnxc_node_op_type(const onnxc_node *n);
/* "" for the default domain (ai.onnx) */
ONNXC_API const char *onnxc_node_domain(const onnxc_node *n);
/* The overload of a call of a model-local function (FunctionProto.overload
 * it names; "" for other nodes). */
ONNXC_API const char *onnxc_node_overload(const onnxc_node *n);
/* The node's inputs and outputs in order: value names, "" for a missing
 * optional one; NULL past the end. */
ONNXC_API size_t onnxc_node_input_count(const onnxc_node *n);
ONNXC_API const char *onnxc_node_input(const onnxc_node *n, size_t i);
ONNXC_API size_t onnxc_node_output_count(const onnxc_node *n);
ONNXC_API const char *onnxc_node_output(const onnxc_node *n, size_t i);

/* A TensorProto as the model stores it: an initializer, the values or
 * indices of a sparse initializer, or a TENSOR attribute's value. Borrowed
 * from the model. */
typedef struct onnxc_tensor_proto onnxc_tensor_proto;

/* AttributeProto.AttributeType */
typedef enum onnxc_attr_type {
  ONNXC_ATTR_UNDEFINED = 0,
  ONNXC_ATTR_FLOAT = 1,
  ONNXC_ATTR_INT = 2,
  ONNXC_ATTR_STRING = 3,
  ONNXC_ATTR_TENSOR = 4,
  ONNXC_ATTR_GRAPH = 5,
  ONNXC_ATTR_FLOATS = 6,
  ONNXC_ATTR_INTS = 7,
  ONNXC_ATTR_STRINGS = 8,
  ONNXC_ATTR_TENSORS = 9,
  ONNXC_ATTR_GRAPHS = 10,
  ONNXC_ATTR_SPARSE_TENSOR = 11,
  ONNXC_ATTR_SPARSE_TENSORS = 12,
  ONNXC_ATTR_TYPE_PROTO = 13,
  ONNXC_ATTR_TYPE_PROTOS = 14,
} onnxc_attr_type;

/* Attribute i: its name, and its graph for a GRAPH attribute (If's
 * branches, Loop's and Scan's bodies; NULL for other kinds). */
ONNXC_API size_t onnxc_node_attr_count(const onnxc_node *n);
ONNXC_API const char *onnxc_node_attr_name(const onnxc_node *n, size_t i);
ONNXC_API const onnxc_graph *onnxc_node_attr_graph(const onnxc_node *n, size_t i);
/* Attribute i's type as the model declares it (UNDEFINED past the end), and
 * how many values it holds: 1 for a single FLOAT, INT, STRING, TENSOR, GRAPH,
 * ..., the list's length for FLOATS, INTS, STRINGS, TENSORS, GRAPHS, ... */
ONNXC_API onnxc_attr_type onnxc_node_attr_type(const onnxc_node *n, size_t i);
ONNXC_API size_t onnxc_node_attr_size(const onnxc_node *n, size_t i);
/* Value j of attribute i: of a FLOAT / INT / STRING / TENSOR attribute with
 * j 0, of a FLOATS / INTS / STRINGS / TENSORS one at j. 0 or NULL when the
 * attribute is of another type or j is past the end. A string is bytes, not
 * NUL-terminated: *len (len must not be NULL) receives their count. */
ONNXC_API float onnxc_node_attr_float(const onnxc_node *n, size_t i, size_t j);
ONNXC_API int64_t onnxc_node_attr_int(const onnxc_node *n, size_t i, size_t j);
ONNXC_API const char *onnxc_node_attr_string(const onnxc_node *n, size_t i, size_t j,
                                             size_t *len);
ONNXC_API const onnxc_tensor_proto *onnxc_node_attr_tensor(const onnxc_node *n, size_t i,
                                                           size_t j);
/* The graphs attribute i holds, for walking every subgraph: a GRAPH
 * attribute's graph, then a GRAPHS attribute's list, whatever the declared
 * type says (a malformed attribute may hold both); NULL past the end. */
ONNXC_API size_t onnxc_node_attr_graph_count(const onnxc_node *n, size_t i);
ONNXC_API const onnxc_graph *onnxc_node_attr_graph_at(const onnxc_node *n, size_t i, size_t j);

/* non-zero when g has an initializer of that name */
ONNXC_API int onnxc_graph_has_initializer(const onnxc_graph *g, const char *name);
/* The initializers of g in file order; NULL past the end. */
ONNXC_API size_t onnxc_graph_initializer_count(const onnxc_graph *g);
ONNXC_API const onnxc_tensor_proto *onnxc_graph_initializer(const onnxc_graph *g, size_t i);
/* The sparse initializers of g: each one's values (named as the
 * initializer), indices and dense dims (*rank receives their count); NULL
 * past the end or where the model leaves a part out. */
ONNXC_API size_t onnxc_graph_sparse_initializer_count(const onnxc_graph *g);
ONNXC_API const onnxc_tensor_proto *onnxc_graph_sparse_values(const onnxc_graph *g, size_t i);
ONNXC_API const onnxc_tensor_proto *onnxc_graph_sparse_indices(const onnxc_graph *g, size_t i);
ONNXC_API const int64_t *onnxc_graph_sparse_dims(const onnxc_graph *g, size_t i, size_t *rank);

/* A stored tensor: its name, element type (TensorProto.DataType), rank and
 * dims (dim i: -1 past the end). */
ONNXC_API const char *onnxc_tensor_proto_name(const onnxc_tensor_proto *t);
ONNXC_API int32_t onnxc_tensor_proto_dtype(const onnxc_tensor_proto *t);
ONNXC_API size_t onnxc_tensor_proto_rank(const onnxc_tensor_proto *t);
ONNXC_API int64_t onnxc_tensor_proto_dim(const onnxc_tensor_proto *t, size_t i);
/* non-zero when its data lie in an external file (data_location EXTERNAL) */
ONNXC_API int onnxc_tensor_proto_is_external(const onnxc_tensor_proto *t);
/* The bytes its data take where they are stored. Inline: raw_data, or the
 * typed fields at their width (4 a float_data or int32_data entry, 8 an
 * int64_data, double_data or uint64_data entry) plus the bytes of every
 * string_data entry. External: the bytes mapped from the external file, or,
 * when the model was loaded without external data, the `length` its
 * external_data entry gives (0 without one). */
ONNXC_API uint64_t onnxc_tensor_proto_stored_bytes(const onnxc_tensor_proto *t);

/* Model-local functions (ModelProto.functions, IR.md "Functions"), called by
 * nodes of their domain and name (and overload). Borrowed from the model;
 * NULL past the end. */
typedef struct onnxc_function onnxc_function;
ONNXC_API size_t onnxc_model_function_count(const onnxc_model *m);
ONNXC_API const onnxc_function *onnxc_model_function(const onnxc_model *m, size_t i);
ONNXC_API const char *onnxc_function_name(const onnxc_function *f);
ONNXC_API const char *onnxc_function_domain(const onnxc_function *f);
ONNXC_API const char *onnxc_function_overload(const onnxc_function *f);
/* formal inputs and outputs: names in order */
ONNXC_API size_t onnxc_function_input_count(const onnxc_function *f);
ONNXC_API const char *onnxc_function_input(const onnxc_function *f, size_t i);
ONNXC_API size_t onnxc_function_output_count(const onnxc_function *f);
ONNXC_API const char *onnxc_function_output(const onnxc_function *f, size_t i);
/* the body's nodes in file order */
ONNXC_API size_t onnxc_function_node_count(const onnxc_function *f);
ONNXC_API const onnxc_node *onnxc_function_node(const onnxc_function *f, size_t i);
/* value_info: names and types the function declares for its values */
ONNXC_API size_t onnxc_function_value_info_count(const onnxc_function *f);
ONNXC_API const char *onnxc_function_value_info_name(const onnxc_function *f, size_t i);
ONNXC_API const onnxc_type *onnxc_function_value_info_type(const onnxc_function *f, size_t i);

/* training_info: how many entries, and entry i's algorithm and
 * initialization graphs (NULL past the end or when the entry has none). */
ONNXC_API size_t onnxc_model_training_info_count(const onnxc_model *m);
ONNXC_API const onnxc_graph *onnxc_model_training_algorithm(const onnxc_model *m, size_t i);
ONNXC_API const onnxc_graph *onnxc_model_training_initialization(const onnxc_model *m, size_t i);
typedef enum onnxc_training_bindings {
  ONNXC_TRAINING_INITIALIZATION_BINDING = 0, /* initializer <- output of the initialization */
  ONNXC_TRAINING_UPDATE_BINDING = 1,         /* initializer <- output of the algorithm */
} onnxc_training_bindings;
/* Binding j of one list of entry i: the key (an initializer's name) and the
 * value (the output assigned to it); NULL past the end. */
ONNXC_API size_t onnxc_model_training_binding_count(const onnxc_model *m, size_t i,
                                                    onnxc_training_bindings which);
ONNXC_API const char *onnxc_model_training_binding_key(const onnxc_model *m, size_t i,
                                                       onnxc_training_bindings which, size_t j);
ONNXC_API const char *onnxc_model_training_binding_value(const onnxc_model *m, size_t i,
                                                         onnxc_training_bindings which,
                                                         size_t j);

/* ---------------------------------------------------------------- operator schemas */

/* The operator schemas the library knows (the spec's Operators.md and
 * Changelog.md for ai.onnx, ai.onnx.ml and ai.onnx.preview.training, the
 * onnxruntime com.microsoft operators, onnxc's own fused ai.onnxc ones): one
 * per operator version. Schemas are static: handles and strings live as long
 * as the program. The domain "" and "ai.onnx" are the same everywhere. */
typedef struct onnxc_schema onnxc_schema;

/* The schema a node of (domain, op_type) binds to in a model importing
 * `opset` of that domain: the version with the highest since_version <=
 * opset; NULL when there is none. */
ONNXC_API const onnxc_schema *onnxc_schema_lookup(const char *domain, const char *op_type,
                                                  int64_t opset);
/* The highest opset of a domain the table knows (0: an unknown domain). */
ONNXC_API int64_t onnxc_schema_latest_opset(const char *domain);
/* Every version of one operator, ascending since_version; NULL past the
 * end. */
ONNXC_API size_t onnxc_schema_version_count(const char *domain, const char *op_type);
ONNXC_API const onnxc_schema *onnxc_schema_version(const char *domain, const char *op_type,
                                                   size_t i);
/* The whole table, by domain, then operator, then version. */
ONNXC_API size_t onnxc_schema_count(void);
ONNXC_API const onnxc_schema *onnxc_schema_at(size_t i);

/* domain ("" for ai.onnx), operator name, the opset version it appeared in */
ONNXC_API const char *onnxc_schema_domain(const onnxc_schema *s);
ONNXC_API const char *onnxc_schema_name(const onnxc_schema *s);
ONNXC_API int onnxc_schema_since_version(const onnxc_schema *s);
/* non-zero for a deprecated version; for an experimental operator ("No
 * versioning maintained for experimental ops") */
ONNXC_API int onnxc_schema_deprecated(const onnxc_schema *s);
ONNXC_API int onnxc_schema_experimental(const onnxc_schema *s);
/* What the operator computes, a paragraph; NULL for the spec's operators
 * (their prose is in the spec's documents, not kept). */
ONNXC_API const char *onnxc_schema_doc(const onnxc_schema *s);

/* Attribute i: name, type, whether a node must set it, and its default in
 * the text syntax ("1", "[1, 1]", "\"NOTSET\""; NULL when it has none);
 * NULL (UNDEFINED) past the end. */
ONNXC_API size_t onnxc_schema_attr_count(const onnxc_schema *s);
ONNXC_API const char *onnxc_schema_attr_name(const onnxc_schema *s, size_t i);
ONNXC_API onnxc_attr_type onnxc_schema_attr_type(const onnxc_schema *s, size_t i);
ONNXC_API int onnxc_schema_attr_required(const onnxc_schema *s, size_t i);
ONNXC_API const char *onnxc_schema_attr_default(const onnxc_schema *s, size_t i);
/* An attribute type in the words of Operators.md: "float", "int", "list of
 * ints", "graph", ... ("undefined" for UNDEFINED or a number outside the
 * enum). */
ONNXC_API const char *onnxc_attr_type_description(onnxc_attr_type type);

typedef enum onnxc_schema_formals {
  ONNXC_SCHEMA_INPUTS = 0,
  ONNXC_SCHEMA_OUTPUTS = 1,
} onnxc_schema_formals;
typedef enum onnxc_formal_option {
  ONNXC_FORMAL_SINGLE = 0,   /* exactly one */
  ONNXC_FORMAL_OPTIONAL = 1, /* zero or one */
  ONNXC_FORMAL_VARIADIC = 2, /* min_arity or more */
} onnxc_formal_option;
/* How many values of one side a node may have, as the spec prints them
 * ("Inputs (2 - 3)"); max is ONNXC_SCHEMA_UNBOUNDED after a variadic. */
#define ONNXC_SCHEMA_UNBOUNDED 2147483647
ONNXC_API int onnxc_schema_min_arity(const onnxc_schema *s, onnxc_schema_formals which);
ONNXC_API int onnxc_schema_max_arity(const onnxc_schema *s, onnxc_schema_formals which);
/* Formal input or output i: its name, its type (a constraint's name such as
 * "T", or a type such as "tensor(int64)"), whether it is single, optional or
 * variadic (then the fewest values it takes, and whether they share one
 * type), and whether it is differentiable; NULL (0) past the end. */
ONNXC_API size_t onnxc_schema_formal_count(const onnxc_schema *s, onnxc_schema_formals which);
ONNXC_API const char *onnxc_schema_formal_name(const onnxc_schema *s, onnxc_schema_formals which,
                                               size_t i);
ONNXC_API const char *onnxc_schema_formal_type(const onnxc_schema *s, onnxc_schema_formals which,
                                               size_t i);
ONNXC_API onnxc_formal_option onnxc_schema_formal_option(const onnxc_schema *s,
                                                         onnxc_schema_formals which, size_t i);
ONNXC_API int onnxc_schema_formal_min_arity(const onnxc_schema *s, onnxc_schema_formals which,
                                            size_t i);
ONNXC_API int onnxc_schema_formal_homogeneous(const onnxc_schema *s, onnxc_schema_formals which,
                                              size_t i);
ONNXC_API int onnxc_schema_formal_differentiable(const onnxc_schema *s,
                                                 onnxc_schema_formals which, size_t i);
/* Type constraint i: its name ("T") and the types it allows
 * ("tensor(float)", "seq(tensor(int64))", ...); NULL past the end. */
ONNXC_API size_t onnxc_schema_constraint_count(const onnxc_schema *s);
ONNXC_API const char *onnxc_schema_constraint_name(const onnxc_schema *s, size_t i);
ONNXC_API size_t onnxc_schema_constraint_type_count(const onnxc_schema *s, size_t i);
ONNXC_API const char *onnxc_schema_constraint_type(const onnxc_schema *s, size_t i, size_t j);

/* Function bodies: an operator defined by a function has one per opset
 * where it changed (ascending); body i is used by models importing that
 * opset up to the next one. The text is a function in the ONNX text syntax
 * (docs/text-format.md); NULL past the end. */
ONNXC_API size_t onnxc_schema_function_count(const onnxc_schema *s);
ONNXC_API int64_t onnxc_schema_function_opset(const onnxc_schema *s, size_t i);
ONNXC_API const char *onnxc_schema_function_text(const onnxc_schema *s, size_t i);
/* Non-zero when the body is context-dependent: built per node from its
 * attributes, the inputs and outputs it has, and its input types. */
ONNXC_API int onnxc_schema_has_context_body(const onnxc_schema *s);
/* Builds that body for a node in a model importing `opset` of the schema's
 * domain, as a function in the text syntax named after the operator (a
 * malloc'd string in *text; free with free()). node NULL: a node with no
 * attributes, n_inputs inputs and every formal output present.
 * input_dtypes[k] is input k's element type (0: unknown or missing).
 * ONNXC_ERR_INVALID_ARG when the schema has no such body at that opset or the
 * body needs a type that is not given, ONNXC_ERR_UNSUPPORTED when its builder
 * is not written, ONNXC_ERR_INVALID_MODEL for a node it cannot expand. */
ONNXC_API onnxc_status onnxc_schema_context_body(const onnxc_schema *s, int64_t opset,
                                                 const onnxc_node *node,
                                                 const int32_t *input_dtypes, size_t n_inputs,
                                                 char **text, onnxc_error *err);
/* Replaces every main-graph node of m whose operator has a context-dependent
 * body by a call of a model-local function holding the body built for that
 * node, so that a session runs the bodies instead of the operators' kernels
 * (to test the bodies). *n_replaced (may be NULL) counts those nodes. */
ONNXC_API onnxc_status onnxc_model_localize_context_bodies(onnxc_model *m, size_t *n_replaced,
                                                           onnxc_error *err);

/* ---------------------------------------------------------------- values */

/* A value is a tensor, a sequence, a map, an optional or a sparse tensor.
 * Values made by the caller or returned by a run are freed with
 * onnxc_value_free; values reached through another value (a sequence
 * item, a map's keys) are borrowed from it. dtype numbers are
 * TensorProto.DataType. Element storage: numeric types in their C layout
 * (float16/bfloat16 as uint16_t, bool as uint8_t 0/1, float8 kinds as
 * uint8_t); 4- and 2-bit types one element per byte (signed ones
 * sign-extended); strings through onnxc_tensor_string. */
typedef struct onnxc_value onnxc_value;

ONNXC_API onnxc_type_kind onnxc_value_kind(const onnxc_value *v);

/* A tensor with zeroed storage it owns. */
ONNXC_API onnxc_value *onnxc_tensor_create(int32_t dtype, const int64_t *dims, size_t rank,
                                           onnxc_error *err);
/* Wraps caller memory (not copied, not freed; it must outlive the value and
 * every run it is given to). Not for strings. */
ONNXC_API onnxc_value *onnxc_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank,
                                         void *data, onnxc_error *err);
/* A string tensor: strs[i] with lens[i] bytes (lens NULL: NUL-terminated),
 * copied. A string may not contain NUL bytes. */
ONNXC_API onnxc_value *onnxc_tensor_create_strings(const int64_t *dims, size_t rank,
                                                   const char *const *strs, const size_t *lens,
                                                   onnxc_error *err);
/* Storage of a numeric tensor (NULL for other values and strings). */
ONNXC_API void *onnxc_tensor_data(onnxc_value *v);
ONNXC_API const void *onnxc_tensor_data_const(const onnxc_value *v);
ONNXC_API int32_t onnxc_tensor_dtype(const onnxc_value *v);
ONNXC_API size_t onnxc_tensor_rank(const onnxc_value *v);
ONNXC_API const int64_t *onnxc_tensor_dims(const onnxc_value *v);
ONNXC_API int64_t onnxc_tensor_numel(const onnxc_value *v);
ONNXC_API size_t onnxc_tensor_nbytes(const onnxc_value *v);
/* Element i of a string tensor (borrowed; *len its length when len is not
 * NULL); NULL when v is not a string tensor or i is out of range. */
ONNXC_API const char *onnxc_tensor_string(const onnxc_value *v, size_t i, size_t *len);

/* A sequence of the given values (each is referenced, not taken: the caller
 * still frees its own). All items must be tensors of one element type, or
 * values of one kind. */
ONNXC_API onnxc_value *onnxc_sequence_create(const onnxc_value *const *items, size_t n,
                                             onnxc_error *err);
ONNXC_API size_t onnxc_sequence_length(const onnxc_value *v);
ONNXC_API const onnxc_value *onnxc_sequence_at(const onnxc_value *v, size_t i);

/* A map from a 1-D tensor of keys (int64, int32, ..., or string) to a 1-D
 * tensor of values of the same length (referenced, not taken). */
ONNXC_API onnxc_value *onnxc_map_create(const onnxc_value *keys, const onnxc_value *values,
                                        onnxc_error *err);
ONNXC_API const onnxc_value *onnxc_map_keys(const onnxc_value *v);
ONNXC_API const onnxc_value *onnxc_map_values(const onnxc_value *v);

/* An optional holding `contained` (referenced, not taken), or an empty
 * optional when contained is NULL. */
ONNXC_API onnxc_value *onnxc_optional_create(const onnxc_value *contained, onnxc_error *err);
ONNXC_API int onnxc_optional_has_value(const onnxc_value *v);
ONNXC_API const onnxc_value *onnxc_optional_value(const onnxc_value *v);

/* Frees a value (NULL is fine). Values are reference counted inside the
 * library: freeing a value that a sequence still holds is safe. */
ONNXC_API void onnxc_value_free(onnxc_value *v);

/* Reads a value from a file as ONNX's test data hold them: a .npy file is a
 * NumPy array (C order); any other file is the protobuf message that the
 * declared type asks for (TensorProto for a tensor or when declared is NULL,
 * SequenceProto, MapProto, OptionalProto of onnx-data.proto). The name
 * inside the message is ignored. */
ONNXC_API onnxc_status onnxc_value_read_file(const char *path, const onnxc_type *declared,
                                             onnxc_value **out, onnxc_error *err);
/* Writes a value as the protobuf message of its kind (a NULL value: an empty
 * OptionalProto) with the given name (may be NULL). */
ONNXC_API onnxc_status onnxc_value_write_file(const char *path, const onnxc_value *v,
                                              const char *name, onnxc_error *err);
/* A one-line summary of a value as malloc'd text (free with free()):
 * "tensor(float)[2,3] = [1, 2, 3, 4, 5, 6]" (the first 10 elements, then
 * "..."), "sequence(N) [...]", "optional(...)", "map keys ...", "none" for
 * NULL; NULL on OOM. */
ONNXC_API char *onnxc_value_summary(const onnxc_value *v);
/* Compares a result with an expected value as ONNX's conformance tests do:
 * the same kind, element type and shape; floating-point elements within
 * atol + rtol * |expected| (NaN equals NaN), other elements exactly; an
 * optional holding a value equals that value. Returns 0 when they match,
 * else non-zero with the first difference described in why (NUL-terminated,
 * truncated to why_size; why may be NULL). */
ONNXC_API int onnxc_value_compare(const onnxc_value *expected, const onnxc_value *actual,
                                  double rtol, double atol, char *why, size_t why_size);

/* ---------------------------------------------------------------- environment, logging */

/* The library's version, "MAJOR.MINOR.PATCH". */
ONNXC_API const char *onnxc_version(void);

/* An environment holds a thread pool that the sessions created with it
 * share (as onnxruntime's global pool); it must outlive them. threads 0:
 * the number of cores. */
typedef struct onnxc_env onnxc_env;
ONNXC_API onnxc_status onnxc_env_create(int threads, onnxc_env **out, onnxc_error *err);
ONNXC_API void onnxc_env_free(onnxc_env *env);

typedef enum onnxc_log_level {
  ONNXC_LOG_VERBOSE = 0, /* every run: its tag and time */
  ONNXC_LOG_INFO = 1,    /* session creation: nodes, folded constants, fused nodes, threads */
  ONNXC_LOG_WARNING = 2, /* e.g. an initializer override that needs a second plan */
  ONNXC_LOG_ERROR = 3,   /* every failed creation or run, with its message */
} onnxc_log_level;

/* A log callback gets messages at or above the session's level. It may be
 * called from any thread that runs the session, concurrently. */
typedef void (*onnxc_log_fn)(void *user, onnxc_log_level level, const char *message);

/* ---------------------------------------------------------------- custom operators */

/* A caller adds operators of its own domains through a registry given to
 * onnxc_session_create (and to onnxc_check / onnxc_infer_shapes through
 * their options, so that those accept the ops): as onnxruntime's custom op
 * domains. A registry must outlive the sessions made with it; it is
 * read-only once sessions use it. */
typedef struct onnxc_op_registry onnxc_op_registry;
/* What a custom kernel sees at preparation (once per node). */
typedef struct onnxc_kernel_info onnxc_kernel_info;
/* What a custom kernel sees when it runs. */
typedef struct onnxc_kernel_context onnxc_kernel_context;
/* What a custom inference callback sees. */
typedef struct onnxc_infer_context onnxc_infer_context;

typedef struct onnxc_custom_op {
  const char *domain;  /* e.g. "com.example" (not "" or "ai.onnx": those are the standard's) */
  const char *op_type; /* e.g. "Scale" */
  int64_t since_version_min, since_version_max; /* opsets of `domain` it serves (max 0: no limit) */
  int min_inputs, max_inputs; /* arity checked at session creation (max -1: any) */
  int min_outputs, max_outputs;
  /* Optional. Once per node at session creation: read attributes, check
   * them, make a state (released by `release`). A state must be read-only
   * in `run`: runs of one session may be concurrent. */
  onnxc_status (*prepare)(void *user, const onnxc_kernel_info *info, void **state,
                          onnxc_error *err);
  /* Required. Reads inputs, makes outputs through the context. A status
   * other than ONNXC_OK fails the run with the message given to
   * onnxc_kernel_fail (or a generic one). */
  onnxc_status (*run)(void *user, onnxc_kernel_context *ctx, void *state);
  void (*release)(void *user, void *state); /* optional */
  /* Optional: output types from input types for the checker, shape
   * inference and the session (onnxc_infer_set_output). Without it the
   * outputs' types are unknown to inference. */
  onnxc_status (*infer)(void *user, onnxc_infer_context *ctx);
  void *user; /* passed to every callback */
} onnxc_custom_op;

ONNXC_API onnxc_status onnxc_op_registry_create(onnxc_op_registry **out, onnxc_error *err);
ONNXC_API void onnxc_op_registry_free(onnxc_op_registry *r);
/* Copies *op (the strings too). Fails on a missing run, a standard domain,
 * or an overlap with an op already added. */
ONNXC_API onnxc_status onnxc_op_registry_add(onnxc_op_registry *r, const onnxc_custom_op *op,
                                             onnxc_error *err);

/* At preparation: the node's attributes (default when absent or of another
 * type), its name, its input/output counts, and a constant input (an
 * initializer) or NULL. */
ONNXC_API int64_t onnxc_kernel_attr_int(const onnxc_kernel_info *info, const char *name,
                                        int64_t dflt);
ONNXC_API float onnxc_kernel_attr_float(const onnxc_kernel_info *info, const char *name,
                                        float dflt);
ONNXC_API const char *onnxc_kernel_attr_string(const onnxc_kernel_info *info, const char *name,
                                               const char *dflt);
ONNXC_API const char *onnxc_kernel_node_name(const onnxc_kernel_info *info);
ONNXC_API size_t onnxc_kernel_info_input_count(const onnxc_kernel_info *info);
ONNXC_API size_t onnxc_kernel_info_output_count(const onnxc_kernel_info *info);
ONNXC_API const onnxc_value *onnxc_kernel_info_constant_input(const onnxc_kernel_info *info,
                                                              size_t i);

/* In run: inputs (NULL for a missing optional one), outputs made by the
 * runtime (NULL with the run's error set on a bad shape or OOM), and
 * failure with a message (prefixed with the node's name). */
ONNXC_API size_t onnxc_kernel_input_count(const onnxc_kernel_context *ctx);
ONNXC_API const onnxc_value *onnxc_kernel_input(const onnxc_kernel_context *ctx, size_t i);
ONNXC_API size_t onnxc_kernel_output_count(const onnxc_kernel_context *ctx);
ONNXC_API onnxc_value *onnxc_kernel_output(onnxc_kernel_context *ctx, size_t i, int32_t dtype,
                                           const int64_t *dims, size_t rank);
ONNXC_API onnxc_status onnxc_kernel_fail(onnxc_kernel_context *ctx, const char *message);

/* In infer: the node, its inputs' types (NULL when unknown), and the
 * outputs' types to set: a tensor of elem_type with the given dims (dims
 * -1: unknown; rank -1: unknown shape). */
ONNXC_API const char *onnxc_infer_node_name(const onnxc_infer_context *ctx);
ONNXC_API int64_t onnxc_infer_attr_int(const onnxc_infer_context *ctx, const char *name,
                                       int64_t dflt);
ONNXC_API size_t onnxc_infer_input_count(const onnxc_infer_context *ctx);
ONNXC_API const onnxc_type *onnxc_infer_input_type(const onnxc_infer_context *ctx, size_t i);
ONNXC_API onnxc_status onnxc_infer_set_output(onnxc_infer_context *ctx, size_t i, int32_t elem_type,
                                              const int64_t *dims, int64_t rank);
ONNXC_API onnxc_status onnxc_infer_fail(onnxc_infer_context *ctx, const char *message);

/* ---------------------------------------------------------------- sessions */

typedef struct onnxc_session onnxc_session;

typedef struct onnxc_session_options {
  int threads;            /* 0: one per physical core the process may use (its affinity mask,
                             SMT siblings counted once, capped by its cgroup's CPU quota);
                             ignored with env */
  int optimization_level; /* 0 none; 1 and up: nodes whose inputs are all constants are
                             computed once at creation and constant weights are packed
                             once. Graph inputs that have an initializer count as
                             constants while no run overrides them; the first run that
                             does prepares a second plan without that assumption. */
  /* Called between nodes and loop iterations of every run; non-zero return
   * cancels. May be called from several threads at once. */
  int (*cancel)(void *user);
  void *cancel_user;
  int profile;                         /* non-zero: time every node (see onnxc_session_profile) */
  onnxc_env *env;                      /* non-NULL: use the environment's shared pool */
  const onnxc_op_registry *custom_ops; /* operators of the caller's domains, or NULL */
  onnxc_log_fn log;                    /* NULL: no logging */
  void *log_user;
  onnxc_log_level log_level;
  /* The most tensor storage one run may hold at a time, in bytes (0: no limit); session
     creation, which computes constant nodes, gets the same limit. A model that asks for
     more (a huge shape, a Loop growing a sequence without end) fails with
     ONNXC_ERR_NOMEM and a message naming the node and the limit. */
  size_t max_memory;
  /* Non-zero: keep quantized units (DequantizeLinear -> op -> QuantizeLinear) as
     the float arithmetic the model writes, instead of integer kernels; for
     comparing the two. */
  int no_quant_fusion;
  /* Non-zero: one- and two-row products by weight-only quantized matrices
     (DequantizeLinear of constant 8-, 4- or 2-bit weights feeding MatMul:
     token-by-token decode) quantize the activations to int8 per block of the
     weights' scales and sum in integers (AVX512-VNNI), as onnxruntime does by
     default: several times less arithmetic per weight, so that decode reads the
     weights at memory speed, at an error of up to 1/254 of each block's largest
     activation. 0 (default): float arithmetic, within float rounding of what the
     model writes. Without VNNI the float form runs either way. */
  int low_bit_int8;
  /* Graph passes to leave out, by name (onnxc_pass_name; as onnxruntime's
     disabled_optimizers). An unknown name is ONNXC_ERR_INVALID_ARG. */
  const char *const *disabled_passes;
  size_t n_disabled_passes;
  /* How long a worker thread that ran out of work watches for the next
     parallel loop before it sleeps, in microseconds (0: the default, 200;
     negative: sleep at once). Watching saves a wake-up (tens of
     microseconds) between the hundreds of loops of a run; once it is over
     an idle session's threads use no CPU. */
  int thread_spin_us;
  /* Non-zero: each worker thread runs on one core only (physical cores
     first, the calling thread left free to move); for servers that give a
     session a set of cores. */
  int pin_threads;
  /* Non-zero: nodes that do not depend on each other (the branches of an
     inception block, the heads of a detector) run side by side, one thread
     each, as onnxruntime's parallel execution mode; a node alone at its
     step still runs over all threads. Pays where branches are each too
     small to split over the threads; buffers live a little longer. Ignored
     with one thread and with max_memory. Default 0: node by node. */
  int parallel_branches;
} onnxc_session_options;

/* Prepares a model for running. The model must outlive the session: its
 * weights and graph are used in place, not copied. opts may be NULL.
 *
 * Concurrency: onnxc_session_run and onnxc_session_run_with may be called on
 * one session from any number of threads at once; each call has its own
 * buffers and the prepared session is only read. Creating and freeing a
 * session, and freeing it while a run is in flight, are not concurrent
 * operations: free it after every run returned. */
ONNXC_API onnxc_status onnxc_session_create(const onnxc_model *m, const onnxc_session_options *opts,
                                            onnxc_session **out, onnxc_error *err);
ONNXC_API void onnxc_session_free(onnxc_session *s);

/* For a session created with `profile`: the time per operator type and of
 * the slowest nodes, per run, as text (free with free()); NULL on OOM. */
ONNXC_API char *onnxc_session_profile(const onnxc_session *s);
/* Forgets the times profiled so far: call it after warm-up runs (the first
 * run also prepares kernels lazily, e.g. a convolution's Winograd
 * weights) so that the profile covers the runs that follow. */
ONNXC_API void onnxc_session_profile_reset(onnxc_session *s);
/* onnxc_session_profile listing the top_nodes slowest nodes (that one lists
 * 20). */
ONNXC_API char *onnxc_session_profile_top(const onnxc_session *s, size_t top_nodes);
/* The threads a run of the session uses when its options do not ask for
 * others, the calling thread included (the `threads` option resolved: the
 * cores, or the environment's pool). */
ONNXC_API int onnxc_session_threads(const onnxc_session *s);

/* The model the session runs. */
ONNXC_API const onnxc_model *onnxc_session_model(const onnxc_session *s);
/* Inputs a caller feeds (graph inputs without an initializer) and outputs,
 * with their declared types (see onnxc_model_input_type). */
ONNXC_API size_t onnxc_session_input_count(const onnxc_session *s);
ONNXC_API size_t onnxc_session_output_count(const onnxc_session *s);
ONNXC_API const char *onnxc_session_input_name(const onnxc_session *s, size_t i);
ONNXC_API const char *onnxc_session_output_name(const onnxc_session *s, size_t i);
ONNXC_API const onnxc_type *onnxc_session_input_type(const onnxc_session *s, size_t i);
ONNXC_API const onnxc_type *onnxc_session_output_type(const onnxc_session *s, size_t i);
/* Every graph input of the model in order, those with an initializer
 * included (a run may override such a default by naming it): the count,
 * the name, the declared type, and non-zero when the input has an
 * initializer. Neither listing shows the optional inputs graph passes add
 * (the kv_cache pass's "<past>.onnxc_cache", fed by the generation loop). */
ONNXC_API size_t onnxc_session_graph_input_count(const onnxc_session *s);
ONNXC_API const char *onnxc_session_graph_input_name(const onnxc_session *s, size_t i);
ONNXC_API const onnxc_type *onnxc_session_graph_input_type(const onnxc_session *s, size_t i);
ONNXC_API int onnxc_session_graph_input_has_default(const onnxc_session *s, size_t i);

/* Runs the model. inputs are bound by name (input_names NULL: to the inputs
 * in order); outputs[k] receives a new value for output_names[k] (all graph
 * outputs, in order, when output_names is NULL and n_outputs equals the
 * output count). An optional output without a value comes back as an empty
 * optional or NULL. Inputs are checked against the declared types (element
 * type, rank, fixed dims): a mismatch is ONNXC_ERR_INVALID_ARG naming the
 * input. Safe to call from several threads on one session. */
ONNXC_API onnxc_status onnxc_session_run(onnxc_session *s, const char *const *input_names,
                                         onnxc_value *const *inputs, size_t n_inputs,
                                         const char *const *output_names, onnxc_value **outputs,
                                         size_t n_outputs, onnxc_error *err);

/* Options of one run. */
typedef struct onnxc_run_options {
  int threads; /* 0: the session's pool; 1: only the calling thread; n > 1: a pool of n
                  threads the session keeps for runs that ask for n */
  /* another thread may set *terminate to non-zero: the run stops between nodes and
     loop iterations with ONNXC_ERR_CANCELLED */
  const volatile int *terminate;
  int (*cancel)(void *user); /* polled as the session's; non-zero cancels this run */
  void *cancel_user;
  const char *tag; /* names the run in its error messages and log lines */
  /* NULL, or per requested output a tensor the caller made (onnxc_tensor_create or
     onnxc_tensor_wrap) or NULL: when the kernel that makes that output makes it with the
     tensor's element type and shape, it writes it there, and outputs[k] is then a new
     reference to that tensor (else a value of its own, as without the option; compare
     onnxc_tensor_data). The tensor may be one of the inputs where the operator making the
     output updates that input in place (a com.microsoft GroupQueryAttention's present_key
     / present_value over its past_key / past_value: the new rows are appended to the KV
     cache, nothing else is touched); any other operator's output over one of its inputs
     or a graph input is made apart (the input read whole) and not placed. After a failed
     run its contents are unspecified. */
  onnxc_value *const *output_buffers;
} onnxc_run_options;

/* onnxc_session_run with options (ro may be NULL). */
ONNXC_API onnxc_status onnxc_session_run_with(onnxc_session *s, const onnxc_run_options *ro,
                                              const char *const *input_names,
                                              onnxc_value *const *inputs, size_t n_inputs,
                                              const char *const *output_names,
                                              onnxc_value **outputs, size_t n_outputs,
                                              onnxc_error *err);

/* Runs and writes each requested output into outputs[k], a tensor the
 * caller made (onnxc_tensor_create or onnxc_tensor_wrap over its own
 * buffer) with the output's element type and shape: a mismatch is
 * ONNXC_ERR_INVALID_ARG naming the output. The kernels that make an output
 * write it there directly (ro->output_buffers is taken to be outputs);
 * others' results are copied in. output_names as in onnxc_session_run. ro
 * may be NULL. */
ONNXC_API onnxc_status onnxc_session_run_into(onnxc_session *s, const onnxc_run_options *ro,
                                              const char *const *input_names,
                                              onnxc_value *const *inputs, size_t n_inputs,
                                              const char *const *output_names,
                                              onnxc_value *const *outputs, size_t n_outputs,
                                              onnxc_error *err);

/* ---------------------------------------------------------------- generation */

/* A token-by-token generation loop over a session of a decoder-only
 * language model: the prompt's ids in, new token ids out (tokenizers stay
 * outside). Batch size 1. The layout is read from the session's inputs and
 * outputs:
 *   - no cache: input_ids [batch, sequence] -> logits [batch, sequence,
 *     vocab]; each step runs the whole sequence (its axis must be dynamic);
 *   - decoder-with-past (Hugging Face Optimum): past_key_values.N.key/value
 *     in [batch, heads, past, head_size], present.N.key/value out, optional
 *     attention_mask [batch, total] and position_ids [batch, sequence]; the
 *     past has length 0 on the first step and each step's present is the
 *     next step's past. Where the graph allows (a float32 cache, each
 *     present made by Concat(past, new, axis 2) and read only by an
 *     attention that onnxc fuses, by Shape nodes and as the output; a
 *     session made at optimization_level 1 or more with the kv_cache pass
 *     on), each cache input is one buffer of the prompt plus
 *     max_new_tokens positions, allocated once, to which each step
 *     appends its new keys and values in place (no copy of the cache per
 *     token): the session's kv_cache pass gave its graph an optional input
 *     for that buffer, which the generator feeds (the session does not
 *     list it; runs that leave it out compute what the model says). Otherwise two
 *     buffers per cache input are allocated once: the past is a view of
 *     one, the present is made in the other (the graph's Concat writes it
 *     there: onnxc_run_options.output_buffers), and they swap; the Concat
 *     then copies the past into the present each step.
 *     onnxc_generate_cache_path says which. Optimum's merged decoder's
 *     use_cache_branch (bool [1]) is fed false on the first step and true
 *     after;
 *   - onnxruntime-genai: as above, but past and present have the sequence
 *     length of the buffer, max_length (the model has GroupQueryAttention
 *     nodes, or genai_config.json says past_present_share_buffer): the
 *     buffers are allocated once, zeroed, the present is made in the past's
 *     own buffer, and the model writes each step's keys and values at their
 *     positions (the past is not copied); attention_mask [batch, total]
 *     tells it how many are valid.
 * genai_config.json, when config_dir holds one, gives the names (model.
 * decoder.inputs / outputs, past_key_names with %d), model.eos_token_id,
 * model.context_length, search.max_length and the key/value heads and head
 * size where the model's dims are symbolic. Errors name what is missing
 * ("input 'past_key_values.3.value' not found"). */
typedef struct onnxc_generator onnxc_generator;

typedef struct onnxc_generate_options {
  /* the most new tokens (0: up to the context length, which must then be
     known); the prompt plus max_new_tokens beyond a known context length is
     ONNXC_ERR_INVALID_ARG */
  int64_t max_new_tokens;
  int do_sample; /* 0: greedy (the lowest index among equal largest logits) */
  /* Sampling: the logits are divided by temperature (0: 1), cut to the
     top_k likeliest (0: no cut), then to the likeliest whose probabilities
     reach top_p (0 or 1: no cut), and a token drawn from what remains with
     splitmix64 seeded by seed: the same seed gives the same tokens from the
     same logits, at any thread count of the caller. */
  int top_k;
  float top_p;
  float temperature;
  uint64_t seed;
  /* tokens that end generation (the EOS is returned as the last token);
     eos_ids NULL: genai_config.json's eos_token_id, none without it */
  const int64_t *eos_ids;
  size_t n_eos;
  int64_t context_length; /* 0: genai_config.json's (search.max_length, model.context_length) */
  const char *config_dir; /* folder to read genai_config.json from, if there (NULL: none) */
  int threads;            /* per run, as onnxc_run_options.threads (0: the session's) */
} onnxc_generate_options;

/* Timings of a generation, in milliseconds: from the start to the first
 * new token (the prompt's run), and from the first to the last (the
 * decode: new_tokens - 1 steps). cache_copied_bytes: the cache the loop
 * had to copy because a kernel made a present outside the loop's buffer
 * (0 when every present was made in place). */
typedef struct onnxc_generate_stats {
  double first_token_ms;
  double decode_ms;
  size_t prompt_tokens, new_tokens;
  uint64_t cache_copied_bytes;
} onnxc_generate_stats;

/* Starts a generation: detects the layout, allocates the cache and checks
 * the prompt (non-empty; ids within the vocabulary when the logits' last
 * dim is fixed, else after the first run). Nothing runs until
 * onnxc_generate_next. The session must outlive the generator; several
 * generators may run on one session at once. opts may be NULL (greedy,
 * max_new_tokens from the context). */
ONNXC_API onnxc_status onnxc_generate_start(onnxc_session *s, const int64_t *ids, size_t n_ids,
                                            const onnxc_generate_options *opts,
                                            onnxc_generator **out, onnxc_error *err);
/* One step: runs the model and picks the next token into *token; *done
 * becomes non-zero, with no token, once an EOS, max_new_tokens or the
 * context length ended the generation. */
ONNXC_API onnxc_status onnxc_generate_next(onnxc_generator *g, int64_t *token, int *done,
                                           onnxc_error *err);
/* "no-cache", "decoder-with-past" or "genai-shared-buffer" */
ONNXC_API const char *onnxc_generate_layout(const onnxc_generator *g);
/* How the KV cache is kept: "none" (no cache), "in place" (appended to
 * buffers of fixed length), or, for decoder-with-past whose graph does not
 * allow that, "copied each step (REASON)", REASON naming what did not match
 * (ONNXC_GENERATE_KV=copy in the environment asks for this path). Valid
 * while g lives. */
ONNXC_API const char *onnxc_generate_cache_path(const onnxc_generator *g);
ONNXC_API void onnxc_generate_get_stats(const onnxc_generator *g, onnxc_generate_stats *out);
ONNXC_API void onnxc_generate_free(onnxc_generator *g);
/* The whole loop: *out receives the new ids (malloc'd, free with free())
 * and *n_out their count; stats may be NULL. */
ONNXC_API onnxc_status onnxc_generate(onnxc_session *s, const int64_t *ids, size_t n_ids,
                                      const onnxc_generate_options *opts, int64_t **out,
                                      size_t *n_out, onnxc_generate_stats *stats, onnxc_error *err);

/* ---------------------------------------------------------------- graph passes */

/* The graph passes a session runs at optimization_level >= their level, in
 * the order they run (src/opt/: one rewrite per pass). Each can be switched
 * off by name (onnxc_session_options.disabled_passes). */
ONNXC_API size_t onnxc_pass_count(void);
/* NULL when i >= onnxc_pass_count() */
ONNXC_API const char *onnxc_pass_name(size_t i);
ONNXC_API const char *onnxc_pass_description(size_t i);
/* the lowest optimization_level at which the pass runs */
ONNXC_API int onnxc_pass_level(size_t i);
/* non-zero when the pass runs unless disabled (zero: only when asked for) */
ONNXC_API int onnxc_pass_default_on(size_t i);

/* Options of onnxc_model_optimize. */
typedef struct onnxc_optimize_options {
  int optimization_level; /* 0 is taken as 1 */
  const char *const *disabled_passes;
  size_t n_disabled_passes;
  int no_quant_fusion; /* as in onnxc_session_options */
  int low_bit_int8;    /* as in onnxc_session_options */
} onnxc_optimize_options;

/* The graph a session would run, as a model: the passes' rewrites (fused
 * ai.onnxc operators, with the ai.onnxc opset imported; folded Conv weights
 * as new initializers). Nodes whose inputs are all constants stay nodes: the
 * session that loads the result folds them (the constant_folding pass).
 * The result checks with onnxc_check and loads anywhere onnxc runs.
 * *out is a new model (free with onnxc_model_free); m is not changed.
 * opts may be NULL. */
ONNXC_API onnxc_status onnxc_model_optimize(const onnxc_model *m, const onnxc_optimize_options *opts,
                                            onnxc_model **out, onnxc_error *err);

/* ---------------------------------------------------------------- compile */

/* `onnxc compile`: the model as dependency-free C99 source (docs/compile.md).
 * The generated .c file needs only <stdint.h>, <stddef.h>, <string.h> and
 * <math.h>, allocates nothing (intermediates in one static arena planned by
 * lifetimes) and holds the weights as exact static const arrays. Its entry
 * is `int PREFIX_run(const T *in_<input>..., T *out_<output>...)`: one typed
 * pointer per graph input, then one per graph output, described in the
 * header's comment; `PREFIX_run_with_arena(void *arena, ...)` is the same on
 * the caller's PREFIX_arena_size() bytes. Shapes must be static: fixed in
 * the model or bound here. */
typedef enum onnxc_compile_target {
  ONNXC_COMPILE_PORTABLE = 0, /* plain C99 */
  ONNXC_COMPILE_AVX2 = 1,     /* x86-64 AVX2+FMA: the node functions carry the target */
  ONNXC_COMPILE_AVX512 = 2,   /* x86-64 AVX-512F */
  ONNXC_COMPILE_CORTEX_M = 3  /* single precision only: float64 values are declined */
} onnxc_compile_target;

typedef struct onnxc_compile_options {
  const char *prefix;      /* C prefix of the public names; NULL: "model" */
  const char *header_name; /* what the .c file #includes; NULL: "<prefix>.h" */
  const char *source_name; /* the model's name for the comments; may be NULL */
  /* dims for symbolic graph input dims, as in onnxc_infer_options */
  size_t n_bindings;
  const char *const *binding_names;
  const int64_t *const *binding_dims;
  const size_t *binding_ranks;
  int with_main; /* 1: also write a main() file that runs the model on files */
  /* 1: constants of at least weights_min bytes (0: 1024) go into a binary
   * blob (out->weights) that the program hands to PREFIX_set_weights() */
  int weights_blob;
  size_t weights_min;
  const char *weights_name; /* the blob's path the main() file reads by default */
  int caller_arena;         /* 1: no static arena and no PREFIX_run(), only _run_with_arena */
  int target;               /* onnxc_compile_target */
  /* 1: no double-precision arithmetic in the generated code (for an FPU
   * that is single-precision only): float64 values are refused, and a node
   * whose generated code would use a double (type, literal or libm double
   * function) is an error naming it (docs/compile.md, "--float-only") */
  int float_only;
} onnxc_compile_options;

/* The texts of onnxc_compile (NUL-terminated, malloc'd; free with
 * onnxc_compile_output_free) and their sizes. */
typedef struct onnxc_compile_output {
  char *source;      /* PREFIX.c */
  char *header;      /* PREFIX.h */
  char *main_source; /* PREFIX_main.c, or NULL without with_main */
  size_t arena_bytes, const_bytes, n_functions;
  unsigned char *weights; /* the weights blob, or NULL (none asked, or no constant big enough) */
  size_t weights_bytes;
  size_t arena_bytes_no_inplace; /* the arena without in-place element-wise nodes */
} onnxc_compile_output;

/* Infers shapes in place (m gets value_info, as with onnxc_infer_shapes),
 * then writes the C texts. An operator, element type or dim that cannot be
 * compiled is ONNXC_ERR_UNSUPPORTED with a message naming the node or graph
 * input and the reason. opts may be NULL. */
ONNXC_API onnxc_status onnxc_compile(onnxc_model *m, const onnxc_compile_options *opts,
                                     onnxc_compile_output *out, onnxc_error *err);
ONNXC_API void onnxc_compile_output_free(onnxc_compile_output *out);
/* The operators onnxc_compile has a generator for: those of the ai.onnx
 * domain by name, the others as DOMAIN:Op ("ai.onnx.ml:TreeEnsemble"); NULL
 * when i is past the end. Some are compiled for only some element types or
 * attribute values: the error of onnxc_compile says which. */
ONNXC_API const char *onnxc_compile_op_name(size_t i);

/* ---------------------------------------------------------------- train */

/* Training (TrainingInfoProto, IR.md "Training Related Information"). The
 * state variables are the initializers named as keys of the bindings; a
 * training context holds their current values, starting from the
 * initializers. The model must outlive the context. */
typedef struct onnxc_training onnxc_training;

/* Checks the binding rules and creates a context. opts may be NULL. */
ONNXC_API onnxc_status onnxc_training_create(const onnxc_model *m,
                                             const onnxc_session_options *opts,
                                             onnxc_training **out, onnxc_error *err);
ONNXC_API void onnxc_training_free(onnxc_training *t);
/* The state variables (initializer names bound by the training info), in the
 * context's order; NULL past the end. */
ONNXC_API size_t onnxc_training_state_count(const onnxc_training *t);
ONNXC_API const char *onnxc_training_state_name(const onnxc_training *t, size_t i);
/* Initialization step: runs every `initialization` graph, in order, and
 * assigns its outputs by `initialization_binding`. */
ONNXC_API onnxc_status onnxc_training_init(onnxc_training *t, onnxc_error *err);
/* One training step with training_info[algorithm]: runs the inference graph
 * combined with the algorithm graph on the inputs (bound by name), assigns the
 * state by `update_binding`, and returns outputs[k] for output_names[k] (an
 * output of either graph; may be none). */
ONNXC_API onnxc_status onnxc_training_step(onnxc_training *t, size_t algorithm,
                                           const char *const *input_names,
                                           onnxc_value *const *inputs, size_t n_inputs,
                                           const char *const *output_names, onnxc_value **outputs,
                                           size_t n_outputs, onnxc_error *err);
/* Writes the current state into the initializers of m (a model with the
 * training model's structure, typically the same one), e.g. before
 * onnxc_model_save. */
ONNXC_API onnxc_status onnxc_model_update_initializers(onnxc_model *m, const onnxc_training *t,
                                                       onnxc_error *err);

#ifdef __cplusplus
}
#endif
#endif
