/* datamove.c - shared helpers of the data-movement kernels. */
#include "datamove.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"

static int copy_strings(char **d, char *const *s, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const char *src = s[i] ? s[i] : "";
    size_t len = strlen(src);
    char *p = malloc(len + 1);
    if (!p) return OX_ENOMEM;
    memcpy(p, src, len + 1);
    free(d[i]);
    d[i] = p;
  }
  return OX_OK;
}

int ox_dm_copy(void *dst, const void *src, int64_t n, int32_t dt) {
  if (n <= 0) return OX_OK;
  if (dt == OX_STRING) return copy_strings(dst, src, n);
  memmove(dst, src, (size_t)n * ox_value_elem_size(dt));
  return OX_OK;
}

int ox_dm_fill(void *dst, int64_t n, const void *elem, int32_t dt) {
  if (n <= 0) return OX_OK;
  size_t es = ox_value_elem_size(dt);
  if (dt == OX_STRING) {
    for (int64_t i = 0; i < n; i++)
      if (copy_strings((char **)dst + i, elem, 1)) return OX_ENOMEM;
    return OX_OK;
  }
  uint8_t *d = dst;
  if (es == 1) {
    memset(d, *(const uint8_t *)elem, (size_t)n);
    return OX_OK;
  }
  /* one element, then double the filled prefix up to a block that stays in
   * the L1 cache, then copies of that block (write-only traffic) */
  size_t total = (size_t)n * es, done = es, block = 4096 / es * es;
  memcpy(d, elem, es);
  while (done < total && done < block) {
    size_t k = done < total - done ? done : total - done;
    memcpy(d + done, d, k);
    done += k;
  }
  for (; done < total; done += block)
    memcpy(d + done, d, total - done < block ? total - done : block);
  return OX_OK;
}

void ox_dm_strides(const int64_t *dims, size_t rank, int64_t *strides) {
  int64_t s = 1;
  for (size_t k = rank; k-- > 0;) {
    strides[k] = s;
    s *= dims[k] > 0 ? dims[k] : 1;
  }
}

/* ---- strided copy ---- */
typedef struct strided_job {
  uint8_t *dst;
  const uint8_t *src;
  int32_t dt;
  size_t es, rank; /* rank >= 1 after coalescing */
  int64_t dims[OX_DM_MAX_RANK], strides[OX_DM_MAX_RANK];
  int64_t rows; /* product of dims[0..rank-1) */
  int err;
} strided_job;

/* Copies one innermost row of n elements with source stride s. */
static int copy_row(uint8_t *d, const uint8_t *s, int64_t n, int64_t st, size_t es, int32_t dt) {
  if (dt == OX_STRING) {
    char **dd = (char **)(void *)d;
    char *const *ss = (char *const *)(const void *)s;
    for (int64_t i = 0; i < n; i++)
      if (copy_strings(dd + i, ss + i * st, 1)) return OX_ENOMEM;
    return OX_OK;
  }
  if (st == 1) {
    memcpy(d, s, (size_t)n * es);
    return OX_OK;
  }
  switch (es) {
    case 1:
      for (int64_t i = 0; i < n; i++) d[i] = s[i * st];
      break;
    case 2: {
      uint16_t *dd = (uint16_t *)(void *)d;
      const uint16_t *ss = (const uint16_t *)(const void *)s;
      for (int64_t i = 0; i < n; i++) dd[i] = ss[i * st];
      break;
    }
    case 4: {
      uint32_t *dd = (uint32_t *)(void *)d;
      const uint32_t *ss = (const uint32_t *)(const void *)s;
      for (int64_t i = 0; i < n; i++) dd[i] = ss[i * st];
      break;
    }
    case 8: {
      uint64_t *dd = (uint64_t *)(void *)d;
      const uint64_t *ss = (const uint64_t *)(const void *)s;
      for (int64_t i = 0; i < n; i++) dd[i] = ss[i * st];
      break;
    }
    default: {
      int64_t sb = st * (int64_t)es;
      for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, s + i * sb, es);
    }
  }
  return OX_OK;
}

