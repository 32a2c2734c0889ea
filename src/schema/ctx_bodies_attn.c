/* ctx_bodies_attn.c - the context-dependent body of Attention (see
 * ctx_bodies.c): scaled dot-product attention over 4D (batch, heads, seq,
 * head) tensors, with 3D inputs reshaped from (batch, seq, heads*head) by the
 * q_num_heads / kv_num_heads attributes; the key/value caches are
 * concatenated in front; grouped-query attention repeats each KV head; the
 * bias is the mask (boolean: 0 / -inf; from opset 24 padded with -inf to the
 * total KV length), plus the causal triangle and (opset 25) the sliding
 * window around each query's absolute position, plus (opset 24) the padding of
 * nonpad_kv_seqlen; softcap, softmax in softmax_precision, rows masked
 * everywhere give zeros; qk_matmul_output takes the stage that
 * qk_matmul_output_mode names. */
#include <inttypes.h>
#include <string.h>

#include "ctx_bodies.h"

int ox_ctx_attention(bctx *c) {
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  bool v24 = c->opset >= 24;
  bool mask = ox_ctx_has_in(c, 3), past = ox_ctx_has_in(c, 4) && ox_ctx_has_in(c, 5);
  bool nonpad = v24 && ox_ctx_has_in(c, 6);
  bool mask_bool = mask && ox_ctx_in_dtype(c, 3) == OX_BOOL;
  if (mask && !ox_ctx_in_dtype(c, 3)) return OX_CTX_NEED_TYPES;
  int64_t qh = ox_ctx_int(c, "q_num_heads", 0), kvh = ox_ctx_int(c, "kv_num_heads", 0);
  bool in3d = qh > 0 && kvh > 0;
  bool causal = ox_ctx_int(c, "is_causal", 0) != 0;
  int64_t mode = ox_ctx_int(c, "qk_matmul_output_mode", 0);
  int64_t sp = ox_ctx_int(c, "softmax_precision", t);
  const ox_attr *scale = ox_node_attr(c->node, "scale"),
                *softcap = ox_node_attr(c->node, "softcap");
  bool capped = softcap && softcap->f != 0.0f;
  int64_t lwin = ox_ctx_int(c, "left_window_size", -1),
          rwin = ox_ctx_int(c, "right_window_size", -1);
  char fb[40];
  ox_ctx_header(c, c->opset >= 25 ? 25 : c->opset >= 24 ? 24 : 23);
  ox_ctx_line(c, "BatchSize = Shape <start = 0, end = 1> (Q)");
  ox_ctx_line(c, "QSeqLen = Shape <start = -2, end = -1> (Q)");
  ox_ctx_line(c, "KVSeqLen = Shape <start = -2, end = -1> (K)");
  ox_ctx_line(c, "Zero1D = Constant <value = int64[1] {0}> ()");
  ox_ctx_line(c, "One1D = Constant <value = int64[1] {1}> ()");
  ox_ctx_line(c, "NegOne = Constant <value = int64[1] {-1}> ()");
  if (in3d) {
    ox_ctx_line(c, "QNumHeadsAttr = Constant <value = int64[1] {%" PRId64 "}> ()", qh);
    ox_ctx_line(c, "KVNumHeadsAttr = Constant <value = int64[1] {%" PRId64 "}> ()", kvh);
    ox_ctx_line(c,
                "QIntermediateShape = Concat <axis = 0> (BatchSize, QSeqLen, QNumHeadsAttr, "
                "NegOne)");
    ox_ctx_line(c,
                "KVIntermediateShape = Concat <axis = 0> (BatchSize, KVSeqLen, "
                "KVNumHeadsAttr, NegOne)");
    ox_ctx_line(c, "QIntermediate = Reshape (Q, QIntermediateShape)");
    ox_ctx_line(c, "KIntermediate = Reshape (K, KVIntermediateShape)");
    ox_ctx_line(c, "VIntermediate = Reshape (V, KVIntermediateShape)");
    ox_ctx_line(c, "QReshaped = Transpose <perm = [0, 2, 1, 3]> (QIntermediate)");
    ox_ctx_line(c, "KReshaped = Transpose <perm = [0, 2, 1, 3]> (KIntermediate)");
    ox_ctx_line(c, "VReshaped = Transpose <perm = [0, 2, 1, 3]> (VIntermediate)");
  } else {
    ox_ctx_line(c, "QReshaped = Identity (Q)");
    ox_ctx_line(c, "KReshaped = Identity (K)");
    ox_ctx_line(c, "VReshaped = Identity (V)");
  }
  ox_ctx_line(c, "QNumHeads = Shape <start = 1, end = 2> (QReshaped)");
  ox_ctx_line(c, "KVNumHeads = Shape <start = 1, end = 2> (KReshaped)");
  ox_ctx_line(c, "QKHeadSize = Shape <start = 3, end = 4> (QReshaped)");
  ox_ctx_line(c, "QKHeadSizeF = Cast <to = 1> (QKHeadSize)");
  ox_ctx_line(c, "VHeadSize = Shape <start = 3, end = 4> (VReshaped)");
  /* the scale, applied as its square root to both Q and K */
  if (scale) {
    ox_ctx_line(c, "ScaleFactor = Constant <value = float {%s}> ()",
                ox_ctx_f(fb, sizeof fb, scale->f));
  } else {
    ox_ctx_line(c, "SqrtHeadSize = Sqrt (QKHeadSizeF)");
    ox_ctx_line(c, "One1DF = Constant <value = float[1] {1.0}> ()");
    ox_ctx_line(c, "ScaleFactor = Div (One1DF, SqrtHeadSize)");
  }
  ox_ctx_line(c, "ScaleFactorSqrt = Sqrt (ScaleFactor)");
  ox_ctx_line(c, "ScaleFactorF = Cast <to = %d> (ScaleFactorSqrt)", (int)t);
  /* caches */
  if (past) {
    ox_ctx_line(c, "PresentKey = Concat <axis = 2> (past_key, KReshaped)");
    ox_ctx_line(c, "PastKVSeqLen = Shape <start = -2, end = -1> (past_key)");
    ox_ctx_line(c, "PresentValue = Concat <axis = 2> (past_value, VReshaped)");
  } else {
    ox_ctx_line(c, "PresentKey = Identity (KReshaped)");
    ox_ctx_line(c, "PastKVSeqLen = Constant <value = int64[1] {0}> ()");
    ox_ctx_line(c, "PresentValue = Identity (VReshaped)");
  }
  if (ox_ctx_has_out(c, 1)) ox_ctx_line(c, "present_key = Identity (PresentKey)");
  if (ox_ctx_has_out(c, 2)) ox_ctx_line(c, "present_value = Identity (PresentValue)");
  /* the additive bias */
  ox_ctx_line(c, "NewKVSeqLen = Shape <start = -2, end = -1> (PresentKey)");
  ox_ctx_line(c, "AttnBiasShape = Concat <axis = 0> (QSeqLen, NewKVSeqLen)");
  ox_ctx_line(c, "FloatNegInf = Constant <value = float[1] {-inf}> ()");
  ox_ctx_line(c, "ScalarZero = Constant <value = float[1] {0.0}> ()");
  if (mask) {
    if (mask_bool)
      ox_ctx_line(c, "AttnBiasShort = Where (attn_mask, ScalarZero, FloatNegInf)");
    else
      ox_ctx_line(c, "AttnBiasShort = Identity (attn_mask)");
    if (v24) {
      ox_ctx_line(c, "MaskKVSeqLen = Shape <start = -1> (attn_mask)");
      ox_ctx_line(c, "PaddingKVSeqLen = Sub (NewKVSeqLen, MaskKVSeqLen)");
      ox_ctx_line(c, "Pads = Concat <axis = 0> (Zero1D, PaddingKVSeqLen)");
      ox_ctx_line(c, "FloatNegInfCast = CastLike (FloatNegInf, AttnBiasShort)");
      ox_ctx_line(c, "AttnBias = Pad (AttnBiasShort, Pads, FloatNegInfCast, NegOne)");
    } else {
      ox_ctx_line(c, "AttnBias = Identity (AttnBiasShort)");
    }
  } else {
    ox_ctx_line(c, "AttnBias = ConstantOfShape (AttnBiasShape)");
  }
  if (causal || lwin >= 0 || rwin >= 0) {
    /* the absolute position of each query row against each key column */
    ox_ctx_line(c, "ZeroNoDim = Squeeze (Zero1D, Zero1D)");
    ox_ctx_line(c, "OneNoDim = Squeeze (One1D, Zero1D)");
    ox_ctx_line(c, "SequenceLength = Gather (AttnBiasShape, ZeroNoDim)");
    ox_ctx_line(c, "TotalSequenceLength = Gather (AttnBiasShape, OneNoDim)");
    ox_ctx_line(c, "RangeRow = Range (ZeroNoDim, SequenceLength, OneNoDim)");
    ox_ctx_line(c, "RangeRow2D = Unsqueeze (RangeRow, One1D)");
    ox_ctx_line(c, "RangeCol = Range (ZeroNoDim, TotalSequenceLength, OneNoDim)");
    ox_ctx_line(c, "RangeCol2D = Unsqueeze (RangeCol, Zero1D)");
    const char *row = "RangeRow2DPast", *col = "RangeCol2D";
    if (nonpad) {
      /* the query rows sit at the end of each batch's valid keys */
      ox_ctx_line(c, "CausalOffsetPerBatch = Sub (nonpad_kv_seqlen, QSeqLen)");
      ox_ctx_line(c, "Axes01 = Constant <value = int64[2] {0, 1}> ()");
      ox_ctx_line(c, "Axes123 = Constant <value = int64[3] {1, 2, 3}> ()");
      ox_ctx_line(c, "RangeRow4D = Unsqueeze (RangeRow2D, Axes01)");
      ox_ctx_line(c, "RangeCol4D = Unsqueeze (RangeCol2D, Axes01)");
      ox_ctx_line(c, "OffsetB4D = Unsqueeze (CausalOffsetPerBatch, Axes123)");
      ox_ctx_line(c, "RowPlusOff = Add (RangeRow4D, OffsetB4D)");
      row = "RowPlusOff";
      col = "RangeCol4D";
    } else {
      ox_ctx_line(c, "RangeRow2DPast = Add (RangeRow2D, PastKVSeqLen)");
    }
    /* masked: future keys (causal), keys beyond the left / right window */
    const char *bad = NULL;
    if (causal) {
      ox_ctx_line(c, "BoolMaskTri = Less (%s, %s)", row, col);
      bad = "BoolMaskTri";
    }
    if (lwin >= 0) {
      ox_ctx_line(c, "LeftWindow = Constant <value = int64[1] {%" PRId64 "}> ()", lwin);
      ox_ctx_line(c, "LeftBound = Sub (%s, LeftWindow)", row);
      ox_ctx_line(c, "LeftOut = Less (%s, LeftBound)", col);
      if (bad) ox_ctx_line(c, "LeftOrMask = Or (%s, LeftOut)", bad);
      bad = bad ? "LeftOrMask" : "LeftOut";
    }
    if (rwin >= 0) {
      ox_ctx_line(c, "RightWindow = Constant <value = int64[1] {%" PRId64 "}> ()", rwin);
      ox_ctx_line(c, "RightBound = Add (%s, RightWindow)", row);
      ox_ctx_line(c, "RightOut = Greater (%s, RightBound)", col);
      if (bad) ox_ctx_line(c, "RightOrMask = Or (%s, RightOut)", bad);
      bad = bad ? "RightOrMask" : "RightOut";
    }
    ox_ctx_line(c, "MaskTri = Where (%s, FloatNegInf, ScalarZero)", bad);
    ox_ctx_line(c, "AttnBiasCausalOrNot = Add (AttnBias, MaskTri)");
  } else {
    ox_ctx_line(c, "AttnBiasCausalOrNot = Identity (AttnBias)");
  }
  if (nonpad) {
    ox_ctx_line(c, "KVSeqLenExpanded = Unsqueeze (nonpad_kv_seqlen, One1D)");
    ox_ctx_line(c, "KVSeqLen0D = Squeeze (KVSeqLen)");
    ox_ctx_line(c, "Zero0D = Constant <value = int64 {0}> ()");
    ox_ctx_line(c, "One0D = Constant <value = int64 {1}> ()");
    ox_ctx_line(c, "Range = Range (Zero0D, KVSeqLen0D, One0D)");
    ox_ctx_line(c, "PaddingMaskBool = Less (Range, KVSeqLenExpanded)");
    ox_ctx_line(c, "PaddingMaskFloat = Where (PaddingMaskBool, ScalarZero, FloatNegInf)");
    ox_ctx_line(c, "PaddingMask3D = Unsqueeze (PaddingMaskFloat, One1D)");
    ox_ctx_line(c, "PaddingMask4D = Unsqueeze (PaddingMask3D, One1D)");
    ox_ctx_line(c, "AttnBiasCausalPad = Add (AttnBiasCausalOrNot, PaddingMask4D)");
  } else {
    ox_ctx_line(c, "AttnBiasCausalPad = Identity (AttnBiasCausalOrNot)");
  }
  ox_ctx_line(c, "AttnBiasT = Cast <to = %d> (AttnBiasCausalPad)", (int)t);
  /* grouped-query attention: each KV head serves QNumHeads / KVNumHeads query heads */
  ox_ctx_line(c, "NGQACond1 = Equal (QNumHeads, KVNumHeads)");
  ox_ctx_line(c, "GQACond1 = Not (NGQACond1)");
  ox_ctx_line(c, "DivNumHeads = Div (QNumHeads, KVNumHeads)");
  ox_ctx_line(c, "IDivNumHeads = Cast <to = 7> (DivNumHeads)");
  ox_ctx_line(c, "RemainderNumHeads = Mod (QNumHeads, KVNumHeads)");
  ox_ctx_line(c, "GQACond2 = Equal (RemainderNumHeads, Zero1D)");
  ox_ctx_line(c, "GQACond = And (GQACond1, GQACond2)");
  ox_ctx_line(c, "InterleaveDim = Where (GQACond, IDivNumHeads, One1D)");
  ox_ctx_line(c, "Two1D = Constant <value = int64[1] {2}> ()");
  ox_ctx_line(c, "KUnsqueezed = Unsqueeze (PresentKey, Two1D)");
  ox_ctx_line(c, "VUnsqueezed = Unsqueeze (PresentValue, Two1D)");
  ox_ctx_line(c,
              "KExpandShape = Concat <axis = 0> (BatchSize, KVNumHeads, InterleaveDim, "
              "NewKVSeqLen, QKHeadSize)");
  ox_ctx_line(c, "KExpanded = Expand (KUnsqueezed, KExpandShape)");
  ox_ctx_line(c,
              "VExpandShape = Concat <axis = 0> (BatchSize, KVNumHeads, InterleaveDim, "
              "NewKVSeqLen, VHeadSize)");
  ox_ctx_line(c, "VExpanded = Expand (VUnsqueezed, VExpandShape)");
  ox_ctx_line(c,
              "KAttentionShape = Concat <axis = 0> (BatchSize, QNumHeads, NewKVSeqLen, "
              "QKHeadSize)");
  ox_ctx_line(c,
              "VAttentionShape = Concat <axis = 0> (BatchSize, QNumHeads, NewKVSeqLen, "
              "VHeadSize)");
  ox_ctx_line(c, "KAttentionInput = Reshape (KExpanded, KAttentionShape)");
  ox_ctx_line(c, "VAttentionInput = Reshape (VExpanded, VAttentionShape)");
  /* scores */
  ox_ctx_line(c, "KTranspose = Transpose <perm = [0, 1, 3, 2]> (KAttentionInput)");
  ox_ctx_line(c, "QScaled = Mul (QReshaped, ScaleFactorF)");
  ox_ctx_line(c, "KScaled = Mul (KTranspose, ScaleFactorF)");
  ox_ctx_line(c, "QKAttnWeight = MatMul (QScaled, KScaled)");
  ox_ctx_line(c, "QKAttnCast = Cast <to = %d> (QKAttnWeight)", (int)t);
  const char *capped_scores = "QKAttnCast";
  if (capped) {
    ox_ctx_line(c, "Softcap = Constant <value = float[1] {%s}> ()",
                ox_ctx_f(fb, sizeof fb, softcap->f));
    ox_ctx_line(c, "SoftcapF = Cast <to = %d> (Softcap)", (int)t);
    ox_ctx_line(c, "SoftcapDiv = Div (QKAttnCast, SoftcapF)");
    ox_ctx_line(c, "SoftcapTanh = Tanh (SoftcapDiv)");
    ox_ctx_line(c, "QKAttnSoftcapped = Mul (SoftcapTanh, SoftcapF)");
    capped_scores = "QKAttnSoftcapped";
  }
  ox_ctx_line(c, "QKAttnWeightSoftcap = Add (%s, AttnBiasT)", capped_scores);
  ox_ctx_line(c, "SoftmaxCast = Cast <to = %" PRId64 "> (QKAttnWeightSoftcap)", sp);
  ox_ctx_line(c, "AttnWeightSoftmax = Softmax (SoftmaxCast)");
  ox_ctx_line(c, "SoftmaxOut = Cast <to = %d> (AttnWeightSoftmax)", (int)t);
  /* rows whose keys are all masked: zero weights instead of NaN */
  ox_ctx_line(c, "BiasRowMax = ReduceMax (AttnBiasT, NegOne)");
  ox_ctx_line(c, "FloatNegInfT = CastLike (FloatNegInf, AttnBiasT)");
  ox_ctx_line(c, "RowAllMasked = Equal (BiasRowMax, FloatNegInfT)");
  ox_ctx_line(c, "ZeroProbT = CastLike (ScalarZero, SoftmaxOut)");
  ox_ctx_line(c, "SoftmaxOutSafe = Where (RowAllMasked, ZeroProbT, SoftmaxOut)");
  ox_ctx_line(c, "YPreReshape = MatMul (SoftmaxOutSafe, VAttentionInput)");
  if (in3d) {
    ox_ctx_line(c, "YTranspose = Transpose <perm = [0, 2, 1, 3]> (YPreReshape)");
    ox_ctx_line(c, "YNewShape = Concat <axis = 0> (Zero1D, Zero1D, NegOne)");
    ox_ctx_line(c, "Y = Reshape (YTranspose, YNewShape)");
  } else {
    ox_ctx_line(c, "Y = Identity (YPreReshape)");
  }
  if (ox_ctx_has_out(c, 3)) {
    static const char *const stage[] = {"QKAttnWeight", NULL, "QKAttnWeightSoftcap",
                                        "SoftmaxOutSafe"};
    if (mode < 0 || mode > 3) return OX_CTX_BAD_NODE;
    ox_ctx_line(c, "qk_matmul_output = Identity (%s)", mode == 1 ? capped_scores : stage[mode]);
  }
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ LinearAttention */

/* A Scan over time steps of the per-head state (batch, kv_heads, dk, dv),
 * computed in float: "gated" rules first decay the state by exp(decay_t),
 * "delta" rules write beta_t * (v_t - state^T k_t) instead of v_t; the read
 * is scale * q_t state, each KV head's state serving q_heads / kv_heads query
 * heads. */
int ox_ctx_linearattention(bctx *c) {
  int64_t qh = ox_ctx_int(c, "q_num_heads", 0), kvh = ox_ctx_int(c, "kv_num_heads", 0);
  if (qh <= 0 || kvh <= 0 || qh % kvh) return OX_CTX_BAD_NODE;
  const char *rule = ox_node_attr_str(c->node, "update_rule", "gated_delta");
  bool gated = strcmp(rule, "gated") == 0 || strcmp(rule, "gated_delta") == 0;
  bool delta = strcmp(rule, "delta") == 0 || strcmp(rule, "gated_delta") == 0;
  if (!gated && !delta && strcmp(rule, "linear") != 0) return OX_CTX_BAD_NODE;
  const ox_attr *scale = ox_node_attr(c->node, "scale");
  bool past = ox_ctx_has_in(c, 3), gqa = qh != kvh;
  char fb[40];
  ox_ctx_header(c, 27);
  ox_ctx_line(c, "NegOne1D = Constant <value = int64[1] {-1}> ()");
  ox_ctx_line(c, "One1D = Constant <value = int64[1] {1}> ()");
  ox_ctx_line(c, "HqConst = Constant <value = int64[1] {%" PRId64 "}> ()", qh);
  ox_ctx_line(c, "HkvConst = Constant <value = int64[1] {%" PRId64 "}> ()", kvh);
  ox_ctx_line(c, "BatchDim = Shape <start = 0, end = 1> (query)");
  ox_ctx_line(c, "SeqLenDim = Shape <start = 1, end = 2> (query)");
  ox_ctx_line(c, "QShape4D = Concat <axis = 0> (BatchDim, SeqLenDim, HqConst, NegOne1D)");
  ox_ctx_line(c, "QReshaped = Reshape (query, QShape4D)");
  ox_ctx_line(c, "Q4D = Transpose <perm = [1, 0, 2, 3]> (QReshaped)");
  ox_ctx_line(c, "KVShape4D = Concat <axis = 0> (BatchDim, SeqLenDim, HkvConst, NegOne1D)");
  ox_ctx_line(c, "KReshaped = Reshape (key, KVShape4D)");
  ox_ctx_line(c, "K4D = Transpose <perm = [1, 0, 2, 3]> (KReshaped)");
  ox_ctx_line(c, "VReshaped = Reshape (value, KVShape4D)");
  ox_ctx_line(c, "V4D = Transpose <perm = [1, 0, 2, 3]> (VReshaped)");
  if (gated) {
    ox_ctx_line(c, "DecayReshaped = Reshape (decay, KVShape4D)");
    ox_ctx_line(c, "Decay4D = Transpose <perm = [1, 0, 2, 3]> (DecayReshaped)");
  }
  if (delta) {
    ox_ctx_line(c, "BetaShape4D = Concat <axis = 0> (BatchDim, SeqLenDim, NegOne1D, One1D)");
    ox_ctx_line(c, "BetaReshaped = Reshape (beta, BetaShape4D)");
    ox_ctx_line(c, "Beta4D = Transpose <perm = [1, 0, 2, 3]> (BetaReshaped)");
  }
  ox_ctx_line(c, "QLastDim = Shape <start = 2, end = 3> (query)");
  ox_ctx_line(c, "VLastDim = Shape <start = 2, end = 3> (value)");
  ox_ctx_line(c, "DkDim = Div (QLastDim, HqConst)");
  ox_ctx_line(c, "DvDim = Div (VLastDim, HkvConst)");
  if (past) {
    ox_ctx_line(c, "State0 = Cast <to = 1> (past_state)");
  } else {
    ox_ctx_line(c, "StateShape = Concat <axis = 0> (BatchDim, HkvConst, DkDim, DvDim)");
    ox_ctx_line(c, "State0 = ConstantOfShape (StateShape)");
  }
  if (scale && scale->f != 0.0f) {
    ox_ctx_line(c, "ScaleFactor = Constant <value = float {%s}> ()",
                ox_ctx_f(fb, sizeof fb, scale->f));
  } else {
    ox_ctx_line(c, "DkScalar = Squeeze (DkDim)");
    ox_ctx_line(c, "DkFloat = Cast <to = 1> (DkScalar)");
    ox_ctx_line(c, "SqrtDk = Sqrt (DkFloat)");
    ox_ctx_line(c, "ScaleFactor = Reciprocal (SqrtDk)");
  }
  ox_ctx_line(c, "NegTwo1D = Constant <value = int64[1] {-2}> ()");
  if (gqa) {
    ox_ctx_line(c, "GroupSize = Constant <value = int64[1] {%" PRId64 "}> ()", qh / kvh);
    ox_ctx_line(c, "Two1D = Constant <value = int64[1] {2}> ()");
    ox_ctx_line(c,
                "StateExpandShape = Concat <axis = 0> (BatchDim, HkvConst, GroupSize, DkDim, "
                "DvDim)");
    ox_ctx_line(c, "StateReadShape = Concat <axis = 0> (BatchDim, HqConst, DkDim, DvDim)");
  }
  ox_ctx_line(c,
              "FinalState, OutputAccum = Scan (State0, Q4D, K4D, V4D%s%s) <num_scan_inputs = "
              "%d, body = linear_attn_step (state_in, q_t, k_t, v_t%s%s) => (state_out, "
              "output_t) {",
              gated ? ", Decay4D" : "", delta ? ", Beta4D" : "", 3 + gated + delta,
              gated ? ", decay_t" : "", delta ? ", beta_t" : "");
  ox_ctx_line(c, "   q_t_f = Cast <to = 1> (q_t)");
  ox_ctx_line(c, "   k_t_f = Cast <to = 1> (k_t)");
  ox_ctx_line(c, "   v_t_f = Cast <to = 1> (v_t)");
  const char *st = "state_in";
  if (gated) {
    ox_ctx_line(c, "   decay_t_f = Cast <to = 1> (decay_t)");
    ox_ctx_line(c, "   DecayExp = Exp (decay_t_f)");
    ox_ctx_line(c, "   DecayExpUnsq = Unsqueeze (DecayExp, NegOne1D)");
    ox_ctx_line(c, "   DecayedState = Mul (state_in, DecayExpUnsq)");
    st = "DecayedState";
  }
  ox_ctx_line(c, "   KtCol = Unsqueeze (k_t_f, NegOne1D)");
  if (delta) {
    ox_ctx_line(c, "   beta_t_f = Cast <to = 1> (beta_t)");
    ox_ctx_line(c, "   StateT = Transpose <perm = [0, 1, 3, 2]> (%s)", st);
    ox_ctx_line(c, "   Retrieved = MatMul (StateT, KtCol)");
    ox_ctx_line(c, "   RetrievedSq = Squeeze (Retrieved, NegOne1D)");
    ox_ctx_line(c, "   Diff = Sub (v_t_f, RetrievedSq)");
    ox_ctx_line(c, "   Delta = Mul (beta_t_f, Diff)");
    ox_ctx_line(c, "   WriteRow = Unsqueeze (Delta, NegTwo1D)");
  } else {
    ox_ctx_line(c, "   WriteRow = Unsqueeze (v_t_f, NegTwo1D)");
  }
  ox_ctx_line(c, "   Outer = MatMul (KtCol, WriteRow)");
  ox_ctx_line(c, "   state_out = Add (%s, Outer)", st);
  if (gqa) {
    ox_ctx_line(c, "   StateUnsq = Unsqueeze (state_out, Two1D)");
    ox_ctx_line(c, "   StateExpanded = Expand (StateUnsq, StateExpandShape)");
    ox_ctx_line(c, "   StateForRead = Reshape (StateExpanded, StateReadShape)");
  }
  ox_ctx_line(c, "   QtRow = Unsqueeze (q_t_f, NegTwo1D)");
  ox_ctx_line(c, "   ReadOut = MatMul (QtRow, %s)", gqa ? "StateForRead" : "state_out");
  ox_ctx_line(c, "   ReadSq = Squeeze (ReadOut, NegTwo1D)");
  ox_ctx_line(c, "   output_t_f = Mul (ScaleFactor, ReadSq)");
  ox_ctx_line(c, "   output_t = CastLike (output_t_f, q_t)");
  ox_ctx_line(c, "}>");
  ox_ctx_line(c, "OutputTransposed = Transpose <perm = [1, 0, 2, 3]> (OutputAccum)");
  ox_ctx_line(c, "OutputShape3D = Concat <axis = 0> (BatchDim, SeqLenDim, NegOne1D)");
  ox_ctx_line(c, "output = Reshape (OutputTransposed, OutputShape3D)");
  ox_ctx_line(c, "present_state = CastLike (FinalState, %s)", past ? "past_state" : "query");
  return OX_CTX_OK;
}

/* ------------------------------------------------------------ FlexAttention */

/* Attention over 4D inputs with KV heads repeated to the query heads; the
 * scores (in softmax_precision: float for 16-bit types unless given) go
 * through the score_mod graph before the softmax over the keys, the
 * probabilities through prob_mod; the mods' nodes are inlined, their input
 * bound to the stage and their output read back. */
static int flex_mod(bctx *c, const char *attr, const char *in, const char *out) {
  const ox_attr *a = ox_node_attr(c->node, attr);
  if (!a || !a->g) {
    ox_ctx_line(c, "%s = Identity (%s)", out, in);
    return 0;
  }
  const ox_graph *g = a->g;
  if (g->n_input != 1 || g->n_output != 1) return -1;
  ox_ctx_line(c, "%s = Identity (%s)", g->input[0].name, in);
  if (ox_ctx_graph_nodes(c, g)) return -1;
  ox_ctx_line(c, "%s = Identity (%s)", out, g->output[0].name);
  return 0;
}

int ox_ctx_flexattention(bctx *c) {
  int32_t t = ox_ctx_in_dtype(c, 0);
  if (!t) return OX_CTX_NEED_TYPES;
  int64_t sp =
      ox_ctx_int(c, "softmax_precision", t == OX_FLOAT16 || t == OX_BFLOAT16 ? OX_FLOAT : t);
  const ox_attr *scale = ox_node_attr(c->node, "scale");
  char fb[40];
  ox_ctx_header(c, 1);
  ox_ctx_line(c, "BatchSize = Shape <start = 0, end = 1> (Q)");
  ox_ctx_line(c, "KVSeqLen = Shape <start = -2, end = -1> (K)");
  ox_ctx_line(c, "QNumHeads = Shape <start = 1, end = 2> (Q)");
  ox_ctx_line(c, "KVNumHeads = Shape <start = 1, end = 2> (K)");
  ox_ctx_line(c, "KVRepeat = Div (QNumHeads, KVNumHeads)");
  ox_ctx_line(c, "Axis2 = Constant <value = int64[1] {2}> ()");
  static const char *const kv[] = {"K", "V"};
  for (int i = 0; i < 2; i++) {
    const char *x = kv[i];
    ox_ctx_line(c, "%sUnsqueezed = Unsqueeze (%s, Axis2)", x, x);
    ox_ctx_line(c, "%sHeadSize1D = Shape <start = 3, end = 4> (%s)", x, x);
    ox_ctx_line(c,
                "%sExpandShape = Concat <axis = 0> (BatchSize, KVNumHeads, KVRepeat, "
                "KVSeqLen, %sHeadSize1D)",
                x, x);
    ox_ctx_line(c, "%sExpanded = Expand (%sUnsqueezed, %sExpandShape)", x, x, x);
    ox_ctx_line(c,
                "%sAlignedShape = Concat <axis = 0> (BatchSize, QNumHeads, KVSeqLen, "
                "%sHeadSize1D)",
                x, x);
    ox_ctx_line(c, "%sAligned = Reshape (%sExpanded, %sAlignedShape)", x, x, x);
  }
  if (scale) {
    ox_ctx_line(c, "ScaleFactorF32 = Constant <value = float {%s}> ()",
                ox_ctx_f(fb, sizeof fb, scale->f));
  } else {
    ox_ctx_line(c, "QShapeAll = Shape (Q)");
    ox_ctx_line(c, "Idx3Head = Constant <value = int64 {3}> ()");
    ox_ctx_line(c, "QKHeadSize = Gather <axis = 0> (QShapeAll, Idx3Head)");
    ox_ctx_line(c, "QKHeadSizeF = Cast <to = 1> (QKHeadSize)");
    ox_ctx_line(c, "SqrtHeadSize = Sqrt (QKHeadSizeF)");
    ox_ctx_line(c, "OneF = Constant <value = float {1.0}> ()");
    ox_ctx_line(c, "ScaleFactorF32 = Div (OneF, SqrtHeadSize)");
  }
  ox_ctx_line(c, "ScaleFactorSqrtF32 = Sqrt (ScaleFactorF32)");
  ox_ctx_line(c, "ScaleFactorSqrt = Cast <to = %d> (ScaleFactorSqrtF32)", (int)t);
  ox_ctx_line(c, "QScaled = Mul (Q, ScaleFactorSqrt)");
  ox_ctx_line(c, "KScaled = Mul (KAligned, ScaleFactorSqrt)");
  ox_ctx_line(c, "KTranspose = Transpose <perm = [0, 1, 3, 2]> (KScaled)");
  ox_ctx_line(c, "Score = MatMul (QScaled, KTranspose)");
  ox_ctx_line(c, "SoftmaxCast = Cast <to = %" PRId64 "> (Score)", sp);
  if (flex_mod(c, "score_mod", "SoftmaxCast", "ScoreAfterScoreMod")) return OX_CTX_BAD_NODE;
  ox_ctx_line(c, "Prob = Softmax <axis = 3> (ScoreAfterScoreMod)");
  if (flex_mod(c, "prob_mod", "Prob", "ProbAfterProbMod")) return OX_CTX_BAD_NODE;
  if (sp == t) {
    ox_ctx_line(c, "Y = MatMul (ProbAfterProbMod, VAligned)");
  } else {
    ox_ctx_line(c, "VSp = Cast <to = %" PRId64 "> (VAligned)", sp);
    ox_ctx_line(c, "YSp = MatMul (ProbAfterProbMod, VSp)");
    ox_ctx_line(c, "Y = Cast <to = %d> (YSp)", (int)t);
  }
  return OX_CTX_OK;
}
