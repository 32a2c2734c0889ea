"""gen_sparse.py - cases of com.microsoft SparseAttention
(src/ops/contrib/sparse_attn.c) for tests/oracle/ort_cases.mjs.

onnxruntime's CPU kernel runs only when present_key / present_value are
past_key / past_value's own tensors, so the cases ask ort_cases.mjs to fetch
the presents into the past feeds (ort_share). Where onnxruntime refuses what
onnxc accepts (head sizes that are no multiple of 8, rotary widths that are no
multiple of 16), a numpy reference of the documented semantics is the
expectation, and so it is where the key lengths of a batch differ:
onnxruntime 1.30 writes each (batch, head)'s probabilities at a stride of
total_sequence_length but reads them back at a stride of that batch's key
length, so its output is wrong for every (batch, head) but the first unless
all key lengths equal total_sequence_length (the numpy reference agrees with
it where they do: the cases below with equal lengths check both). Prompts
with padded sequences are left out: onnxruntime's softmax of a padded row
reads past the end of its score row."""
import numpy as np

from cases import Cases, node

c = Cases(seed=37)
I32 = np.int32


def rope_np(x, cos, sin, interleaved):
    """x [..., H] with its first 2 * cos.shape[-1] values turned as complex
    numbers (pairs (i, i + R/2), or (2i, 2i + 1) when interleaved) by
    cos + i sin"""
    half = cos.shape[-1]
    re_, im = ((np.arange(half) * 2, np.arange(half) * 2 + 1) if interleaved else
               (np.arange(half), np.arange(half) + half))
    z = (x[..., re_] + 1j * x[..., im]) * (cos + 1j * sin)
    y = x.copy()
    y[..., re_], y[..., im] = z.real, z.imag
    return y


def layout(nb, local, vert, shift=0):
    """Phi-3-small's pattern as a dense [nb, nb] block mask: the last `local`
    blocks up to the diagonal, and every `vert`-th block (shifted by
    `shift`, one shift per head) before it; vert 0: none"""
    m = np.zeros((nb, nb), bool)
    for i in range(nb):
        for j in range(i + 1):
            m[i, j] = i - j < local or (vert > 0 and (j + shift + 1) % vert == 0)
    return m


def csr(masks):
    """[L, nb, nb] block masks -> block_row_indices [L, nb + 1] and
    block_col_indices [L, max nnz] (padded with zeros past each layout's end)"""
    rows = np.zeros((len(masks), masks[0].shape[0] + 1), I32)
    cols = []
    for li, m in enumerate(masks):
        rows[li, 1:] = np.cumsum(m.sum(1))
        cols.append(np.nonzero(m)[1])
    nnz = max(len(x) for x in cols)
    ci = np.zeros((len(masks), nnz), I32)
    for li, x in enumerate(cols):
        ci[li, :len(x)] = x
    return rows, ci


