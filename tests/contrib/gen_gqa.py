"""gen_gqa.py - cases of com.microsoft GroupQueryAttention and RotaryEmbedding
(src/ops/contrib/gqa.c) for tests/oracle/ort_cases.mjs. Where onnxruntime
refuses what onnxc accepts (head sizes that are no multiple of 8, rotary
widths that are no multiple of 16), a numpy reference written from
onnxruntime's documented semantics is the expectation."""
import numpy as np

from cases import Cases, node

c = Cases(seed=23)
I32 = np.int32


def rope_np(x, cos, sin, interleaved):
    """x [..., H] rotated in its first 2 * cos.shape[-1] values"""
    y = x.copy()
    half = cos.shape[-1]
    if interleaved:
        a, b = x[..., 0:2 * half:2], x[..., 1:2 * half:2]
        y[..., 0:2 * half:2] = a * cos - b * sin
        y[..., 1:2 * half:2] = b * cos + a * sin
    else:
        a, b = x[..., :half], x[..., half:2 * half]
        y[..., :half] = a * cos - b * sin
        y[..., half:2 * half] = b * cos + a * sin
    return y


def gqa_np(q, k, v, pk, pv, seqlens, total, nh, kvh, scale=0.0, softcap=0.0, lws=-1,
           cos=None, sin=None, interleaved=False, bias=None, sink=None, smooth=False):
    """reference GroupQueryAttention (unpacked inputs), float64"""
    B, S, _ = q.shape
    H = q.shape[2] // nh
    q = q.astype(np.float64).reshape(B, S, nh, H)
    k = k.astype(np.float64).reshape(B, S, kvh, H)
    v = v.astype(np.float64).reshape(B, S, kvh, H)
    P = 0 if pk is None else pk.shape[2]
    Pl = max(P, total)
    first = S == total
    scale = scale or 1.0 / np.sqrt(H)
    y = np.zeros((B, S, nh, H))
    prk = np.zeros((B, kvh, Pl, H))
    prv = np.zeros((B, kvh, Pl, H))
    for b in range(B):
        tot = int(seqlens[b]) + 1
        past = 0 if first else tot - S
        pos = np.arange(past, past + S)
        qb, kb = q[b].copy(), k[b].copy()
        if cos is not None:
            qb = rope_np(qb, cos[pos][:, None, :], sin[pos][:, None, :], interleaved)
            kb = rope_np(kb, cos[pos][:, None, :], sin[pos][:, None, :], interleaved)
        if past:
            prk[b, :, :past] = pk[b, :, :past]
            prv[b, :, :past] = pv[b, :, :past]
        prk[b, :, past:past + S] = kb.transpose(1, 0, 2)
        prv[b, :, past:past + S] = v[b].transpose(1, 0, 2)
        for h in range(nh):
            g = h // (nh // kvh)
            for s in range(S):
                hi = min(past + s + 1, tot)
                lo = hi - lws if lws > 0 and hi > lws else 0
                x = prk[b, g, lo:hi] @ qb[s, h] * scale
                if softcap > 0:
                    x = softcap * np.tanh(x / softcap)
                if bias is not None:
                    x = x + bias[b % bias.shape[0], h % bias.shape[1], s, lo:hi]
                m = x.max()
                sk = None
                if sink is not None:
                    sk = float(sink[h])
                elif smooth:
                    sk = 0.0
                if sk is not None:
                    m = max(m, sk)
                e = np.exp(x - m)
                den = e.sum() + (np.exp(sk - m) if sk is not None else 0.0)
                y[b, s, h] = (e / den) @ prv[b, g, lo:hi]
    return (y.reshape(B, S, nh * H).astype(np.float32), prk.astype(np.float32),
            prv.astype(np.float32))


