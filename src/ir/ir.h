/* ir.h - the model in memory.
 *
 * One C struct per message of onnx.proto (IR 14) and onnx-data.proto, with
 * every field. Conventions, used by the codec, the printer, the parser, the
 * checker, inference and the runtime alike:
 *
 *  - Strings are NUL-terminated `char *` in the model's arena; NULL means the
 *    field is absent, "" means present and empty. (A string field that holds a
 *    NUL byte is rejected by the decoder.)
 *  - `bytes` fields are ox_bytes (data == NULL: absent). raw_data and the
 *    payload of external data point into the file mapping, never copied.
 *  - Optional scalars have a `has_<field>` flag, so that a round trip keeps
 *    "present with value 0" apart from "absent".
 *  - Repeated fields are `T *x; size_t n_x;` (arrays of structs, built with
 *    OX_VEC_PUSH in the model's arena).
 *  - Optional sub-messages are pointers (NULL: absent).
 *  - `unknown` holds the bytes of fields this version does not know, in the
 *    order read, and is written back after the known fields.
 *  - All memory of a model belongs to its ox_model's arena (and mappings).
 */
#ifndef OX_IR_H
#define OX_IR_H

#include "../base/base.h"

/* TensorProto.DataType */
typedef enum ox_dtype {
  OX_UNDEFINED = 0,
  OX_FLOAT = 1,
  OX_UINT8 = 2,
  OX_INT8 = 3,
  OX_UINT16 = 4,
  OX_INT16 = 5,
  OX_INT32 = 6,
  OX_INT64 = 7,
  OX_STRING = 8,
  OX_BOOL = 9,
  OX_FLOAT16 = 10,
  OX_DOUBLE = 11,
  OX_UINT32 = 12,
  OX_UINT64 = 13,
  OX_COMPLEX64 = 14,
  OX_COMPLEX128 = 15,
  OX_BFLOAT16 = 16,
  OX_FLOAT8E4M3FN = 17,
  OX_FLOAT8E4M3FNUZ = 18,
  OX_FLOAT8E5M2 = 19,
  OX_FLOAT8E5M2FNUZ = 20,
  OX_UINT4 = 21,
  OX_INT4 = 22,
  OX_FLOAT4E2M1 = 23,
  OX_FLOAT8E8M0 = 24,
  OX_UINT2 = 25,
  OX_INT2 = 26,
  OX_DTYPE_COUNT = 27
} ox_dtype;

/* AttributeProto.AttributeType */
typedef enum ox_attr_type {
  OX_ATTR_UNDEFINED = 0,
  OX_ATTR_FLOAT = 1,
  OX_ATTR_INT = 2,
  OX_ATTR_STRING = 3,
  OX_ATTR_TENSOR = 4,
  OX_ATTR_GRAPH = 5,
  OX_ATTR_FLOATS = 6,
  OX_ATTR_INTS = 7,
  OX_ATTR_STRINGS = 8,
  OX_ATTR_TENSORS = 9,
  OX_ATTR_GRAPHS = 10,
  OX_ATTR_SPARSE_TENSOR = 11,
  OX_ATTR_SPARSE_TENSORS = 12,
  OX_ATTR_TYPE_PROTO = 13,
  OX_ATTR_TYPE_PROTOS = 14,
} ox_attr_type;

/* Which field of TypeProto's oneof is set (the values are the field numbers). */
typedef enum ox_type_kind {
  OX_TYPE_NONE = 0,
  OX_TYPE_TENSOR = 1,
  OX_TYPE_SEQUENCE = 4,
  OX_TYPE_MAP = 5,
  OX_TYPE_OPAQUE = 7,
  OX_TYPE_SPARSE_TENSOR = 8,
  OX_TYPE_OPTIONAL = 9,
} ox_type_kind;

typedef struct ox_graph ox_graph;
typedef struct ox_type ox_type;
typedef struct ox_sequence_data ox_sequence_data;
typedef struct ox_map_data ox_map_data;
typedef struct ox_optional_data ox_optional_data;

/* StringStringEntryProto */
typedef struct ox_str_pair {
  char *key, *value;
  ox_bytes unknown;
} ox_str_pair;

/* OperatorSetIdProto */
typedef struct ox_opset {
  char *domain;
  int64_t version;
  bool has_version;
  ox_bytes unknown;
} ox_opset;

/* TensorProto.Segment */
typedef struct ox_segment {
  int64_t begin, end;
  bool has_begin, has_end;
  ox_bytes unknown;
} ox_segment;