def sparse_np(q, k, v, pk, pv, masks, klen, total, nh, kvh, blk, scale=0.0, cos=None,
              sin=None, interleaved=False):
    """reference SparseAttention (unpacked inputs), float64"""
    B, S, _ = q.shape
    H = q.shape[2] // nh
    q = q.astype(np.float64).reshape(B, S, nh, H)
    k = k.astype(np.float64).reshape(B, S, kvh, H)
    v = v.astype(np.float64).reshape(B, S, kvh, H)
    prk, prv = pk.astype(np.float64).copy(), pv.astype(np.float64).copy()
    scale = scale or 1.0 / np.sqrt(H)
    y = np.zeros((B, S, nh, H))
    for b in range(B):
        past = 0 if total == S else int(klen[b]) - S
        pos = np.arange(past, past + S)
        qb, kb = q[b].copy(), k[b].copy()
        if cos is not None:
            qb = rope_np(qb, cos[pos][:, None, :], sin[pos][:, None, :], interleaved)
            kb = rope_np(kb, cos[pos][:, None, :], sin[pos][:, None, :], interleaved)
        prk[b, :, past:past + S] = kb.transpose(1, 0, 2)
        prv[b, :, past:past + S] = v[b].transpose(1, 0, 2)
        for h in range(nh):
            g, m = h // (nh // kvh), masks[h % len(masks)]
            for s in range(S):
                p = past + s
                keep = np.array([m[p // blk, j // blk] for j in range(p + 1)])
                x = prk[b, g, :p + 1] @ qb[s, h] * scale
                e = np.where(keep, np.exp(x - x[keep].max()), 0.0)
                y[b, s, h] = (e / e.sum()) @ prv[b, g, :p + 1]
    return y.reshape(B, S, nh * H), prk, prv


def sparse(name, B, S, nh, kvh, H, blk, buf, total=None, klen=None, nb=None, masks=None,
           local=2, vert=3, per_head=1, packed=False, rotary=None, interleaved=0, scale=0.0,
           dtype=np.float32, ort="compare", expected=False, rtol=2e-4, atol=2e-5,
           threads=(1, 2), error=None, rows=None, cols=None, attrs=None):
    """one SparseAttention case: buf = the past buffer's length; total
    defaults to S (a prompt); nb (max blocks) to covering buf; per_head
    layouts (1: one for all heads, each later one's vertical stripes shifted)"""
    total = total if total is not None else S
    klen = np.array(klen if klen is not None else [total] * B, I32)
    nb = nb if nb is not None else -(-buf // blk)
    if masks is None:
        masks = [layout(nb, local, vert, i) for i in range(per_head)]
    ri, ci = csr(masks)
    ri = rows if rows is not None else ri
    ci = cols if cols is not None else ci
    q = c.randn(B, S, nh * H, dtype=dtype)
    k = c.randn(B, S, kvh * H, dtype=dtype)
    v = c.randn(B, S, kvh * H, dtype=dtype)
    pk = c.randn(B, kvh, buf, H, dtype=dtype)
    pv = c.randn(B, kvh, buf, H, dtype=dtype)
    feeds = {}
    if packed:
        feeds["Q"] = np.concatenate([q, k, v], axis=2)
        names = ["Q", "", ""]
    else:
        feeds.update(Q=q, K=k, V=v)
        names = ["Q", "K", "V"]
    feeds.update(PK_in=pk, PV_in=pv, rows=ri, cols=ci, total=np.array([total], I32), klen=klen)
    names += ["PK_in", "PV_in", "rows", "cols", "total", "klen"]
    a = dict(num_heads=nh, kv_num_heads=kvh, sparse_block_size=blk)
    cos = sin = None
    if rotary is not None:
        ang = c.rng.uniform(0, 6.28, size=rotary)
        cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
        feeds.update(cos=cos, sin=sin)
        names += ["cos", "sin"]
        a.update(do_rotary=1, rotary_interleaved=interleaved)
    if scale:
        a["scale"] = scale
    a.update(attrs or {})
    exp = None
    if expected:
        y, prk, prv = sparse_np(q, k, v, pk, pv, masks, klen, total, nh, kvh, blk, scale, cos,
                                sin, bool(interleaved))
        exp = {"Y": y.astype(dtype), "PK": prk.astype(dtype), "PV": prv.astype(dtype)}
        ort = "none"
    c.add(name, [node("SparseAttention", names, ["Y", "PK", "PV"], "n0", **a)], feeds,
          ["Y", "PK", "PV"], rtol=rtol, atol=atol, threads=threads, ort=ort, expected=exp,
          error=error, output_types={n: dtype for n in ("Y", "PK", "PV")},
          ort_share={"PK": "PK_in", "PV": "PV_in"})


# ---- prompts (total_sequence_length = S) ----
sparse("prompt 64 rows, MHA, block 16, local 2 + vertical 3", 1, 64, 4, 4, 64, 16, 64)
sparse("prompt 100 rows, 4 over 2, block 16, buffer 128, 2 layouts, rotary", 2, 100, 4, 2, 64,
       16, 128, per_head=2, rotary=(128, 32), threads=(1, 2, 4))
sparse("prompt 96 rows, 8 over 2, block 32, head 128, 8 layouts, rotary interleaved", 1, 96, 8,
       2, 128, 32, 128, per_head=8, vert=2, rotary=(96, 32), interleaved=1)
sparse("prompt packed QKV 70 rows, 4 over 1, block 64, buffer 128", 1, 70, 4, 1, 64, 64, 128,
       packed=True, local=1, vert=2)
sparse("prompt dense layout (all blocks), block 16", 1, 48, 4, 2, 64, 16, 48, local=99)
sparse("prompt local only (vertical 0), block 16, scale 0.1", 2, 80, 4, 4, 64, 16, 80, local=1,
       vert=0, scale=0.1)
sparse("prompt layouts cover more than the buffer", 1, 40, 4, 2, 64, 16, 48, nb=6)
# ---- decode (one new row over the cache) ----
sparse("decode batch 2, lengths 90, 4 over 2, block 16, rotary", 2, 1, 4, 2, 64, 16, 128,
       total=90, klen=[90, 90], per_head=2, rotary=(128, 32))
sparse("decode batch 2, lengths 200, 8 over 2, block 32, head 128, interleaved", 2, 1,
       8, 2, 128, 32, 256, total=200, klen=[200, 200], per_head=4, vert=3, rotary=(200, 64),
       interleaved=1, threads=(1, 3))
sparse("decode 4 over 1, block 64, 300 keys, buffer 320", 1, 1, 4, 1, 64, 64, 320, total=300,
       klen=[300], local=1, vert=2)
sparse("decode MHA, block 16, length at a block start", 2, 1, 4, 4, 64, 16, 64, total=49,
       klen=[49, 49], per_head=4)
sparse("decode packed QKV, rotary", 2, 1, 4, 2, 64, 32, 96, total=70, klen=[70, 70],
       packed=True, rotary=(96, 16))
# ---- continuation (several rows over a past) ----
sparse("continuation 3 rows, batch 2, block 16", 2, 3, 4, 2, 64, 16, 64, total=50,
       klen=[50, 50], per_head=2, rotary=(64, 32))
sparse("continuation 40 rows over 60, block 32, head 128", 1, 40, 8, 4, 128, 32, 128,
       total=100, klen=[100], vert=2, per_head=2)
# ---- what onnxruntime refuses and onnxc accepts: numpy reference ----
sparse("head size 24, block 8 (numpy)", 1, 20, 4, 2, 24, 8, 24, expected=True)
sparse("decode rotary width 12 of head 16 (numpy)", 2, 1, 4, 2, 16, 8, 32, total=21,
       klen=[21, 9], rotary=(32, 6), interleaved=1, per_head=2, expected=True)
sparse("prompt 4 over 2, block 16, rotary (numpy)", 1, 50, 4, 2, 64, 16, 64, per_head=2,
       rotary=(64, 32), expected=True)
# batches whose key lengths differ (onnxruntime reads the wrong probabilities)
sparse("decode batch 2, lengths 37 and 90, block 16, rotary (numpy)", 2, 1, 4, 2, 64, 16, 128,
       total=90, klen=[37, 90], per_head=2, rotary=(128, 32), expected=True)
sparse("decode batch 2, lengths 200 and 130, block 32, head 128, 4 over 1 (numpy)", 2, 1, 4,
       1, 128, 32, 256, total=200, klen=[200, 130], per_head=4, rotary=(200, 64),
       interleaved=1, threads=(1, 3), expected=True)
sparse("decode batch 2, block 64, lengths 300 and 65 (numpy)", 2, 1, 4, 2, 64, 64, 320,
       total=300, klen=[65, 300], local=1, vert=2, expected=True)
sparse("decode packed QKV, lengths 70 and 12 (numpy)", 2, 1, 4, 2, 64, 32, 96, total=70,
       klen=[70, 12], rotary=(96, 16), expected=True)
sparse("continuation 3 rows, lengths 20 and 50, block 16 (numpy)", 2, 3, 4, 2, 64, 16, 64,
       total=50, klen=[20, 50], per_head=2, rotary=(64, 32), expected=True)
# ---- float16 ----
sparse("float16 prompt", 1, 40, 4, 2, 64, 16, 48, dtype=np.float16, rtol=3e-3, atol=3e-3)
sparse("float16 decode", 2, 1, 4, 2, 64, 16, 48, total=40, klen=[40, 40], dtype=np.float16,
       rtol=3e-3, atol=3e-3)
sparse("float16 decode, lengths 40 and 17 (numpy)", 2, 1, 4, 2, 64, 16, 48, total=40,
       klen=[40, 17], dtype=np.float16, rtol=3e-3, atol=3e-3, expected=True)
# ---- errors ----
good_rows, good_cols = csr([layout(4, 2, 3)])
bad_rows = good_rows.copy()
bad_rows[0, 2] = bad_rows[0, 1] - 1
sparse("bad CSR: row index decreasing", 1, 8, 4, 2, 64, 16, 64, rows=bad_rows, ort="none",
       error=["node 'n0'", "block_row_indices of layout 0"])
upper = good_cols.copy()
upper[0, 0] = 3
sparse("bad CSR: column above the diagonal", 1, 8, 4, 2, 64, 16, 64, cols=upper, ort="none",
       error=["node 'n0'", "lower triangular"])
nodiag = np.zeros((4, 4), bool)
nodiag[np.tril_indices(4)] = True
nodiag[2, 2] = False
r_nd, c_nd = csr([nodiag])
sparse("layout row without its diagonal block", 1, 8, 4, 2, 64, 16, 64, rows=r_nd, cols=c_nd,
       ort="none", error=["node 'n0'", "block row 2 does not keep its diagonal"])
sparse("layouts shorter than total_sequence_length", 1, 40, 4, 2, 64, 16, 64, nb=2,
       ort="refuses", error=["node 'n0'", "fewer than total_sequence_length 40"])
sparse("key length beyond total_sequence_length", 1, 1, 4, 2, 64, 16, 64, total=30, klen=[31],
       ort="none", error=["node 'n0'", "key_total_sequence_lengths[0] = 31"])
sparse("total_sequence_length beyond the past buffer", 1, 1, 4, 2, 64, 16, 32, total=40,
       klen=[40], nb=4, ort="refuses", error=["node 'n0'", "the past buffer holds 32 rows"])
sparse("num_heads 6 over kv 4", 1, 8, 6, 4, 64, 16, 16, ort="none",
       error=["node 'n0'", "not a multiple of kv_num_heads"])
sparse("3 layouts for 4 heads", 1, 8, 4, 2, 64, 16, 32, per_head=3, ort="refuses",
       error=["node 'n0'", "layouts dividing num_heads 4"])
sparse("cos cache too short", 1, 1, 4, 2, 64, 16, 64, total=30, klen=[30], rotary=(20, 32),
       ort="refuses", error=["node 'n0'", "cos_cache has 20 rows"])
c.write()
