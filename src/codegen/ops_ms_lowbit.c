/* ops_ms_lowbit.c - C generators of onnxruntime's com.microsoft MatMulNBits and
 * GatherBlockQuantized: the weights stay packed in the generated file (2, 4 or 8 bits a
 * field, as the model holds them) and are decoded in the loops, so a 4-bit model keeps its
 * size in flash. Semantics as the runtime's kernels (src/ops/contrib/lowbit.c,
 * lowbit_gather.c): no zero point means 2^(bits - 1) for uint8 fields; float zero points
 * are subtracted as floats; g_idx picks each row's group; accuracy_level 4 quantizes one or
 * two rows of A to int8 per block (scale max|a| / 127, ties to even) and sums the products
 * in integers, as the runtime's int8 form does. float16 A, scales, zero points and outputs
 * go through cg_widen.c. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* Writes `int q = field k of B's row n, block b` (fields packed low first). */
static void nb_field(cg_ctx *c, const char *ind, int64_t bits, int64_t kblk, int64_t blob,
                     const char *k_in_block) {
  if (bits == 8)
    cg_printf(c, "%sconst int q = X1[(n * %lld + b) * %lld + %s];\n", ind, (long long)kblk,
              (long long)blob, k_in_block);
  else
    cg_printf(c,
              "%sconst int q = (X1[(n * %lld + b) * %lld + %s / %d] >> (%s %% %d * %lld)) & %d;\n",
              ind, (long long)kblk, (long long)blob, k_in_block, (int)(8 / bits), k_in_block,
              (int)(8 / bits), (long long)bits, (1 << bits) - 1);
}

/* Writes the definition of `z` (float when zf, else int), the zero point of column n and
 * group g (C expression). */
static void nb_zero(cg_ctx *c, const char *ind, const cg_val *Z, int64_t bits, int64_t kblk,
                    const char *g) {
  if (!Z) {
    cg_printf(c, "%sconst int z = %d;\n", ind, 1 << (bits - 1));
  } else if (Z->dtype == OX_UINT8) {
    int64_t zrow = (kblk * bits + 7) / 8;
    cg_printf(c, "%sconst int z = (X3[n * %lld + (%s) * %lld / 8] >> ((%s) * %lld %% 8)) & %d;\n",
              ind, (long long)zrow, g, (long long)bits, g, (long long)bits, (1 << bits) - 1);
  } else {
    cg_printf(c, "%sconst float z = X3[n * %lld + (%s)];\n", ind, (long long)kblk, g);
  }
}