static void strided_range(void *arg, int64_t begin, int64_t end) {
  strided_job *j = arg;
  size_t outer = j->rank - 1;
  int64_t n = j->dims[outer], st = j->strides[outer];
  int64_t idx[OX_DM_MAX_RANK];
  /* decompose begin into the outer indices */
  int64_t r = begin, off = 0;
  for (size_t k = outer; k-- > 0;) {
    idx[k] = r % j->dims[k];
    r /= j->dims[k];
    off += idx[k] * j->strides[k];
  }
  for (int64_t row = begin; row < end; row++) {
    if (copy_row(j->dst + (size_t)(row * n) * j->es, j->src + off * (int64_t)j->es, n, st, j->es,
                 j->dt)) {
      j->err = OX_ENOMEM;
      return;
    }
    for (size_t k = outer; k-- > 0;) {
      off += j->strides[k];
      if (++idx[k] < j->dims[k]) break;
      off -= idx[k] * j->strides[k];
      idx[k] = 0;
    }
  }
}

/* Blocked 2-D transpose: dst[r*dp + c] = src[r + c*sc] for r < R, c < C
 * (element units), tiles of 32x32 so that both sides stay in cache. */
static void transpose_block(uint8_t *d, const uint8_t *s, int64_t R, int64_t C, int64_t dp,
                            int64_t sc, size_t es) {
  const int64_t B = 32;
  for (int64_t r0 = 0; r0 < R; r0 += B)
    for (int64_t c0 = 0; c0 < C; c0 += B) {
      int64_t r1 = r0 + B < R ? r0 + B : R, c1 = c0 + B < C ? c0 + B : C;
      for (int64_t r = r0; r < r1; r++) {
        switch (es) {
          case 4: {
            uint32_t *dd = (uint32_t *)(void *)d + r * dp;
            const uint32_t *ss = (const uint32_t *)(const void *)s + r;
            for (int64_t c = c0; c < c1; c++) dd[c] = ss[c * sc];
            break;
          }
          case 8: {
            uint64_t *dd = (uint64_t *)(void *)d + r * dp;
            const uint64_t *ss = (const uint64_t *)(const void *)s + r;
            for (int64_t c = c0; c < c1; c++) dd[c] = ss[c * sc];
            break;
          }
          case 2: {
            uint16_t *dd = (uint16_t *)(void *)d + r * dp;
            const uint16_t *ss = (const uint16_t *)(const void *)s + r;
            for (int64_t c = c0; c < c1; c++) dd[c] = ss[c * sc];
            break;
          }
          default:
            for (int64_t c = c0; c < c1; c++)
              memcpy(d + (size_t)(r * dp + c) * es, s + (size_t)(r + c * sc) * es, es);
        }
      }
    }
}

/* A transpose whose source-contiguous dim p is not the output's last dim:
 * one blocked 2-D transpose of (p, last) per index of the other dims. */
typedef struct tjob {
  uint8_t *dst;
  const uint8_t *src;
  size_t n_other, es;
  int64_t odims[OX_DM_MAX_RANK], osrc[OX_DM_MAX_RANK], odst[OX_DM_MAX_RANK];
  int64_t R, C, dp, sc;
  int64_t rch, cch, rp, cp; /* each block cut in rp x cp pieces of rch x cch */
} tjob;

/* tasks [begin, end): task b is piece b % (rp * cp) of block b / (rp * cp) */
static void transpose_range(void *arg, int64_t begin, int64_t end) {
  tjob *t = arg;
  for (int64_t b = begin; b < end; b++) {
    int64_t piece = b % (t->rp * t->cp), rest = b / (t->rp * t->cp), so = 0, dof = 0;
    for (size_t k = t->n_other; k-- > 0;) {
      int64_t i = rest % t->odims[k];
      rest /= t->odims[k];
      so += i * t->osrc[k];
      dof += i * t->odst[k];
    }
    int64_t r0 = piece / t->cp * t->rch, c0 = piece % t->cp * t->cch;
    int64_t R = t->R - r0 < t->rch ? t->R - r0 : t->rch, C = t->C - c0 < t->cch ? t->C - c0 : t->cch;
    /* source: dim p has stride 1, the last dim sc; destination: p has dp, the last 1 */
    so += r0 + c0 * t->sc;
    dof += r0 * t->dp + c0;
    transpose_block(t->dst + (size_t)dof * t->es, t->src + (size_t)so * t->es, R, C, t->dp, t->sc,
                    t->es);
  }
}