def gqa(name, B, S, nh, kvh, H, past=None, seqlens=None, total=None, packed=False,
        rotary=None, interleaved=0, bias=None, sink=False, qk=0, attrs=None, dtype=np.float32,
        ort="compare", expected=False, outputs=("Y", "PK", "PV"), rtol=1e-4, atol=1e-5,
        threads=(1, 2), error=None, pos_ids=None, total_fed=False, compile=None):
    """one GroupQueryAttention case; past = buffer length P of past_key (None: no past).
    total_sequence_length is a constant, as a model of static shapes has it (the length of
    present_key and output_qk follow its value), unless total_fed (a graph input: those
    outputs' lengths then depend on data, and `onnxc compile` declines them: compile)"""
    attrs = dict(attrs or {})
    q = c.randn(B, S, nh * H, dtype=dtype)
    k = c.randn(B, S, kvh * H, dtype=dtype)
    v = c.randn(B, S, kvh * H, dtype=dtype)
    total = total if total is not None else (S if past is None else past + S)
    seqlens = np.array(seqlens if seqlens is not None else [total - 1] * B, dtype=I32)
    feeds = {}
    names = ["Q", "K", "V"]
    if packed:
        feeds["Q"] = np.concatenate([q, k, v], axis=2)
        names = ["Q", "", ""]
    else:
        feeds.update(Q=q, K=k, V=v)
    pk = pv = None
    if past is not None:
        pk = c.randn(B, kvh, past, H, dtype=dtype)
        pv = c.randn(B, kvh, past, H, dtype=dtype)
        feeds.update(PK_in=pk, PV_in=pv)
        names += ["PK_in", "PV_in"]
    else:
        names += ["", ""]
    feeds["seqlens"] = seqlens
    init = {}
    (feeds if total_fed or error else init)["total"] = np.array([total], dtype=I32)
    names += ["seqlens", "total"]
    cos = sin = None
    if rotary is not None:
        rows, width = rotary
        ang = c.rng.uniform(0, 6.28, size=(rows, width))
        cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
        feeds.update(cos=cos, sin=sin)
        names += ["cos", "sin"]
        attrs.update(do_rotary=1, rotary_interleaved=interleaved)
    extra = []
    if pos_ids is not None:
        feeds["pos"] = pos_ids
        extra.append(("pos", 9))
    if bias is not None:
        feeds["bias"] = c.randn(*bias, dtype=dtype)
        extra.append(("bias", 10))
    if sink:
        feeds["sink"] = c.randn(nh, dtype=dtype)
        extra.append(("sink", 11))
    for n_, i in extra:
        while len(names) < i:
            names.append("")
        names.append(n_)
    if qk:
        attrs["qk_output"] = qk
    outs = list(outputs) + (["QK"] if qk else [])
    exp = None
    if expected:
        y, prk, prv = gqa_np(q, k, v, pk, pv, seqlens, total, nh, kvh,
                             scale=attrs.get("scale", 0.0), softcap=attrs.get("softcap", 0.0),
                             lws=attrs.get("local_window_size", -1), cos=cos, sin=sin,
                             interleaved=bool(interleaved), bias=feeds.get("bias"),
                             sink=feeds.get("sink"), smooth=attrs.get("smooth_softmax", 0) == 1)
        exp = {"Y": y.astype(dtype), "PK": prk.astype(dtype), "PV": prv.astype(dtype)}
        exp = {n_: exp[n_] for n_ in outs}
        ort = "none"
    node_outs = list(outputs) + ([""] * (3 - len(outputs)) + ["QK"] if qk else [])
    c.add(name, [node("GroupQueryAttention", names, node_outs, "n0", num_heads=nh,
                      kv_num_heads=kvh, **attrs)],
          feeds, outs, initializers=init, rtol=rtol, atol=atol, threads=threads, ort=ort,
          expected=exp, error=error, compile=compile, output_types={n_: dtype for n_ in outs})


# ---- prompts (first run, no past) ----
gqa("prompt 4 heads over 2, head 16", 1, 5, 4, 2, 16)
gqa("prompt batch 2, MHA, head 8", 2, 4, 4, 4, 8)
gqa("prompt 8 heads over 1 (MQA), head 32", 1, 7, 8, 1, 32)
gqa("prompt packed QKV 6 over 2", 2, 3, 6, 2, 16, packed=True)
gqa("prompt one row", 1, 1, 4, 2, 16)
gqa("prompt with a past buffer (ignored)", 1, 6, 4, 2, 16, past=10, total=6, seqlens=[5])
gqa("prompt padded batch (output only)", 2, 5, 4, 2, 16, seqlens=[4, 2], total=5,
    outputs=("Y",), total_fed=True)
# ---- decode (one new row) ----
gqa("decode past 7 (present = past + 1)", 2, 1, 4, 2, 16, past=7)
gqa("decode past 7, total_sequence_length fed", 2, 1, 4, 2, 16, past=7, total_fed=True,
    compile=["GroupQueryAttention", "'PK': dim 2", "not a fixed number"])
gqa("decode shared buffer 16, lengths 10 and 6", 2, 1, 4, 2, 16, past=16, total=10,
    seqlens=[9, 5])
gqa("decode packed QKV", 1, 1, 6, 3, 16, past=9, packed=True)
gqa("decode long cache 700 (split blocks)", 1, 1, 8, 2, 64, past=700, threads=(1, 2, 4),
    rtol=2e-4)