/* TensorProto */
typedef struct ox_tensor {
  int64_t *dims;
  size_t n_dims;
  int32_t data_type;
  bool has_data_type;
  ox_segment *segment;
  float *float_data;
  size_t n_float_data;
  int32_t *int32_data;
  size_t n_int32_data;
  ox_bytes *string_data;
  size_t n_string_data;
  int64_t *int64_data;
  size_t n_int64_data;
  char *name;
  char *doc_string;
  ox_bytes raw_data;
  ox_str_pair *external_data;
  size_t n_external_data;
  int32_t data_location; /* 0 DEFAULT, 1 EXTERNAL */
  bool has_data_location;
  double *double_data;
  size_t n_double_data;
  uint64_t *uint64_data;
  size_t n_uint64_data;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_bytes unknown;
  /* Not serialized: for data_location == EXTERNAL, the loader resolves the
   * bytes (mapped from the external file, not read) here. */
  ox_bytes external;
} ox_tensor;

/* SparseTensorProto */
typedef struct ox_sparse_tensor {
  ox_tensor *values;
  ox_tensor *indices;
  int64_t *dims;
  size_t n_dims;
  ox_bytes unknown;
} ox_sparse_tensor;

/* TensorShapeProto.Dimension. Exactly one of has_value / param, or neither
 * (unknown dim). */
typedef struct ox_dim {
  int64_t value;
  bool has_value;
  char *param;
  char *denotation;
  ox_bytes unknown;
} ox_dim;

/* TensorShapeProto */
typedef struct ox_shape {
  ox_dim *dim;
  size_t n_dim;
  ox_bytes unknown;
} ox_shape;

/* TypeProto, with its oneof flattened:
 *  tensor, sparse_tensor: elem_type (+has), shape (NULL: unknown rank)
 *  sequence, optional:    elem (NULL: absent)
 *  map:                   elem_type is the key type, elem the value type
 *  opaque:                opaque_domain, opaque_name
 * `inner_unknown` keeps unknown fields of the inner message. */
struct ox_type {
  ox_type_kind kind;
  int32_t elem_type;
  bool has_elem_type;
  ox_shape *shape;
  ox_type *elem;
  char *opaque_domain, *opaque_name;
  char *denotation;
  ox_bytes inner_unknown;
  ox_bytes unknown;
};

/* ValueInfoProto */
typedef struct ox_value_info {
  char *name;
  ox_type *type;
  char *doc_string;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_bytes unknown;
} ox_value_info;

/* AttributeProto */
typedef struct ox_attr {
  char *name;
  char *ref_attr_name;
  char *doc_string;
  int32_t type; /* ox_attr_type */
  bool has_type;
  float f;
  bool has_f;
  int64_t i;
  bool has_i;
  ox_bytes s;
  ox_tensor *t;
  ox_graph *g;
  ox_sparse_tensor *sparse_tensor;
  ox_type *tp;
  float *floats;
  size_t n_floats;
  int64_t *ints;
  size_t n_ints;
  ox_bytes *strings;
  size_t n_strings;
  ox_tensor *tensors;
  size_t n_tensors;
  ox_graph *graphs;
  size_t n_graphs;
  ox_sparse_tensor *sparse_tensors;
  size_t n_sparse_tensors;
  ox_type *type_protos;
  size_t n_type_protos;
  ox_bytes unknown;
} ox_attr;

/* IntIntListEntryProto */
typedef struct ox_int_int_list {
  int64_t key;
  bool has_key;
  int64_t *value;
  size_t n_value;
  ox_bytes unknown;
} ox_int_int_list;

/* SimpleShardedDimProto */
typedef struct ox_simple_sharded_dim {
  int64_t dim_value;
  bool has_dim_value;
  char *dim_param;
  int64_t num_shards;
  bool has_num_shards;
  ox_bytes unknown;
} ox_simple_sharded_dim;

/* ShardedDimProto */
typedef struct ox_sharded_dim {
  int64_t axis;
  bool has_axis;
  ox_simple_sharded_dim *simple_sharding;
  size_t n_simple_sharding;
  ox_bytes unknown;
} ox_sharded_dim;

/* ShardingSpecProto */
typedef struct ox_sharding_spec {
  char *tensor_name;
  int64_t *device;
  size_t n_device;
  ox_int_int_list *index_to_device_group_map;
  size_t n_index_to_device_group_map;
  ox_sharded_dim *sharded_dim;
  size_t n_sharded_dim;
  ox_bytes unknown;
} ox_sharding_spec;