static int gen_matmul_nbits(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  (void)n_out;
  const cg_val *A = in[0], *B = n_in > 1 ? in[1] : NULL, *S = n_in > 2 ? in[2] : NULL;
  const cg_val *Z = n_in > 3 ? in[3] : NULL, *G = n_in > 4 ? in[4] : NULL;
  const cg_val *bias = n_in > 5 ? in[5] : NULL;
  int64_t K = ox_node_attr_int(n, "K", -1), N = ox_node_attr_int(n, "N", -1);
  int64_t bits = ox_node_attr_int(n, "bits", 4), bs = ox_node_attr_int(n, "block_size", -1);
  int64_t level = ox_node_attr_int(n, "accuracy_level", 0);
  if (!B || !S) return cg_fail(c, OX_EMODEL, "A, B and scales are required");
  if (A->dtype != OX_FLOAT || S->dtype != OX_FLOAT)
    return cg_fail(c, OX_EUNSUPPORTED, "A and scales must be float or float16");
  if (K < 1 || N < 1 || (bits != 2 && bits != 4 && bits != 8) || bs < 16 || (bs & (bs - 1)))
    return cg_fail(c, OX_EMODEL, "K, N, bits (2, 4, 8) or block_size (a power of two >= 16)");
  int64_t kblk = (K + bs - 1) / bs, blob = bs * bits / 8;
  if (B->dtype != OX_UINT8 || B->numel != N * kblk * blob || S->numel != N * kblk || A->rank < 1 ||
      A->dims[A->rank - 1] != K)
    return cg_fail(c, OX_EMODEL, "A, B or scales do not fit K %lld, N %lld, block_size %lld",
                   (long long)K, (long long)N, (long long)bs);
  if (Z && (Z->dtype == OX_UINT8 ? Z->numel != N * ((kblk * bits + 7) / 8) : Z->numel != N * kblk))
    return cg_fail(c, OX_EMODEL, "zero_points do not fit N %lld and %lld blocks", (long long)N,
                   (long long)kblk);
  if (bias && bias->numel != N) return cg_fail(c, OX_EMODEL, "bias must have N values");
  /* g_idx: a constant; one that is k / block_size throughout reorders nothing */
  if (G) {
    if (!G->cv || G->dtype != OX_INT32 || G->numel < K)
      return cg_fail(c, OX_EUNSUPPORTED, "g_idx must be a constant int32 [K]");
    const int32_t *gv = G->cv->data;
    bool plain = true;
    for (int64_t k = 0; k < K; k++) {
      if (gv[k] < 0 || gv[k] >= kblk) return cg_fail(c, OX_EMODEL, "g_idx is out of range");
      plain = plain && gv[k] == k / bs;
    }
    if (plain) G = NULL;
  }
  int64_t M = A->numel / K;
  bool zflt = Z && Z->dtype != OX_UINT8;
  /* the runtime's int8 form: accuracy_level 4, one or two rows, integer zero points, no
   * reordering, and 32-bit sums that cannot overflow */
  bool int8 = level == 4 && M <= 2 && !G && !zflt &&
              (double)bs * (double)((1 << bits) - 1) * 127.0 < 2147483647.0;
  cg_printf(c, "  /* MatMulNBits: %lld-bit fields in blocks of %lld along K %lld, N %lld%s */\n",
            (long long)bits, (long long)bs, (long long)K, (long long)N,
            int8 ? ", A quantized to int8 per block (accuracy_level 4)" : "");
  cg_printf(c, "  for (long long m = 0; m < %lld; m++) {\n", (long long)M);
  cg_printf(c, "    const float *a = X0 + m * %lld;\n", (long long)K);
  if (int8) {
    /* each block of the row: aq = round(a * 127 / max|a|), its scale and sum */
    cg_printf(c, "    int8_t aq[%lld];\n    float as[%lld], qs[%lld];\n", (long long)K,
              (long long)kblk, (long long)kblk);
    cg_printf(c, "    for (long long b = 0; b < %lld; b++) {\n", (long long)kblk);
    cg_printf(c, "      const long long k0 = b * %lld, k1 = k0 + %lld < %lld ? k0 + %lld : %lld;\n",
              (long long)bs, (long long)bs, (long long)K, (long long)bs, (long long)K);
    cg_printf(c, "      float amax = 0.0f;\n      for (long long k = k0; k < k1; k++) {\n");
    cg_printf(
        c, "        const float v = fabsf(a[k]);\n        amax = v > amax ? v : amax;\n      }\n");
    cg_printf(c, "      const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;\n");
    cg_printf(c, "      int32_t sum = 0;\n      for (long long k = k0; k < k1; k++) {\n");
    cg_printf(c, "        float v = nearbyintf(a[k] * inv);\n");
    cg_printf(c, "        v = v > 127.0f ? 127.0f : v;\n        v = v < -127.0f ? -127.0f : v;\n");
    cg_printf(c, "        aq[k] = (int8_t)(int32_t)v;\n        sum += (int32_t)v;\n      }\n");
    cg_printf(c, "      as[b] = amax / 127.0f;\n      qs[b] = (float)sum;\n    }\n");
  }
  cg_printf(c, "    for (long long n = 0; n < %lld; n++) {\n      float y = 0.0f;\n", (long long)N);
  if (G) {
    cg_printf(c, "      for (long long k = 0; k < %lld; k++) {\n", (long long)K);
    cg_printf(c, "        const long long b = k / %lld, g = X4[k], kk = k %% %lld;\n",
              (long long)bs, (long long)bs);
    nb_field(c, "        ", bits, kblk, blob, "kk");
    nb_zero(c, "        ", Z, bits, kblk, "g");
    cg_printf(c, "        y += a[k] * (((float)q - (float)z) * X2[n * %lld + g]);\n      }\n",
              (long long)kblk);
  } else {
    cg_printf(c, "      for (long long b = 0; b < %lld; b++) {\n", (long long)kblk);
    cg_printf(c,
              "        const long long k0 = b * %lld, k1 = k0 + %lld < %lld ? k0 + %lld : %lld;\n",
              (long long)bs, (long long)bs, (long long)K, (long long)bs, (long long)K);
    nb_zero(c, "        ", Z, bits, kblk, "b");
    cg_printf(c, "        %s d = 0;\n", int8 ? "int32_t" : "float");
    cg_printf(c, "        for (long long k = k0; k < k1; k++) {\n");
    nb_field(c, "          ", bits, kblk, blob, "(k - k0)");
    if (int8)
      cg_printf(c,
                "          d += (int32_t)aq[k] * q;\n        }\n"
                "        y += X2[n * %lld + b] * as[b] * ((float)d - (float)z * qs[b]);\n",
                (long long)kblk);
    else
      cg_printf(c,
                "          d += a[k] * ((float)q - (float)z);\n        }\n"
                "        y += d * X2[n * %lld + b];\n",
                (long long)kblk);
    cg_printf(c, "      }\n");
  }
  if (bias) cg_printf(c, "      y += X5[n];\n");
  cg_printf(c, "      Y0[m * %lld + n] = y;\n    }\n  }\n", (long long)N);
  (void)out;
  return OX_OK;
}