int ox_dm_strided(void *dst, const void *src, int32_t dt, size_t rank, const int64_t *dims,
                  const int64_t *strides, ox_thread_pool *pool) {
  strided_job j;
  j.dst = dst;
  j.src = src;
  j.dt = dt;
  j.es = ox_value_elem_size(dt);
  j.err = OX_OK;
  /* drop unit dims, coalesce dims that are contiguous in the source */
  size_t r = 0;
  for (size_t k = 0; k < rank; k++) {
    if (dims[k] == 0) return OX_OK;
    if (dims[k] == 1) continue;
    if (r > 0 && j.strides[r - 1] == strides[k] * dims[k]) {
      j.dims[r - 1] *= dims[k];
      j.strides[r - 1] = strides[k];
      continue;
    }
    if (r >= OX_DM_MAX_RANK) return OX_EUNSUPPORTED;
    j.dims[r] = dims[k];
    j.strides[r] = strides[k];
    r++;
  }
  if (r == 0) {
    j.dims[0] = 1;
    j.strides[0] = 1;
    r = 1;
  }
  j.rank = r;
  int64_t total = 1;
  for (size_t k = 0; k < r; k++) total *= j.dims[k];
  /* the source-contiguous dim is not last: tile it against the last dim */
  size_t p = r;
  for (size_t k = 0; k + 1 < r; k++)
    if (j.strides[k] == 1) p = k;
  if (dt != OX_STRING && p < r && j.strides[r - 1] != 1 && j.dims[r - 1] >= 8 && j.dims[p] >= 8) {
    tjob t;
    int64_t ost[OX_DM_MAX_RANK], n = 1;
    ox_dm_strides(j.dims, r, ost);
    t.dst = j.dst;
    t.src = j.src;
    t.es = j.es;
    t.n_other = 0;
    for (size_t k = 0; k + 1 < r; k++)
      if (k != p) {
        t.odims[t.n_other] = j.dims[k];
        t.osrc[t.n_other] = j.strides[k];
        t.odst[t.n_other++] = ost[k];
        n *= j.dims[k];
      }
    t.R = j.dims[p];
    t.C = j.dims[r - 1];
    t.dp = ost[p];
    t.sc = j.strides[r - 1];
    t.rch = t.R;
    t.cch = t.C;
    t.rp = t.cp = 1;
    bool par = total >= ox_thread_pool_floor(pool, 65536);
    int nt = ox_thread_pool_size(pool);
    /* fewer blocks than four per thread (a plain 2-D transpose is one
     * block: Whisper's [384, 1500] ran on one thread at 16): the blocks
     * cut in pieces of whole 32 x 32 tiles, at least 16K elements each */
    if (par && nt > 1 && n < 4 * nt) {
      int64_t want = (4 * nt + n - 1) / n, most = t.R * t.C / 16384;
      if (want > most) want = most;
      if (want > 1) {
        int64_t rt = (t.R + 31) / 32, ct = (t.C + 31) / 32;
        int64_t rp = want < rt ? want : rt, cp = (want + rp - 1) / rp;
        if (cp > ct) cp = ct;
        t.rch = (rt + rp - 1) / rp * 32;
        t.cch = (ct + cp - 1) / cp * 32;
        t.rp = (t.R + t.rch - 1) / t.rch;
        t.cp = (t.C + t.cch - 1) / t.cch;
      }
    }
    int64_t tasks = n * t.rp * t.cp;
    if (tasks > 1 && par)
      ox_parallel_for(pool, tasks, 1, transpose_range, &t);
    else
      transpose_range(&t, 0, tasks);
    return OX_OK;
  }
  int64_t rows = total / j.dims[r - 1];
  j.rows = rows;
  if (total >= ox_thread_pool_floor(pool, 65536) && rows > 1 && dt != OX_STRING) {
    int64_t grain = 32768 / j.dims[r - 1];
    ox_parallel_for(pool, rows, grain > 0 ? grain : 1, strided_range, &j);
  } else {
    strided_range(&j, 0, rows);
  }
  return j.err;
}

/* ---- scalar access ---- */
bool ox_dm_is_real(int32_t dt) {
  return dt != OX_STRING && dt != OX_COMPLEX64 && dt != OX_COMPLEX128 && dt != OX_UNDEFINED;
}