/* NodeDeviceConfigurationProto */
typedef struct ox_node_device_config {
  char *configuration_id;
  ox_sharding_spec *sharding_spec;
  size_t n_sharding_spec;
  int32_t pipeline_stage;
  bool has_pipeline_stage;
  ox_bytes unknown;
} ox_node_device_config;

/* DeviceConfigurationProto */
typedef struct ox_device_config {
  char *name;
  int32_t num_devices;
  bool has_num_devices;
  char **device;
  size_t n_device;
  ox_bytes unknown;
} ox_device_config;

/* NodeProto. A missing optional input or output is "". */
typedef struct ox_node {
  char **input;
  size_t n_input;
  char **output;
  size_t n_output;
  char *name;
  char *op_type;
  char *domain;
  char *overload;
  ox_attr *attribute;
  size_t n_attribute;
  char *doc_string;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_node_device_config *device_configurations;
  size_t n_device_configurations;
  ox_bytes unknown;
} ox_node;

/* TensorAnnotation */
typedef struct ox_tensor_annotation {
  char *tensor_name;
  ox_str_pair *quant_parameter_tensor_names;
  size_t n_quant_parameter_tensor_names;
  ox_bytes unknown;
} ox_tensor_annotation;

/* GraphProto */
struct ox_graph {
  ox_node *node;
  size_t n_node;
  char *name;
  ox_tensor *initializer;
  size_t n_initializer;
  ox_sparse_tensor *sparse_initializer;
  size_t n_sparse_initializer;
  char *doc_string;
  ox_value_info *input;
  size_t n_input;
  ox_value_info *output;
  size_t n_output;
  ox_value_info *value_info;
  size_t n_value_info;
  ox_tensor_annotation *quantization_annotation;
  size_t n_quantization_annotation;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_bytes unknown;
};

/* TrainingInfoProto */
typedef struct ox_training_info {
  ox_graph *initialization;
  ox_graph *algorithm;
  ox_str_pair *initialization_binding;
  size_t n_initialization_binding;
  ox_str_pair *update_binding;
  size_t n_update_binding;
  ox_bytes unknown;
} ox_training_info;

/* FunctionProto */
typedef struct ox_function {
  char *name;
  char **input;
  size_t n_input;
  char **output;
  size_t n_output;
  char **attribute; /* attribute names without defaults */
  size_t n_attribute;
  ox_attr *attribute_proto; /* attributes with default values */
  size_t n_attribute_proto;
  ox_node *node;
  size_t n_node;
  char *doc_string;
  ox_opset *opset_import;
  size_t n_opset_import;
  char *domain;
  char *overload;
  ox_value_info *value_info;
  size_t n_value_info;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_bytes unknown;
} ox_function;

/* ModelProto */
typedef struct ox_model_proto {
  int64_t ir_version;
  bool has_ir_version;
  ox_opset *opset_import;
  size_t n_opset_import;
  char *producer_name;
  char *producer_version;
  char *domain;
  int64_t model_version;
  bool has_model_version;
  char *doc_string;
  ox_graph *graph;
  ox_str_pair *metadata_props;
  size_t n_metadata_props;
  ox_training_info *training_info;
  size_t n_training_info;
  ox_function *functions;
  size_t n_functions;
  ox_device_config *configuration;
  size_t n_configuration;
  ox_bytes unknown;
} ox_model_proto;

/* ---- onnx-data.proto ---- */
/* SequenceProto / OptionalProto elem_type values */
enum {
  OX_DATA_UNDEFINED = 0,
  OX_DATA_TENSOR = 1,
  OX_DATA_SPARSE_TENSOR = 2,
  OX_DATA_SEQUENCE = 3,
  OX_DATA_MAP = 4,
  OX_DATA_OPTIONAL = 5,
};

struct ox_sequence_data {
  char *name;
  int32_t elem_type;
  bool has_elem_type;
  ox_tensor *tensor_values;
  size_t n_tensor_values;
  ox_sparse_tensor *sparse_tensor_values;
  size_t n_sparse_tensor_values;
  ox_sequence_data *sequence_values;
  size_t n_sequence_values;
  ox_map_data *map_values;
  size_t n_map_values;
  ox_optional_data *optional_values;
  size_t n_optional_values;
  ox_bytes unknown;
};

struct ox_map_data {
  char *name;
  int32_t key_type;
  bool has_key_type;
  int64_t *keys;
  size_t n_keys;
  ox_bytes *string_keys;
  size_t n_string_keys;
  ox_sequence_data *values;
  ox_bytes unknown;
};