gqa("decode batch 3 long cache 600, lengths differ", 3, 1, 8, 2, 32, past=600, total=600,
    seqlens=[599, 300, 17], threads=(1, 3))
# the block pass's shapes (kernels/attn_decode*.c): head sizes of 2 to 16
# vectors and with a partial last vector, 1 to 8 query heads per key/value
# head (value tiles of 1 to 4 heads, strips of up to 8 vectors), caches
# whose length is no multiple of the 16-key score tile
for H, nh, kvh, past in ((64, 3, 1, 37), (80, 10, 2, 45), (96, 6, 3, 131), (128, 8, 1, 277),
                         (256, 4, 4, 19), (48, 14, 2, 300), (40, 4, 2, 50), (32, 12, 2, 250)):
    gqa(f"decode head {H}, {nh // kvh} heads per group, past {past}", 1, 1, nh, kvh, H,
        past=past, rtol=3e-4, atol=3e-5)
gqa("decode softcap and bias over cache 300", 1, 1, 8, 2, 64, past=300,
    bias=(1, 8, 1, 301), attrs={"softcap": 2.0}, rtol=3e-4, atol=3e-5)
gqa("prompt 150 rows, 8 heads over 2, head 64", 2, 150, 8, 2, 64, threads=(1, 2, 4),
    rtol=3e-4, atol=3e-5)
gqa("prompt 140 rows, window 40, softcap, qk after softmax", 1, 140, 4, 2, 32,
    attrs={"local_window_size": 40, "softcap": 4.0}, qk=2, rtol=3e-4, atol=3e-5)
gqa("continuation 70 rows over 100 past, window 50, bias", 1, 70, 4, 2, 32, past=100,
    bias=(1, 4, 70, 170), attrs={"local_window_size": 50}, rtol=3e-4, atol=3e-5)
# ---- continuation of a prompt over a past ----
gqa("continuation 3 rows over 6 past, buffer 12", 1, 3, 4, 2, 16, past=12, total=9,
    seqlens=[8])
gqa("continuation 4 rows, non-shared past 5", 1, 4, 4, 1, 16, past=5)
# ---- attributes ----
for lws in (1, 3, 5):
    gqa(f"prompt local window {lws}", 1, 8, 4, 2, 16, attrs={"local_window_size": lws})
gqa("decode local window 4", 2, 1, 4, 2, 16, past=9, attrs={"local_window_size": 4})
gqa("decode local window 300, cache 700", 1, 1, 4, 2, 32, past=700,
    attrs={"local_window_size": 300}, rtol=2e-4)
gqa("prompt softcap 2", 1, 6, 4, 2, 16, attrs={"softcap": 2.0})
gqa("decode softcap 1.5", 2, 1, 4, 2, 16, past=8, attrs={"softcap": 1.5})
gqa("prompt scale 0.3", 1, 4, 4, 2, 16, attrs={"scale": 0.3})
gqa("decode scale 0.2", 1, 1, 4, 2, 16, past=5, attrs={"scale": 0.2})
gqa("prompt smooth softmax", 1, 5, 4, 2, 16, attrs={"smooth_softmax": 1})
gqa("decode smooth softmax", 2, 1, 4, 2, 16, past=6, attrs={"smooth_softmax": 1})
gqa("prompt head sink", 1, 5, 4, 2, 16, sink=True)
gqa("decode head sink", 2, 1, 4, 2, 16, past=6, sink=True)
gqa("decode head sink, cache 600", 1, 1, 4, 2, 32, past=600, sink=True, threads=(1, 2, 4))
gqa("prompt bias [1, 1, S, T]", 1, 5, 4, 2, 16, bias=(1, 1, 5, 5))
gqa("prompt bias [B, N, S, T]", 2, 4, 4, 2, 16, bias=(2, 4, 4, 4))
gqa("decode bias [B, 1, 1, T]", 2, 1, 4, 2, 16, past=7, bias=(2, 1, 1, 8))
gqa("decode bias [1, N, 1, T]", 1, 1, 4, 2, 16, past=7, bias=(1, 4, 1, 8))
gqa("prompt qk before softmax", 1, 4, 4, 2, 16, qk=1, outputs=("Y",))
gqa("prompt qk, total_sequence_length fed", 1, 4, 4, 2, 16, qk=1, outputs=("Y",),
    total_fed=True, compile=["GroupQueryAttention", "'QK': dim 3", "not a fixed number"])