bool ox_dm_nonzero(int32_t dt, const void *p, int64_t i) {
  switch (dt) {
    case OX_STRING: {
      const char *s = ((char *const *)p)[i];
      return s && *s;
    }
    case OX_FLOAT:
      return ((const float *)p)[i] != 0;
    case OX_DOUBLE:
      return ((const double *)p)[i] != 0;
    case OX_COMPLEX64:
      return ((const float *)p)[2 * i] != 0 || ((const float *)p)[2 * i + 1] != 0;
    case OX_COMPLEX128:
      return ((const double *)p)[2 * i] != 0 || ((const double *)p)[2 * i + 1] != 0;
    case OX_FLOAT16:
    case OX_BFLOAT16:
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
    case OX_FLOAT8E8M0:
    case OX_FLOAT4E2M1:
      return oc_get(p, dt, i) != 0;
    case OX_UINT64:
      return ((const uint64_t *)p)[i] != 0;
    default:
      return oc_get_i64(p, dt, i) != 0;
  }
}

int ox_dm_cmp(int32_t dt, const void *p, int64_t i, int64_t j) {
  switch (dt) {
    case OX_STRING: {
      const char *a = ((char *const *)p)[i], *b = ((char *const *)p)[j];
      int c = strcmp(a ? a : "", b ? b : "");
      return c < 0 ? -1 : c > 0;
    }
    case OX_UINT64: {
      uint64_t a = ((const uint64_t *)p)[i], b = ((const uint64_t *)p)[j];
      return a < b ? -1 : a > b;
    }
    case OX_INT64: {
      int64_t a = ((const int64_t *)p)[i], b = ((const int64_t *)p)[j];
      return a < b ? -1 : a > b;
    }
    case OX_COMPLEX64:
    case OX_COMPLEX128: {
      size_t es = dt == OX_COMPLEX64 ? 4 : 8;
      for (int part = 0; part < 2; part++) {
        double a = es == 4 ? ((const float *)p)[2 * i + part] : ((const double *)p)[2 * i + part];
        double b = es == 4 ? ((const float *)p)[2 * j + part] : ((const double *)p)[2 * j + part];
        if (a < b) return -1;
        if (a > b) return 1;
      }
      return 0;
    }
    default: {
      double a = oc_get(p, dt, i), b = oc_get(p, dt, j);
      bool na = isnan(a), nb = isnan(b);
      if (na || nb) return na == nb ? 0 : na ? 1 : -1;
      return a < b ? -1 : a > b;
    }
  }
}

int ox_dm_read_ints(ox_kctx *c, const ox_value *v, const char *what, int64_t *out, size_t cap,
                    size_t *n) {
  if (!v) return ox_kctx_fail(c, OX_ERUNTIME, "input '%s' is missing", what);
  return oc_read_ints(c, v, out, cap, n, what);
}

int ox_dm_box(void *dst, const int64_t *ddims, const int64_t *dstart, const void *src,
              const int64_t *sdims, const int64_t *sstart, const int64_t *count, size_t rank,
              int32_t dt) {
  size_t es = ox_value_elem_size(dt);
  if (rank == 0) return ox_dm_copy(dst, src, 1, dt);
  int64_t ds[OX_DM_MAX_RANK], ss[OX_DM_MAX_RANK], idx[OX_DM_MAX_RANK];
  if (rank > OX_DM_MAX_RANK) return OX_EUNSUPPORTED;
  ox_dm_strides(ddims, rank, ds);
  ox_dm_strides(sdims, rank, ss);
  int64_t doff = 0, soff = 0, rows = 1;
  for (size_t k = 0; k < rank; k++) {
    if (count[k] <= 0) return OX_OK;
    doff += dstart[k] * ds[k];
    soff += sstart[k] * ss[k];
    idx[k] = 0;
    if (k + 1 < rank) rows *= count[k];
  }
  int64_t n = count[rank - 1];
  uint8_t *d = dst;
  const uint8_t *s = src;
  for (int64_t r = 0; r < rows; r++) {
    if (ox_dm_copy(d + (size_t)doff * es, s + (size_t)soff * es, n, dt)) return OX_ENOMEM;
    for (size_t k = rank - 1; k-- > 0;) {
      doff += ds[k];
      soff += ss[k];
      if (++idx[k] < count[k]) break;
      doff -= idx[k] * ds[k];
      soff -= idx[k] * ss[k];
      idx[k] = 0;
    }
  }
  return OX_OK;
}

ox_value *ox_dm_output(ox_kctx *c, size_t i, int32_t dt, const int64_t *dims, size_t rank) {
  return dt == OX_STRING ? ox_kctx_output_zero(c, i, dt, dims, rank)
                         : ox_kctx_output(c, i, dt, dims, rank);
}