struct ox_optional_data {
  char *name;
  int32_t elem_type;
  bool has_elem_type;
  ox_tensor *tensor_value;
  ox_sparse_tensor *sparse_tensor_value;
  ox_sequence_data *sequence_value;
  ox_map_data *map_value;
  ox_optional_data *optional_value;
  ox_bytes unknown;
};

/* ---- the loaded model: proto tree + the memory that backs it ---- */
typedef struct ox_model {
  ox_model_proto *proto;
  ox_arena *arena;   /* everything in proto lives here ... */
  ox_file_map *maps; /* ... or in these mappings (model file, external files) */
  size_t n_maps;
  uint8_t *owned;    /* a malloc'd buffer the model owns (read from a pipe), or NULL */
  char *dir;         /* folder of the model file, for external data ("" if none) */
} ox_model;

/* Creates an empty model (arena, empty proto). NULL on OOM. */
ox_model *ox_model_new(void);
/* Frees the model, its arena and its mappings. NULL is fine. */
void ox_model_free(ox_model *m);

/* ---- data types ---- */
typedef struct ox_dtype_info {
  const char *name;  /* "float", "int64", "float8e4m3fn", ... as in the text syntax */
  const char *upper; /* "FLOAT", "INT64", ... as in TensorProto.DataType */
  uint8_t bits;      /* bits per element: 4 for (u)int4 and float4, 2 for (u)int2; 0 for string */
  bool is_float, is_int, is_signed, is_complex;
} ox_dtype_info;

/* Info for a data type; NULL for values outside the enum. */
const ox_dtype_info *ox_dtype_get(int32_t dt);
/* Looks up by text name ("float16") ; returns OX_UNDEFINED if unknown. */
ox_dtype ox_dtype_from_name(const char *name);
/* Bytes needed for n elements (sub-byte types packed, rounded up). false on
 * overflow or for string. */
bool ox_dtype_nbytes(int32_t dt, int64_t n, size_t *bytes);

/* Element count of dims (1 for rank 0). false on negative dims or overflow. */
bool ox_numel(const int64_t *dims, size_t rank, int64_t *n);

/* ---- lookups ---- */
const char *ox_attr_type_name(int32_t t); /* "INT", "FLOATS", ... ; "UNDEFINED" */
/* Finds a node attribute by name (NULL if missing). */
const ox_attr *ox_node_attr(const ox_node *n, const char *name);
/* Typed attribute getters with defaults. */
int64_t ox_node_attr_int(const ox_node *n, const char *name, int64_t dflt);
float ox_node_attr_float(const ox_node *n, const char *name, float dflt);
const char *ox_node_attr_str(const ox_node *n, const char *name, const char *dflt);
/* Imported version of a domain ("" or "ai.onnx" both name the default domain);
 * -1 if not imported. */
int64_t ox_opset_version(const ox_opset *imports, size_t n, const char *domain);
/* true for "" and "ai.onnx". */
bool ox_is_default_domain(const char *domain);

/* ---- builders (all allocate in the model's arena; NULL/-1 on OOM) ---- */
ox_node *ox_graph_add_node(ox_arena *a, ox_graph *g, const char *op_type, const char *domain,
                           const char *name);
int ox_node_add_input(ox_arena *a, ox_node *n, const char *name);
int ox_node_add_output(ox_arena *a, ox_node *n, const char *name);
ox_attr *ox_node_add_attr(ox_arena *a, ox_node *n, const char *name, ox_attr_type type);
ox_value_info *ox_value_info_push(ox_arena *a, ox_value_info **arr, size_t *n, const char *name);
/* A tensor type with a fixed shape (rank dims; a negative dim means unknown). */
ox_type *ox_type_new_tensor(ox_arena *a, int32_t elem_type, const int64_t *dims, size_t rank);
/* Deep copies (into arena a) for graph rewriting and function inlining. */
ox_type *ox_type_clone(ox_arena *a, const ox_type *t);
ox_tensor *ox_tensor_clone(ox_arena *a, const ox_tensor *t);
ox_graph *ox_graph_clone(ox_arena *a, const ox_graph *g);
int ox_attr_copy(ox_arena *a, ox_attr *dst, const ox_attr *src);
int ox_node_copy(ox_arena *a, ox_node *dst, const ox_node *src);

/* Bytes of a tensor's payload when it is held as raw bytes (raw_data or
 * resolved external data); {NULL,0} otherwise. */
ox_bytes ox_tensor_payload(const ox_tensor *t);

#endif