gqa("prompt qk after softmax", 2, 4, 4, 2, 16, qk=2, outputs=("Y",))
gqa("decode qk after softmax", 1, 1, 4, 2, 16, past=5, qk=2)
gqa("decode qk before softmax, window 3", 2, 1, 4, 2, 16, past=6, qk=1,
    attrs={"local_window_size": 3})
gqa("prompt everything: window, softcap, sink, bias", 2, 6, 4, 2, 16, sink=True,
    bias=(2, 4, 6, 6), attrs={"local_window_size": 3, "softcap": 3.0})
# ---- rotary inside ----
gqa("prompt rotary", 1, 5, 4, 2, 16, rotary=(16, 8))
gqa("prompt rotary interleaved", 2, 4, 4, 2, 16, rotary=(8, 8), interleaved=1)
gqa("prompt rotary partial (16 of 32)", 1, 4, 4, 2, 32, rotary=(8, 8))
gqa("decode rotary", 2, 1, 4, 2, 16, past=6, rotary=(12, 8))
gqa("decode rotary interleaved, shared buffer", 2, 1, 4, 2, 32, past=12, total=9,
    seqlens=[8, 3], rotary=(16, 16), interleaved=1)
gqa("continuation rotary", 1, 3, 4, 2, 16, past=10, total=7, seqlens=[6], rotary=(10, 8))
gqa("packed QKV rotary", 1, 3, 4, 2, 16, packed=True, rotary=(4, 8))
gqa("packed QKV decode rotary interleaved", 2, 1, 4, 2, 16, past=4, packed=True,
    rotary=(5, 8), interleaved=1)
gqa("decode rotary at position_ids", 2, 1, 4, 2, 16, past=6, rotary=(12, 8),
    pos_ids=np.array([[3], [9]], np.int64))
gqa("prompt rotary at position_ids", 1, 4, 4, 2, 16, rotary=(12, 8),
    pos_ids=np.array([[2, 3, 4, 5]], np.int64))
gqa("continuation rotary at position_ids", 1, 2, 4, 2, 16, past=8, total=7, seqlens=[6],
    rotary=(12, 8), pos_ids=np.array([[7, 11]], np.int64))
# ---- what onnxruntime refuses and onnxc accepts: numpy reference ----
gqa("head size 12 (numpy)", 1, 4, 4, 2, 12, expected=True)
gqa("decode head size 20 (numpy)", 2, 1, 4, 2, 20, past=5, expected=True)
gqa("rotary width 4 of head 12 (numpy)", 1, 3, 2, 1, 12, rotary=(3, 2), expected=True)
gqa("continuation batch 2, lengths differ (numpy)", 2, 3, 4, 2, 16, past=10, total=9,
    seqlens=[8, 5], rotary=(12, 8), expected=True)
gqa("decode rotary width 6 interleaved of 16 (numpy)", 1, 1, 4, 2, 16, past=3,
    rotary=(4, 3), interleaved=1, expected=True)
# ---- float16 ----
gqa("float16 prompt", 1, 4, 4, 2, 16, dtype=np.float16, rtol=2e-3, atol=2e-3)
gqa("float16 decode", 2, 1, 4, 2, 16, past=6, dtype=np.float16, rtol=2e-3, atol=2e-3)
# ---- errors ----
gqa("num_heads 6 over kv 4", 1, 2, 6, 4, 16, ort="refuses",
    error=["node 'n0'", "not a multiple of kv_num_heads"])
gqa("seqlens_k beyond the past buffer", 1, 1, 4, 2, 16, past=5, total=9, seqlens=[8],
    ort="none", error=["node 'n0'", "beyond the past buffer"])
gqa("seqlens_k above total_sequence_length", 1, 1, 4, 2, 16, past=8, total=6, seqlens=[7],
    ort="none", error=["node 'n0'", "seqlens_k[0]"])
gqa("total_sequence_length below the new rows", 1, 3, 4, 2, 16, past=8, total=2,
    seqlens=[1], ort="none", error=["node 'n0'", "less than the 3 new rows"])
gqa("cos cache too short", 1, 1, 4, 2, 16, past=6, rotary=(4, 8), ort="refuses",
    error=["node 'n0'", "cos_cache has 4 rows"])
gqa("cos cache too wide", 1, 2, 4, 2, 16, rotary=(4, 16), ort="refuses",
    error=["node 'n0'", "cos_cache width"])


