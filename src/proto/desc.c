/* desc.c - one field table per message of onnx.proto and onnx-data.proto.
 * The decoder and the encoder are driven by these tables only, so the two
 * stay symmetric. Fields are listed in ascending field number (the encoder
 * writes them in this order, as protobuf C++ does). */
#include <stddef.h>

#include "pb.h"

#define O(T, f) ((uint32_t)offsetof(T, f))
/* singular scalar with a has_ flag */
#define SC(n, k, T, f, nm) \
  { n, k, 0, O(T, f), O(T, has_##f), NULL, nm }
/* repeated scalar / string / bytes */
#define RP(n, k, fl, T, f, nm) \
  { n, k, PB_REP | (fl), O(T, f), O(T, n_##f), NULL, nm }
/* singular string / bytes */
#define ST(n, k, T, f, nm) \
  { n, k, 0, O(T, f), 0, NULL, nm }
/* sub-messages */
#define MS(n, T, f, sub, nm) \
  { n, PB_MSG, 0, O(T, f), 0, &sub, nm }
#define RM(n, T, f, sub, nm) \
  { n, PB_MSG, PB_REP, O(T, f), O(T, n_##f), &sub, nm }
#define MSGDEF(var, T, pname, tab) \
  const pb_msg var = {pname, sizeof(T), tab, sizeof tab / sizeof tab[0], O(T, unknown)}

extern const pb_msg ox_pb_graph_msg, ox_pb_sparse_msg, ox_pb_strpair_msg;

static const pb_field strpair_f[] = {
    ST(1, PB_STR, ox_str_pair, key, "key"),
    ST(2, PB_STR, ox_str_pair, value, "value"),
};
MSGDEF(ox_pb_strpair_msg, ox_str_pair, "StringStringEntryProto", strpair_f);

static const pb_field opset_f[] = {
    ST(1, PB_STR, ox_opset, domain, "domain"),
    SC(2, PB_I64, ox_opset, version, "version"),
};
static MSGDEF(opset_msg, ox_opset, "OperatorSetIdProto", opset_f);

static const pb_field segment_f[] = {
    SC(1, PB_I64, ox_segment, begin, "begin"),
    SC(2, PB_I64, ox_segment, end, "end"),
};
static MSGDEF(segment_msg, ox_segment, "TensorProto.Segment", segment_f);

static const pb_field tensor_f[] = {
    RP(1, PB_I64, 0, ox_tensor, dims, "dims"),
    SC(2, PB_I32, ox_tensor, data_type, "data_type"),
    MS(3, ox_tensor, segment, segment_msg, "segment"),
    RP(4, PB_F32, PB_PACKED, ox_tensor, float_data, "float_data"),
    RP(5, PB_I32, PB_PACKED, ox_tensor, int32_data, "int32_data"),
    RP(6, PB_BYTES, 0, ox_tensor, string_data, "string_data"),
    RP(7, PB_I64, PB_PACKED, ox_tensor, int64_data, "int64_data"),
    ST(8, PB_STR, ox_tensor, name, "name"),
    ST(9, PB_RAW, ox_tensor, raw_data, "raw_data"),
    RP(10, PB_F64, PB_PACKED, ox_tensor, double_data, "double_data"),
    RP(11, PB_U64, PB_PACKED, ox_tensor, uint64_data, "uint64_data"),
    ST(12, PB_STR, ox_tensor, doc_string, "doc_string"),
    RM(13, ox_tensor, external_data, ox_pb_strpair_msg, "external_data"),
    SC(14, PB_I32, ox_tensor, data_location, "data_location"),
    RM(16, ox_tensor, metadata_props, ox_pb_strpair_msg, "metadata_props"),
};
MSGDEF(ox_pb_tensor_msg, ox_tensor, "TensorProto", tensor_f);

static const pb_field sparse_f[] = {
    MS(1, ox_sparse_tensor, values, ox_pb_tensor_msg, "values"),
    MS(2, ox_sparse_tensor, indices, ox_pb_tensor_msg, "indices"),
    RP(3, PB_I64, 0, ox_sparse_tensor, dims, "dims"),
};
MSGDEF(ox_pb_sparse_msg, ox_sparse_tensor, "SparseTensorProto", sparse_f);

static const pb_field dim_f[] = {
    {1, PB_I64, PB_ONEOF, O(ox_dim, value), O(ox_dim, has_value), NULL, "dim_value"},
    {2, PB_STR, PB_ONEOF, O(ox_dim, param), 0, NULL, "dim_param"},
    ST(3, PB_STR, ox_dim, denotation, "denotation"),
};
static MSGDEF(dim_msg, ox_dim, "TensorShapeProto.Dimension", dim_f);

static const pb_field shape_f[] = {
    RM(1, ox_shape, dim, dim_msg, "dim"),
};
static MSGDEF(shape_msg, ox_shape, "TensorShapeProto", shape_f);

/* The members of TypeProto's oneof, decoded into the flattened ox_type.
 * Their unknown fields go to inner_unknown. */
#define INNER(var, pname, tab)                                                        \
  static const pb_msg var = {pname, sizeof(ox_type), tab, sizeof tab / sizeof tab[0], \
                             O(ox_type, inner_unknown)}
static const pb_field ttensor_f[] = {
    SC(1, PB_I32, ox_type, elem_type, "elem_type"),
    MS(2, ox_type, shape, shape_msg, "shape"),
};
INNER(ttensor_msg, "TypeProto.Tensor", ttensor_f);
static const pb_field tseq_f[] = {
    MS(1, ox_type, elem, ox_pb_type_msg, "elem_type"),
};
INNER(tseq_msg, "TypeProto.Sequence", tseq_f);
static const pb_field tmap_f[] = {
    SC(1, PB_I32, ox_type, elem_type, "key_type"),
    MS(2, ox_type, elem, ox_pb_type_msg, "value_type"),
};
INNER(tmap_msg, "TypeProto.Map", tmap_f);
static const pb_field topaque_f[] = {
    ST(1, PB_STR, ox_type, opaque_domain, "domain"),
    ST(2, PB_STR, ox_type, opaque_name, "name"),
};
INNER(topaque_msg, "TypeProto.Opaque", topaque_f);

#define IN(n, sub, nm) \
  { n, PB_INLINE, 0, 0, O(ox_type, kind), &sub, nm }
static const pb_field type_f[] = {
    IN(1, ttensor_msg, "tensor_type"), IN(4, tseq_msg, "sequence_type"),
    IN(5, tmap_msg, "map_type"),       ST(6, PB_STR, ox_type, denotation, "denotation"),
    IN(7, topaque_msg, "opaque_type"), IN(8, ttensor_msg, "sparse_tensor_type"),
    IN(9, tseq_msg, "optional_type"),
};
MSGDEF(ox_pb_type_msg, ox_type, "TypeProto", type_f);

static const pb_field vi_f[] = {
    ST(1, PB_STR, ox_value_info, name, "name"),
    MS(2, ox_value_info, type, ox_pb_type_msg, "type"),
    ST(3, PB_STR, ox_value_info, doc_string, "doc_string"),
    RM(4, ox_value_info, metadata_props, ox_pb_strpair_msg, "metadata_props"),
};
static MSGDEF(vi_msg, ox_value_info, "ValueInfoProto", vi_f);

static const pb_field attr_f[] = {
    ST(1, PB_STR, ox_attr, name, "name"),
    SC(2, PB_F32, ox_attr, f, "f"),
    SC(3, PB_I64, ox_attr, i, "i"),
    ST(4, PB_BYTES, ox_attr, s, "s"),
    MS(5, ox_attr, t, ox_pb_tensor_msg, "t"),
    MS(6, ox_attr, g, ox_pb_graph_msg, "g"),
    RP(7, PB_F32, 0, ox_attr, floats, "floats"),
    RP(8, PB_I64, 0, ox_attr, ints, "ints"),
    RP(9, PB_BYTES, 0, ox_attr, strings, "strings"),
    RM(10, ox_attr, tensors, ox_pb_tensor_msg, "tensors"),
    RM(11, ox_attr, graphs, ox_pb_graph_msg, "graphs"),
    ST(13, PB_STR, ox_attr, doc_string, "doc_string"),
    MS(14, ox_attr, tp, ox_pb_type_msg, "tp"),
    RM(15, ox_attr, type_protos, ox_pb_type_msg, "type_protos"),
    SC(20, PB_I32, ox_attr, type, "type"),
    ST(21, PB_STR, ox_attr, ref_attr_name, "ref_attr_name"),
    MS(22, ox_attr, sparse_tensor, ox_pb_sparse_msg, "sparse_tensor"),
    RM(23, ox_attr, sparse_tensors, ox_pb_sparse_msg, "sparse_tensors"),
};
static MSGDEF(attr_msg, ox_attr, "AttributeProto", attr_f);

static const pb_field iil_f[] = {
    SC(1, PB_I64, ox_int_int_list, key, "key"),
    RP(2, PB_I64, 0, ox_int_int_list, value, "value"),
};
static MSGDEF(iil_msg, ox_int_int_list, "IntIntListEntryProto", iil_f);

static const pb_field ssd_f[] = {
    {1, PB_I64, PB_ONEOF, O(ox_simple_sharded_dim, dim_value),
     O(ox_simple_sharded_dim, has_dim_value), NULL, "dim_value"},
    {2, PB_STR, PB_ONEOF, O(ox_simple_sharded_dim, dim_param), 0, NULL, "dim_param"},
    SC(3, PB_I64, ox_simple_sharded_dim, num_shards, "num_shards"),
};
static MSGDEF(ssd_msg, ox_simple_sharded_dim, "SimpleShardedDimProto", ssd_f);

static const pb_field sd_f[] = {
    SC(1, PB_I64, ox_sharded_dim, axis, "axis"),
    RM(2, ox_sharded_dim, simple_sharding, ssd_msg, "simple_sharding"),
};
static MSGDEF(sd_msg, ox_sharded_dim, "ShardedDimProto", sd_f);

static const pb_field ss_f[] = {
    ST(1, PB_STR, ox_sharding_spec, tensor_name, "tensor_name"),
    RP(2, PB_I64, 0, ox_sharding_spec, device, "device"),
    RM(3, ox_sharding_spec, index_to_device_group_map, iil_msg, "index_to_device_group_map"),
    RM(4, ox_sharding_spec, sharded_dim, sd_msg, "sharded_dim"),
};
static MSGDEF(ss_msg, ox_sharding_spec, "ShardingSpecProto", ss_f);

static const pb_field ndc_f[] = {
    ST(1, PB_STR, ox_node_device_config, configuration_id, "configuration_id"),
    RM(2, ox_node_device_config, sharding_spec, ss_msg, "sharding_spec"),
    SC(3, PB_I32, ox_node_device_config, pipeline_stage, "pipeline_stage"),
};
static MSGDEF(ndc_msg, ox_node_device_config, "NodeDeviceConfigurationProto", ndc_f);

static const pb_field dc_f[] = {
    ST(1, PB_STR, ox_device_config, name, "name"),
    SC(2, PB_I32, ox_device_config, num_devices, "num_devices"),
    RP(3, PB_STR, 0, ox_device_config, device, "device"),
};
static MSGDEF(dc_msg, ox_device_config, "DeviceConfigurationProto", dc_f);

static const pb_field node_f[] = {
    RP(1, PB_STR, 0, ox_node, input, "input"),
    RP(2, PB_STR, 0, ox_node, output, "output"),
    ST(3, PB_STR, ox_node, name, "name"),
    ST(4, PB_STR, ox_node, op_type, "op_type"),
    RM(5, ox_node, attribute, attr_msg, "attribute"),
    ST(6, PB_STR, ox_node, doc_string, "doc_string"),
    ST(7, PB_STR, ox_node, domain, "domain"),
    ST(8, PB_STR, ox_node, overload, "overload"),
    RM(9, ox_node, metadata_props, ox_pb_strpair_msg, "metadata_props"),
    RM(10, ox_node, device_configurations, ndc_msg, "device_configurations"),
};
static MSGDEF(node_msg, ox_node, "NodeProto", node_f);

static const pb_field ta_f[] = {
    ST(1, PB_STR, ox_tensor_annotation, tensor_name, "tensor_name"),
    RM(2, ox_tensor_annotation, quant_parameter_tensor_names, ox_pb_strpair_msg,
       "quant_parameter_tensor_names"),
};
static MSGDEF(ta_msg, ox_tensor_annotation, "TensorAnnotation", ta_f);

static const pb_field graph_f[] = {
    RM(1, ox_graph, node, node_msg, "node"),
    ST(2, PB_STR, ox_graph, name, "name"),
    RM(5, ox_graph, initializer, ox_pb_tensor_msg, "initializer"),
    ST(10, PB_STR, ox_graph, doc_string, "doc_string"),
    RM(11, ox_graph, input, vi_msg, "input"),
    RM(12, ox_graph, output, vi_msg, "output"),
    RM(13, ox_graph, value_info, vi_msg, "value_info"),
    RM(14, ox_graph, quantization_annotation, ta_msg, "quantization_annotation"),
    RM(15, ox_graph, sparse_initializer, ox_pb_sparse_msg, "sparse_initializer"),
    RM(16, ox_graph, metadata_props, ox_pb_strpair_msg, "metadata_props"),
};
MSGDEF(ox_pb_graph_msg, ox_graph, "GraphProto", graph_f);

static const pb_field ti_f[] = {
    MS(1, ox_training_info, initialization, ox_pb_graph_msg, "initialization"),
    MS(2, ox_training_info, algorithm, ox_pb_graph_msg, "algorithm"),
    RM(3, ox_training_info, initialization_binding, ox_pb_strpair_msg, "initialization_binding"),
    RM(4, ox_training_info, update_binding, ox_pb_strpair_msg, "update_binding"),
};
static MSGDEF(ti_msg, ox_training_info, "TrainingInfoProto", ti_f);

static const pb_field fn_f[] = {
    ST(1, PB_STR, ox_function, name, "name"),
    RP(4, PB_STR, 0, ox_function, input, "input"),
    RP(5, PB_STR, 0, ox_function, output, "output"),
    RP(6, PB_STR, 0, ox_function, attribute, "attribute"),
    RM(7, ox_function, node, node_msg, "node"),
    ST(8, PB_STR, ox_function, doc_string, "doc_string"),
    RM(9, ox_function, opset_import, opset_msg, "opset_import"),
    ST(10, PB_STR, ox_function, domain, "domain"),
    RM(11, ox_function, attribute_proto, attr_msg, "attribute_proto"),
    RM(12, ox_function, value_info, vi_msg, "value_info"),
    ST(13, PB_STR, ox_function, overload, "overload"),
    RM(14, ox_function, metadata_props, ox_pb_strpair_msg, "metadata_props"),
};
static MSGDEF(fn_msg, ox_function, "FunctionProto", fn_f);

static const pb_field model_f[] = {
    SC(1, PB_I64, ox_model_proto, ir_version, "ir_version"),
    ST(2, PB_STR, ox_model_proto, producer_name, "producer_name"),
    ST(3, PB_STR, ox_model_proto, producer_version, "producer_version"),
    ST(4, PB_STR, ox_model_proto, domain, "domain"),
    SC(5, PB_I64, ox_model_proto, model_version, "model_version"),
    ST(6, PB_STR, ox_model_proto, doc_string, "doc_string"),
    MS(7, ox_model_proto, graph, ox_pb_graph_msg, "graph"),
    RM(8, ox_model_proto, opset_import, opset_msg, "opset_import"),
    RM(14, ox_model_proto, metadata_props, ox_pb_strpair_msg, "metadata_props"),
    RM(20, ox_model_proto, training_info, ti_msg, "training_info"),
    RM(25, ox_model_proto, functions, fn_msg, "functions"),
    RM(26, ox_model_proto, configuration, dc_msg, "configuration"),
};
MSGDEF(ox_pb_model_msg, ox_model_proto, "ModelProto", model_f);

/* ---- onnx-data.proto ---- */
extern const pb_msg ox_pb_map_msg, ox_pb_optional_msg;

static const pb_field seq_f[] = {
    ST(1, PB_STR, ox_sequence_data, name, "name"),
    SC(2, PB_I32, ox_sequence_data, elem_type, "elem_type"),
    RM(3, ox_sequence_data, tensor_values, ox_pb_tensor_msg, "tensor_values"),
    RM(4, ox_sequence_data, sparse_tensor_values, ox_pb_sparse_msg, "sparse_tensor_values"),
    RM(5, ox_sequence_data, sequence_values, ox_pb_sequence_msg, "sequence_values"),
    RM(6, ox_sequence_data, map_values, ox_pb_map_msg, "map_values"),
    RM(7, ox_sequence_data, optional_values, ox_pb_optional_msg, "optional_values"),
};
MSGDEF(ox_pb_sequence_msg, ox_sequence_data, "SequenceProto", seq_f);

static const pb_field map_f[] = {
    ST(1, PB_STR, ox_map_data, name, "name"),
    SC(2, PB_I32, ox_map_data, key_type, "key_type"),
    RP(3, PB_I64, 0, ox_map_data, keys, "keys"),
    RP(4, PB_BYTES, 0, ox_map_data, string_keys, "string_keys"),
    MS(5, ox_map_data, values, ox_pb_sequence_msg, "values"),
};
MSGDEF(ox_pb_map_msg, ox_map_data, "MapProto", map_f);

static const pb_field opt_f[] = {
    ST(1, PB_STR, ox_optional_data, name, "name"),
    SC(2, PB_I32, ox_optional_data, elem_type, "elem_type"),
    MS(3, ox_optional_data, tensor_value, ox_pb_tensor_msg, "tensor_value"),
    MS(4, ox_optional_data, sparse_tensor_value, ox_pb_sparse_msg, "sparse_tensor_value"),
    MS(5, ox_optional_data, sequence_value, ox_pb_sequence_msg, "sequence_value"),
    MS(6, ox_optional_data, map_value, ox_pb_map_msg, "map_value"),
    MS(7, ox_optional_data, optional_value, ox_pb_optional_msg, "optional_value"),
};
MSGDEF(ox_pb_optional_msg, ox_optional_data, "OptionalProto", opt_f);

size_t ox_pb_elem_size(const pb_field *f) {
  switch (f->kind) {
    case PB_I32:
    case PB_F32:
      return 4;
    case PB_I64:
    case PB_U64:
    case PB_F64:
      return 8;
    case PB_STR:
      return sizeof(char *);
    case PB_BYTES:
    case PB_RAW:
      return sizeof(ox_bytes);
    default:
      return f->sub->size;
  }
}

int ox_pb_wire_of(int kind) {
  return kind == PB_F32 ? 5 : kind == PB_F64 ? 1 : kind <= PB_U64 ? 0 : 2;
}
