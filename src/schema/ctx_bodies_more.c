/* ctx_bodies_more.c - context-dependent bodies of the losses, Bernoulli,
 * CenterCropPad and RotaryEmbedding (see ctx_bodies.c). */
#include <inttypes.h>
#include <string.h>

#include "../text/text.h"
#include "ctx_bodies.h"

/* ------------------------------------------------------------ NegativeLogLikelihoodLoss */

int ox_ctx_nllloss(bctx *c) {
  if (c->s->since_version < 13) return OX_CTX_NONE;
  const char *red = ox_node_attr_str(c->node, "reduction", "mean");
  const ox_attr *ii = ox_node_attr(c->node, "ignore_index");
  bool w = ox_ctx_has_in(c, 2), mean = strcmp(red, "mean") == 0, sum = strcmp(red, "sum") == 0;
  ox_ctx_header(c, c->s->since_version);
  ox_ctx_line(c, "const_zero = Constant <value = int64[1] {0}> ()");
  ox_ctx_line(c, "const_one = Constant <value = int64[1] {1}> ()");
  ox_ctx_line(c, "axes = Constant <value = int64[1] {1}> ()");
  ox_ctx_line(c, "expanded_target = Unsqueeze (target, axes)");
  const char *tgt = "expanded_target", *gathered = "input_gather_element";
  if (ii) {
    ox_ctx_line(c, "const_ignore_index = Constant <value = int64[1] {%" PRId64 "}> ()", ii->i);
    ox_ctx_line(c, "const_zero_target_typed = Sub (expanded_target, expanded_target)");
    ox_ctx_line(c, "expanded_target_int64 = Cast <to = 7> (expanded_target)");
    ox_ctx_line(c, "mask = Equal (expanded_target_int64, const_ignore_index)");
    ox_ctx_line(c, "transform_targets = Where (mask, const_zero_target_typed, expanded_target)");
    tgt = "transform_targets";
  }
  ox_ctx_line(c, "input_gather_element = GatherElements <axis = 1> (input, %s)", tgt);
  if (ii) {
    ox_ctx_line(c, "const_zero_float_ = Constant <value = float[1] {0.0}> ()");
    ox_ctx_line(c, "const_zero_float = CastLike (const_zero_float_, input)");
    ox_ctx_line(c,
                "input_gather_element_transform = Where (mask, const_zero_float, "
                "input_gather_element)");
    gathered = "input_gather_element_transform";
  }
  ox_ctx_line(c, "loss_NCdd = Neg (%s)", gathered);
  ox_ctx_line(c, "loss_N1dd = Slice (loss_NCdd, const_zero, const_one, const_one)");
  /* the per-element weights: the class weights, zero where ignored */
  bool weighted = w || (ii && mean);
  if (w && ii) {
    ox_ctx_line(c, "weight_gather_temp = Gather (weight, transform_targets)");
    ox_ctx_line(c, "weight_gather_temp_1 = Where (mask, const_zero_float, weight_gather_temp)");
    ox_ctx_line(c, "weight_gather = Squeeze (weight_gather_temp_1, axes)");
  } else if (w) {
    ox_ctx_line(c, "weight_gather = Gather (weight, target)");
  } else if (weighted) {
    ox_ctx_line(c, "const_one_float_ = Constant <value = float[1] {1.0}> ()");
    ox_ctx_line(c, "const_one_float = CastLike (const_one_float_, input)");
    ox_ctx_line(c, "weight_gather_temp = Where (mask, const_zero_float, const_one_float)");
    ox_ctx_line(c, "weight_gather = Squeeze (weight_gather_temp, axes)");
  }
  if (!weighted) {
    if (mean || sum) {
      ox_ctx_line(c, "loss_Ndd = Squeeze (loss_N1dd, axes)");
      ox_ctx_line(c, "loss = %s <keepdims = 0> (loss_Ndd)", mean ? "ReduceMean" : "ReduceSum");
    } else {
      ox_ctx_line(c, "loss = Squeeze (loss_N1dd, axes)");
    }
    return OX_CTX_OK;
  }
  ox_ctx_line(c, "loss_unweighted = Squeeze (loss_N1dd, axes)");
  if (!mean && !sum) {
    ox_ctx_line(c, "loss = Mul (loss_unweighted, weight_gather)");
    return OX_CTX_OK;
  }
  ox_ctx_line(c, "loss_Ndd = Mul (loss_unweighted, weight_gather)");
  if (sum) {
    ox_ctx_line(c, "loss = ReduceSum <keepdims = 0> (loss_Ndd)");
    return OX_CTX_OK;
  }
  ox_ctx_line(c, "loss_sum = ReduceSum <keepdims = 0> (loss_Ndd)");
  ox_ctx_line(c, "weight_gather_sum = ReduceSum <keepdims = 0> (weight_gather)");
  ox_ctx_line(c, "loss = Div (loss_sum, weight_gather_sum)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ SoftmaxCrossEntropyLoss */

int ox_ctx_sceloss(bctx *c) {
  if (c->s->since_version < 13) return OX_CTX_NONE;
  const char *red = ox_node_attr_str(c->node, "reduction", "mean");
  const ox_attr *ii = ox_node_attr(c->node, "ignore_index");
  ox_ctx_header(c, 13);
  ox_ctx_line(c, "Shape3D = Constant <value = int64[3] {0, 0, -1}> ()");
  ox_ctx_line(c, "X_NCD = Reshape (scores, Shape3D)");
  ox_ctx_line(c, "X_NDC = Transpose <perm = [0, 2, 1]> (X_NCD)");
  ox_ctx_line(c, "X_LogSM = LogSoftmax <axis = 2> (X_NDC)");
  ox_ctx_line(c, "X_LogSM_NCD = Transpose <perm = [0, 2, 1]> (X_LogSM)");
  ox_ctx_line(c, "X_shape = Shape (scores)");
  ox_ctx_line(c, "X_Log = Reshape (X_LogSM_NCD, X_shape)");
  if (ox_ctx_has_out(c, 1)) ox_ctx_line(c, "log_prob = Identity (X_Log)");
  char iis[64] = "";
  if (ii) snprintf(iis, sizeof iis, ", ignore_index = %" PRId64, ii->i);
  ox_ctx_line(c, "output = NegativeLogLikelihoodLoss <reduction = \"%s\"%s> (X_Log, labels%s)", red,
              iis, ox_ctx_has_in(c, 2) ? ", weights" : "");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ Bernoulli */

int ox_ctx_bernoulli(bctx *c) {
  if (c->opset < 15) return OX_CTX_NONE;
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  const ox_attr *seed = ox_node_attr(c->node, "seed");
  int64_t to = ox_ctx_int(c, "dtype", t);
  char fb[40], ss[64] = "";
  if (seed) snprintf(ss, sizeof ss, ", seed = %s", ox_ctx_f(fb, sizeof fb, seed->f));
  ox_ctx_header(c, c->s->since_version);
  ox_ctx_line(c, "X_random = RandomUniformLike <low = 0.0, high = 1.0%s, dtype = %d> (input)", ss,
              (int)t);
  /* 1 with probability p (Operators.md): u < p for u uniform in [0, 1). The
   * reference's body compares Greater (X_random, input), which gives 1 with
   * probability 1 - p; this follows the spec instead. */
  ox_ctx_line(c, "X_less = Less (X_random, input)");
  ox_ctx_line(c, "output = Cast <to = %" PRId64 "> (X_less)", to);
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ CenterCropPad */

int ox_ctx_centercroppad(bctx *c) {
  const ox_attr *axes = ox_node_attr(c->node, "axes");
  bool ax = axes && axes->n_ints > 0;
  ox_ctx_header(c, 18);
  ox_ctx_line(c, "k2 = Constant <value = int64[1] {2}> ()");
  if (ax) {
    char list[1024];
    size_t n = 0;
    for (size_t k = 0; k < axes->n_ints && n + 32 < sizeof list; k++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%" PRId64, k ? ", " : "", axes->ints[k]);
    ox_ctx_line(c, "axes_input = Constant <value_ints = [%s]> ()", list);
    ox_ctx_line(c, "x_shape_alldims = Shape (input_data)");
    ox_ctx_line(c, "x_shape = Gather (x_shape_alldims, axes_input)");
  } else {
    ox_ctx_line(c, "x_shape = Shape (input_data)");
  }
  ox_ctx_line(c, "padded_sh = Max (x_shape, shape)");
  ox_ctx_line(c, "pad_amount = Sub (padded_sh, x_shape)");
  ox_ctx_line(c, "pad_amount_left = Div (pad_amount, k2)");
  ox_ctx_line(c, "pad_amount_right = Sub (pad_amount, pad_amount_left)");
  ox_ctx_line(c, "pads = Concat <axis = 0> (pad_amount_left, pad_amount_right)");
  if (ax) {
    ox_ctx_line(c, "padded_input = Pad (input_data, pads, , axes_input)");
    ox_ctx_line(c, "x_shape_alldims2 = Shape (padded_input)");
    ox_ctx_line(c, "x_shape2 = Gather (x_shape_alldims2, axes_input)");
  } else {
    ox_ctx_line(c, "padded_input = Pad (input_data, pads)");
    ox_ctx_line(c, "x_shape2 = Shape (padded_input)");
  }
  ox_ctx_line(c, "sh_diff = Sub (x_shape2, shape)");
  ox_ctx_line(c, "start_dims = Div (sh_diff, k2)");
  ox_ctx_line(c, "end_dims = Add (start_dims, shape)");
  ox_ctx_line(c, "output_data = Slice (padded_input, start_dims, end_dims%s)",
              ax ? ", axes_input" : "");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ RotaryEmbedding */

/* The input is 4D (batch, heads, seq, head) unless num_heads is given, which
 * the operator requires for a 3D (batch, seq, hidden) input. */
int ox_ctx_rotary(bctx *c) {
  int64_t heads = ox_ctx_int(c, "num_heads", 0), dim = ox_ctx_int(c, "rotary_embedding_dim", 0);
  bool inter = ox_ctx_int(c, "interleaved", 0) != 0, pos = ox_ctx_has_in(c, 3);
  ox_ctx_header(c, 23);
  ox_ctx_line(c, "Zero1D = Constant <value = int64[1] {0}> ()");
  ox_ctx_line(c, "NumHeads = Constant <value = int64[1] {%" PRId64 "}> ()", heads);
  ox_ctx_line(c, "NegOne = Constant <value = int64[1] {-1}> ()");
  if (heads > 0) {
    ox_ctx_line(c, "NewShape = Concat <axis = 0> (Zero1D, Zero1D, NumHeads, NegOne)");
    ox_ctx_line(c, "XIn = Reshape (X, NewShape)");
  } else {
    ox_ctx_line(c, "XIn = Transpose <perm = [0, 2, 1, 3]> (X)");
  }
  ox_ctx_line(c, "HeadSize = Shape <start = 3, end = 4> (XIn)");
  if (dim > 0)
    ox_ctx_line(c, "RotaryEmbedDim = Constant <value = int64[1] {%" PRId64 "}> ()", dim);
  else
    ox_ctx_line(c, "RotaryEmbedDim = Identity (HeadSize)");
  ox_ctx_line(c, "Two1D = Constant <value = int64[1] {2}> ()");
  ox_ctx_line(c, "NoRotateLength = Sub (HeadSize, RotaryEmbedDim)");
  ox_ctx_line(c, "RotateSplitLengths = Concat <axis = 0> (RotaryEmbedDim, NoRotateLength)");
  ox_ctx_line(c, "XToRotate, XNoRotate = Split <axis = -1> (XIn, RotateSplitLengths)");
  if (pos) {
    ox_ctx_line(c, "CosCacheGather = Gather (cos_cache, position_ids)");
    ox_ctx_line(c, "SinCacheGather = Gather (sin_cache, position_ids)");
  } else {
    ox_ctx_line(c, "CosCacheGather = Identity (cos_cache)");
    ox_ctx_line(c, "SinCacheGather = Identity (sin_cache)");
  }
  ox_ctx_line(c, "RotaryEmbedDimHalf = Div (RotaryEmbedDim, Two1D)");
  ox_ctx_line(c, "RotaryEmbedDimHalfInt = Cast <to = 7> (RotaryEmbedDimHalf)");
  ox_ctx_line(c, "CosCacheSliced = Slice (CosCacheGather, Zero1D, RotaryEmbedDimHalfInt, Two1D)");
  ox_ctx_line(c, "SinCacheSliced = Slice (SinCacheGather, Zero1D, RotaryEmbedDimHalfInt, Two1D)");
  ox_ctx_line(c, "CosCacheUnsqueezed = Unsqueeze (CosCacheSliced, Two1D)");
  ox_ctx_line(c, "SinCacheUnsqueezed = Unsqueeze (SinCacheSliced, Two1D)");
  if (inter) {
    ox_ctx_line(c, "One1D = Constant <value = int64[1] {1}> ()");
    ox_ctx_line(c, "AxesRotaryDim = Constant <value = int64[1] {3}> ()");
    ox_ctx_line(c, "RotaryEmbedDimInclusive = Add (RotaryEmbedDim, One1D)");
    ox_ctx_line(c, "X1 = Slice (XToRotate, Zero1D, RotaryEmbedDim, AxesRotaryDim, Two1D)");
    ox_ctx_line(c, "X2 = Slice (XToRotate, One1D, RotaryEmbedDimInclusive, AxesRotaryDim, Two1D)");
  } else {
    ox_ctx_line(c, "X1, X2 = Split <axis = -1, num_outputs = 2> (XToRotate)");
  }
  ox_ctx_line(c, "CosX1 = Mul (CosCacheUnsqueezed, X1)");
  ox_ctx_line(c, "SinX2 = Mul (SinCacheUnsqueezed, X2)");
  ox_ctx_line(c, "Real = Sub (CosX1, SinX2)");
  ox_ctx_line(c, "SinX1 = Mul (SinCacheUnsqueezed, X1)");
  ox_ctx_line(c, "CosX2 = Mul (CosCacheUnsqueezed, X2)");
  ox_ctx_line(c, "Imaginary = Add (SinX1, CosX2)");
  if (inter) {
    ox_ctx_line(c, "RealInterleave = Unsqueeze (Real, NegOne)");
    ox_ctx_line(c, "ImaginaryInterleave = Unsqueeze (Imaginary, NegOne)");
    ox_ctx_line(c,
                "XRotatedInterleavedConcat = Concat <axis = -1> (RealInterleave, "
                "ImaginaryInterleave)");
    ox_ctx_line(c, "XRotatedShape = Shape (XToRotate)");
    ox_ctx_line(c, "XRotated = Reshape (XRotatedInterleavedConcat, XRotatedShape)");
  } else {
    ox_ctx_line(c, "XRotated = Concat <axis = -1> (Real, Imaginary)");
  }
  ox_ctx_line(c, "XConcat = Concat <axis = -1> (XRotated, XNoRotate)");
  if (heads > 0)
    ox_ctx_line(c, "YTransposed = Identity (XConcat)");
  else
    ox_ctx_line(c, "YTransposed = Transpose <perm = [0, 2, 1, 3]> (XConcat)");
  ox_ctx_line(c, "XShape = Shape (X)");
  ox_ctx_line(c, "Y = Reshape (YTransposed, XShape)");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ SequenceMap */

/* The body graph runs in a Loop over the positions of input_sequence: each
 * sequence input gives its element at the position (SequenceAt), each tensor
 * input is passed whole, and every body output is appended to its output
 * sequence (SequenceInsert into a loop-carried sequence, first empty). The
 * formal inputs are input_sequence, additional_inputs_1.. and the outputs
 * out_sequence_0.. (the op's variadic formals, one per actual). */
int ox_ctx_sequencemap(bctx *c) {
  const ox_attr *ba = ox_node_attr(c->node, "body");
  const ox_graph *g = ba ? ba->g : NULL;
  size_t nin = c->node->n_input, nout = c->node->n_output;
  if (!g || g->n_input != nin || g->n_output != nout || nin == 0) return OX_CTX_BAD_NODE;
  for (size_t k = 1; k < nin; k++)
    if (!c->types || k >= c->n_inputs || !c->types[k]) return OX_CTX_NEED_TYPES;
  for (size_t k = 0; k < nout; k++) {
    const ox_type *t = g->output[k].type;
    if (!t || !t->has_elem_type) return OX_CTX_NEED_TYPES;
  }
  ox_buf_printf(c->out, "<\n  domain: \"\",\n  opset_import: [\"\" : %" PRId64 "]\n>\n", c->opset);
  ox_buf_puts(c->out, "SequenceMap (input_sequence");
  for (size_t k = 1; k < nin; k++) ox_buf_printf(c->out, ", additional_inputs_%zu", k);
  ox_buf_puts(c->out, ") => (");
  for (size_t k = 0; k < nout; k++) ox_buf_printf(c->out, "%sout_sequence_%zu", k ? ", " : "", k);
  ox_buf_puts(c->out, ")\n{\n");
  ox_ctx_line(c, "seqlen = SequenceLength (input_sequence)");
  ox_ctx_line(c, "cond = Constant <value = bool {1}> ()");
  for (size_t k = 0; k < nout; k++)
    ox_ctx_line(c, "out_sequence_%zu_seqempty = SequenceEmpty <dtype = %d> ()", k,
                (int)g->output[k].type->elem_type);
  ox_buf_puts(c->out, "   ");
  for (size_t k = 0; k < nout; k++) ox_buf_printf(c->out, "%sout_sequence_%zu", k ? ", " : "", k);
  ox_buf_puts(c->out, " = Loop (seqlen, cond");
  for (size_t k = 0; k < nout; k++) ox_buf_printf(c->out, ", out_sequence_%zu_seqempty", k);
  ox_buf_puts(c->out, ") <body = loop_body (int64 loop_iter, bool loop_cond_in");
  for (size_t k = 0; k < nout; k++) ox_buf_printf(c->out, ", loop_out_%zu_in", k);
  ox_buf_puts(c->out, ") => (loop_cond_out");
  for (size_t k = 0; k < nout; k++) ox_buf_printf(c->out, ", loop_out_%zu_out", k);
  ox_buf_puts(c->out, ") {\n");
  ox_ctx_line(c, "   loop_cond_out = Identity (loop_cond_in)");
  for (size_t k = 0; k < nin; k++) {
    char formal[48];
    if (k == 0)
      snprintf(formal, sizeof formal, "input_sequence");
    else
      snprintf(formal, sizeof formal, "additional_inputs_%zu", k);
    if (k == 0 || c->types[k]->kind == OX_TYPE_SEQUENCE)
      ox_ctx_line(c, "   %s = SequenceAt (%s, loop_iter)", g->input[k].name, formal);
    else
      ox_ctx_line(c, "   %s = Identity (%s)", g->input[k].name, formal);
  }
  if (ox_ctx_graph_nodes(c, g)) return OX_CTX_BAD_NODE;
  for (size_t k = 0; k < nout; k++)
    ox_ctx_line(c, "   loop_out_%zu_out = SequenceInsert (loop_out_%zu_in, %s)", k, k,
                g->output[k].name);
  ox_ctx_line(c, "}>");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ CausalConvWithState */

/* A depthwise convolution (group = channels, from the input's type) over the
 * input preceded by the carried state (zeros without one); the new state is
 * the last kernel_size - 1 positions of that padded input. */
int ox_ctx_causalconv(bctx *c) {
  const ox_type *t = c->types && c->n_inputs > 0 ? c->types[0] : NULL;
  if (!t || !t->shape || t->shape->n_dim < 2 || !t->shape->dim[1].has_value)
    return OX_CTX_NEED_TYPES;
  int64_t channels = t->shape->dim[1].value;
  const char *act = ox_node_attr_str(c->node, "activation", "none");
  bool silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
  if (!silu && strcmp(act, "none") != 0) return OX_CTX_BAD_NODE;
  ox_ctx_header(c, 27);
  ox_ctx_line(c, "One1D = Constant <value = int64[1] {1}> ()");
  ox_ctx_line(c, "KernelSize = Shape <start = 2, end = 3> (weight)");
  ox_ctx_line(c, "Km1 = Sub (KernelSize, One1D)");
  if (ox_ctx_has_in(c, 3)) {
    ox_ctx_line(c, "PaddedInput = Concat <axis = 2> (past_state, input)");
  } else {
    ox_ctx_line(c, "BatchDim = Shape <start = 0, end = 1> (input)");
    ox_ctx_line(c, "ChannelDim = Shape <start = 1, end = 2> (input)");
    ox_ctx_line(c, "ZeroPadShape = Concat <axis = 0> (BatchDim, ChannelDim, Km1)");
    ox_ctx_line(c, "ZeroPad = ConstantOfShape (ZeroPadShape)");
    ox_ctx_line(c, "ZeroPadCast = CastLike (ZeroPad, input)");
    ox_ctx_line(c, "PaddedInput = Concat <axis = 2> (ZeroPadCast, input)");
  }
  ox_ctx_line(c, "ConvOut = Conv <group = %" PRId64 "> (PaddedInput, weight%s)", channels,
              ox_ctx_has_in(c, 2) ? ", bias" : "");
  if (silu) {
    ox_ctx_line(c, "ConvOutFloat = Cast <to = 1> (ConvOut)");
    ox_ctx_line(c, "ConvSigmoid = Sigmoid (ConvOutFloat)");
    ox_ctx_line(c, "MulOutFloat = Mul (ConvOutFloat, ConvSigmoid)");
    ox_ctx_line(c, "output = CastLike (MulOutFloat, ConvOut)");
  } else {
    ox_ctx_line(c, "output = Identity (ConvOut)");
  }
  ox_ctx_line(c, "PadLen = Shape <start = 2, end = 3> (PaddedInput)");
  ox_ctx_line(c, "StartIdx = Sub (PadLen, Km1)");
  ox_ctx_line(c, "SliceAxes = Constant <value = int64[1] {2}> ()");
  ox_ctx_line(c, "present_state = Slice (PaddedInput, StartIdx, PadLen, SliceAxes)");
  return OX_CTX_OK;
}