def bad_past_head():
    q = c.randn(1, 1, 64)
    k = c.randn(1, 1, 32)
    feeds = {"Q": q, "K": k, "V": k.copy(), "PK_in": c.randn(1, 2, 4, 8),
             "PV_in": c.randn(1, 2, 4, 8), "seqlens": np.array([4], I32),
             "total": np.array([5], I32)}
    c.add("past head size 8 vs 16", [node("GroupQueryAttention",
                                          ["Q", "K", "V", "PK_in", "PV_in", "seqlens", "total"],
                                          ["Y", "PK", "PV"], "n0", num_heads=4, kv_num_heads=2)],
          feeds, ["Y"], ort="refuses", error=["node 'n0'", "head size"])


bad_past_head()


def bad_key_width():
    feeds = {"Q": c.randn(1, 2, 64), "K": c.randn(1, 2, 24), "V": c.randn(1, 2, 24),
             "seqlens": np.array([1], I32), "total": np.array([2], I32)}
    c.add("key width 24 for 2 heads of 16", [node("GroupQueryAttention",
                                                  ["Q", "K", "V", "", "", "seqlens", "total"],
                                                  ["Y"], "n0", num_heads=4, kv_num_heads=2)],
          feeds, ["Y"], ort="refuses", error=["node 'n0'", "kv_num_heads * head size"])


bad_key_width()

# ---- RotaryEmbedding ----


def rope(name, shape, pos, rows, width, interleaved=0, nh=0, rd=0, dtype=np.float32,
         ort="compare", error=None, expected=False, rtol=1e-5, atol=1e-6):
    x = c.randn(*shape, dtype=dtype)
    ang = c.rng.uniform(0, 6.28, size=(rows, width))
    cos, sin = np.cos(ang).astype(dtype), np.sin(ang).astype(dtype)
    attrs = {"interleaved": interleaved}
    if nh:
        attrs["num_heads"] = nh
    if rd:
        attrs["rotary_embedding_dim"] = rd
    exp = None
    if expected:
        B = shape[0]
        if len(shape) == 4:
            S = shape[2]
            xs = x.transpose(0, 2, 1, 3)
        else:
            S = shape[1]
            H = rd and shape[2] // nh or 2 * width
            xs = x.reshape(B, S, -1, H)
        p = (pos.reshape(-1)[0] + np.arange(S))[None, :].repeat(B, 0) if pos.size == 1 else pos
        y = rope_np(xs, cos[p][:, :, None, :], sin[p][:, :, None, :], interleaved)
        y = y.transpose(0, 2, 1, 3) if len(shape) == 4 else y.reshape(shape)
        exp = {"Y": y.astype(dtype)}
        ort = "none"
    c.add(name, [node("RotaryEmbedding", ["X", "pos", "cos", "sin"], ["Y"], "r0", **attrs)],
          {"X": x, "pos": pos, "cos": cos, "sin": sin}, ["Y"], ort=ort, error=error,
          expected=exp, rtol=rtol, atol=atol, output_types={"Y": dtype})


rope("rope rank 3 position ids [B, S]", (2, 3, 32), c.ints(0, 9, 2, 3), 10, 8)
rope("rope rank 3 offset", (2, 4, 48), np.array([3], np.int64), 8, 8)
rope("rope rank 3 interleaved", (1, 5, 32), c.ints(0, 19, 1, 5), 20, 16, interleaved=1)
rope("rope rank 4 [B, N, S, H]", (2, 3, 4, 16), c.ints(0, 5, 2, 4), 6, 8)
rope("rope rank 4 interleaved offset", (1, 2, 3, 16), np.array([1], np.int64), 4, 8,
     interleaved=1)
rope("rope partial 8 of 16", (2, 3, 32), c.ints(0, 6, 2, 3), 7, 4, nh=2, rd=8)
rope("rope partial interleaved 8 of 32", (1, 4, 64), c.ints(0, 6, 1, 4), 7, 4, nh=2, rd=8,
     interleaved=1)
rope("rope float16", (1, 3, 32), c.ints(0, 4, 1, 3), 5, 8, dtype=np.float16, rtol=1e-3,
     atol=1e-3)
rope("rope numpy: offset scalar interleaved", (1, 3, 2, 8), np.array([2], np.int64), 6, 4,
     interleaved=1, expected=True)
rope("rope position beyond the cache", (1, 2, 16), np.array([[0, 7]], np.int64), 4, 8,
     ort="none", error=["node 'r0'", "outside the cos/sin caches"])
rope("rope cache width wrong", (1, 2, 32), np.array([[0, 1]], np.int64), 4, 6, nh=2, rd=16,
     ort="refuses", error=["node 'r0'", "cos_cache width"])

c.write()