/* GatherBlockQuantized: Gather along gather_axis of data dequantized in blocks of
 * block_size along quantize_axis; data uint8 (8 / bits fields a byte along its last axis),
 * int4 or uint4. An index outside the table reads row 0 (the runtime fails). */
static int gen_gather_bq(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_out;
  const cg_val *D = in[0], *I = n_in > 1 ? in[1] : NULL, *S = n_in > 2 ? in[2] : NULL;
  const cg_val *Z = n_in > 3 ? in[3] : NULL;
  int64_t ga = ox_node_attr_int(n, "gather_axis", 0), qa = ox_node_attr_int(n, "quantize_axis", 1);
  int64_t bs = ox_node_attr_int(n, "block_size", 128), bits = ox_node_attr_int(n, "bits", 4);
  if (!I || !S) return cg_fail(c, OX_EMODEL, "data, indices and scales are required");
  bool u8 = D->dtype == OX_UINT8;
  if (!u8 && D->dtype != OX_INT4 && D->dtype != OX_UINT4)
    return cg_fail(c, OX_EMODEL, "data must be uint8, int4 or uint4");
  if ((u8 ? bits != 2 && bits != 4 && bits != 8 : bits != 4) || bs < 16 || (bs & (bs - 1)))
    return cg_fail(c, OX_EMODEL, "bits or block_size do not fit data");
  if (S->dtype != OX_FLOAT) return cg_fail(c, OX_EUNSUPPORTED, "scales must be float or float16");
  if (I->dtype != OX_INT64 && I->dtype != OX_INT32)
    return cg_fail(c, OX_EMODEL, "indices must be int32 or int64");
  size_t r = D->rank, g, q;
  if (!cg_axis(ga, r, &g) || !cg_axis(qa, r, &q) || (u8 && (g != 0 || q != r - 1)))
    return cg_fail(c, OX_EMODEL, "gather_axis or quantize_axis is out of range for data");
  int comp = u8 ? (int)(8 / bits) : 1;
  int64_t ld[CG_MAX_RANK];
  for (size_t i = 0; i < r; i++) ld[i] = D->dims[i];
  if (q == r - 1) ld[r - 1] *= comp;
  int64_t nb = (ld[q] + bs - 1) / bs, outer = 1, inner = 1, qst = 1;
  for (size_t i = 0; i < g; i++) outer *= ld[i];
  for (size_t i = g + 1; i < r; i++) inner *= ld[i];
  for (size_t i = q + 1; i < r; i++) qst *= ld[i];
  int64_t Gn = ld[g], Dq = ld[q], ni = I->numel, nsc = S->numel;
  if (nsc != outer * Gn * inner / Dq * nb)
    return cg_fail(c, OX_EMODEL, "scales do not hold %lld blocks along quantize_axis",
                   (long long)nb);
  int mask = (1 << bits) - 1, dflt = u8 ? 1 << (bits - 1) : 0;
  const char *field =
      u8 ? (comp == 1 ? "X0[el]"
                      : ox_arena_printf(c->a, "(X0[el / %d] >> (el %% %d * %lld)) & %d", comp, comp,
                                        (long long)bits, mask))
         : cg_load_packed(c, D->dtype, "X0", "el");
  const char *zero = ox_arena_printf(c->a, "%d", dflt);
  if (Z && !u8) {
    zero = cg_load_packed(c, Z->dtype, "X3", "si");
  } else if (Z && comp == 1) {
    zero = "X3[si]";
  } else if (Z) {
    int64_t per = (nb + comp - 1) / comp;
    zero = ox_arena_printf(
        c->a, "(X3[si / %lld * %lld + si %% %lld / %d] >> (si %% %lld %% %d * %lld)) & %d",
        (long long)nb, (long long)per, (long long)nb, comp, (long long)nb, comp, (long long)bits,
        mask);
  }
  if (!field || !zero) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  cg_printf(c, "  for (long long o = 0; o < %lld; o++)\n", (long long)outer);
  cg_printf(c, "    for (long long j = 0; j < %lld; j++) {\n", (long long)ni);
  cg_printf(c, "      long long v = (long long)X1[j];\n      if (v < 0) v += %lld;\n",
            (long long)Gn);
  cg_printf(c, "      if (v < 0 || v >= %lld) v = 0; /* outside the table */\n", (long long)Gn);
  cg_printf(c, "      const long long src = (o * %lld + v) * %lld, dst = (o * %lld + j) * %lld;\n",
            (long long)Gn, (long long)inner, (long long)ni, (long long)inner);
  cg_printf(c, "      for (long long t = 0; t < %lld; t++) {\n", (long long)inner);
  cg_printf(c, "        const long long el = src + t, blk = el / %lld %% %lld / %lld;\n",
            (long long)qst, (long long)Dq, (long long)bs);
  cg_printf(c, "        const long long si = (el / %lld * %lld + blk) * %lld + el %% %lld;\n",
            (long long)(qst * Dq), (long long)nb, (long long)qst, (long long)qst);
  cg_printf(c, "        const int qv = (int)(%s) - (int)(%s);\n", field, zero);
  cg_printf(c, "        Y0[dst + t] = (float)qv * X2[si];\n      }\n    }\n");
  (void)out;
  return OX_OK;
}

static int gen_nbits(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  return cg_gen_maybe_widened(c, gen_matmul_nbits, n, in, n_in, out, n_out);
}

static int gen_gbq(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out) {
  return cg_gen_maybe_widened(c, gen_gather_bq, n, in, n_in, out, n_out);
}

const cg_op ox_cg_ops_ms_lowbit[] = {
    {CG_DOMAIN_MS ":MatMulNBits", gen_nbits},
    {CG_DOMAIN_MS ":GatherBlockQuantized", gen_gbq},
    {NULL, NULL},
};