int ox_dm_view_out(ox_kctx *c, size_t i, ox_value *in, const int64_t *dims, size_t rank) {
  ox_err e = {0};
  int64_t n;
  if (!ox_numel(dims, rank, &n) || n != in->numel)
    return ox_kctx_fail(c, OX_ERUNTIME, "output shape does not hold the input's %lld elements",
                        (long long)in->numel);
  /* only storage that values own (directly or through their base) is
   * shared: a caller's buffer or the model mapping may go away before the
   * output is read, so those are copied */
  const ox_value *owner = in;
  while (!owner->owns_data && owner->base) owner = owner->base;
  if (!owner->owns_data) {
    ox_value *c2 = ox_dm_output(c, i, in->dtype, dims, rank);
    if (!c2) return OX_ENOMEM;
    if (ox_dm_copy(c2->data, in->data, in->numel, in->dtype))
      return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return OX_OK;
  }
  ox_value *o = ox_tensor_wrap(in->dtype, dims, rank, in->data, &e);
  if (!o) return ox_kctx_fail(c, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
  o->base = ox_value_ref(in);
  return ox_kctx_set_output(c, i, o);
}

ox_value *ox_dm_tensor_in(ox_kctx *c, size_t i) {
  ox_value *v = ox_kctx_input(c, i);
  if (!v) {
    ox_kctx_fail(c, OX_ERUNTIME, "input %zu is missing", i);
    return NULL;
  }
  if (v->kind != OX_VAL_TENSOR) {
    ox_kctx_fail(c, OX_ERUNTIME, "input %zu is not a tensor", i);
    return NULL;
  }
  return v;
}

typedef struct copy2d_job {
  uint8_t *dst;
  const uint8_t *src;
  int64_t dpitch, spitch, n;
  size_t es;
  int32_t dt;
  int err;
  int64_t piece, pieces; /* elements per piece and pieces per row (copy2d_pieces) */
} copy2d_job;

/* task t: piece t % pieces of row t / pieces (non-string elements) */
static void copy2d_pieces(void *arg, int64_t b, int64_t e) {
  copy2d_job *j = arg;
  for (int64_t t = b; t < e; t++) {
    int64_t q = t / j->pieces, c0 = (t % j->pieces) * j->piece;
    int64_t c1 = c0 + j->piece < j->n ? c0 + j->piece : j->n;
    memcpy(j->dst + (size_t)(q * j->dpitch + c0) * j->es,
           j->src + (size_t)(q * j->spitch + c0) * j->es, (size_t)(c1 - c0) * j->es);
  }
}

static void copy2d_rows(void *arg, int64_t b, int64_t e) {
  copy2d_job *j = arg;
  for (int64_t q = b; q < e; q++)
    if (ox_dm_copy(j->dst + (size_t)(q * j->dpitch) * j->es,
                   j->src + (size_t)(q * j->spitch) * j->es, j->n, j->dt))
      j->err = OX_ENOMEM;
}

int ox_dm_copy2d(ox_thread_pool *pool, void *dst, int64_t dpitch, const void *src, int64_t spitch,
                 int64_t rows, int64_t n, int32_t dt) {
  copy2d_job j = {dst, src, dpitch, spitch, n, ox_value_elem_size(dt), dt, OX_OK, 0, 0};
  if (rows <= 0 || n <= 0) return OX_OK;
  if (dpitch == n && spitch == n) return ox_dm_copy(dst, src, rows * n, dt);
  size_t bytes = (size_t)(rows * n) * j.es;
  /* a few long rows (a channel Concat of one image: one row per input):
   * pieces of 64 KiB, so that the threads share the copy */
  if (dt != OX_STRING && bytes >= (size_t)ox_thread_pool_floor(pool, 1 << 18) && rows < 8 &&
      ox_thread_pool_size(pool) > 1) {
    j.piece = (int64_t)((size_t)ox_thread_pool_floor(pool, 1 << 16) / j.es);
    if (j.piece < 1) j.piece = 1;
    j.pieces = (n + j.piece - 1) / j.piece;
    ox_parallel_for(pool, rows * j.pieces, 1, copy2d_pieces, &j);
    return OX_OK;
  }
  if (dt != OX_STRING && bytes >= (size_t)ox_thread_pool_floor(pool, 1 << 16) && rows > 1) {
    int64_t grain = (int64_t)((1 << 15) / ((size_t)n * j.es + 1)) + 1;
    ox_parallel_for(pool, rows, grain, copy2d_rows, &j);
  } else {
    copy2d_rows(&j, 0, rows);
  }
  return j.err;
}
