"""gen_attn.py - cases of com.microsoft Attention and MultiHeadAttention
(src/ops/contrib/attn.c) for tests/oracle/ort_cases.mjs. onnxruntime-node's
CPU kernels are the reference, except for the 4-D (GPT-2) mask_index, which
onnxruntime's CPU kernel refuses: there a numpy reference written from the
operator's documentation stands in."""
import numpy as np

from cases import Cases, node

c = Cases(seed=23)
I32 = np.int32


def attn_node(name, inputs, outputs=("Y",), **attrs):
    return node("Attention", list(inputs), list(outputs), name, **attrs)


def mha_node(name, inputs, outputs=("Y",), **attrs):
    return node("MultiHeadAttention", list(inputs), list(outputs), name, **attrs)


# ---------------- Attention ----------------

def attention_case(name, B, S, D, N, weights_const=True, bias=True, mask=None, past=None,
                   attn_bias=None, qkv=None, outs=("Y",), dtype=np.float32, rtol=1e-4,
                   atol=1e-5, **attrs):
    width = sum(qkv) if qkv else 3 * D
    if qkv:
        attrs["qkv_hidden_sizes"] = list(qkv)
    x = c.randn(B, S, D, dtype=dtype)
    w = c.randn(D, width, scale=0.3, dtype=dtype)
    feeds, inits = {"X": x}, {}
    (inits if weights_const else feeds)["W"] = w
    ins = ["X", "W"]
    if bias:
        inits["Bi"] = c.randn(width, scale=0.2, dtype=dtype)
        ins.append("Bi")
    else:
        ins.append("")
    if mask is not None:
        feeds["M"] = mask
        ins.append("M")
    else:
        ins.append("")
    if past is not None:
        feeds["P"] = past.astype(dtype)
        ins.append("P")
    else:
        ins.append("")
    if attn_bias is not None:
        feeds["AB"] = attn_bias.astype(dtype)
        ins.append("AB")
    while ins and ins[-1] == "":
        ins.pop()
    out_types = {o: dtype for o in outs}
    c.add(name, [attn_node("n0", ins, outs, num_heads=N, **attrs)], feeds, list(outs),
          initializers=inits, rtol=rtol, atol=atol, output_types=out_types)


attention_case("Attention BERT base form, 2 batches", 2, 5, 16, 4)
attention_case("Attention one row, one head", 1, 1, 8, 1)
attention_case("Attention odd sizes", 3, 7, 12, 3)
attention_case("Attention weights as a graph input", 2, 4, 8, 2, weights_const=False)
attention_case("Attention scale attribute", 2, 3, 8, 2, scale=0.5)
attention_case("Attention qkv_hidden_sizes v wider", 2, 4, 12, 2, qkv=(8, 8, 12))
attention_case("Attention unidirectional", 2, 6, 8, 2, unidirectional=1)
attention_case("Attention mask [B] end positions", 3, 5, 8, 2,
               mask=np.array([5, 3, 1], I32))
attention_case("Attention mask [2B] end and start", 3, 5, 8, 2,
               mask=np.array([5, 4, 3, 0, 1, 2], I32))
attention_case("Attention mask [B, T] raw", 2, 5, 8, 2,
               mask=c.ints(0, 1, 2, 5, dtype=I32) | np.array([[1, 0, 0, 0, 0]], I32))
attention_case("Attention mask [B, S, T]", 2, 4, 8, 2,
               mask=c.ints(0, 1, 2, 4, 4, dtype=I32))
attention_case("Attention mask [B, T] with unidirectional", 2, 5, 8, 2, unidirectional=1,
               mask=np.array([[1, 1, 1, 1, 0], [0, 1, 1, 1, 1]], I32))
attention_case("Attention mask_filter_value", 2, 5, 8, 2, mask_filter_value=-50.0,
               mask=np.array([[1, 1, 0, 1, 0], [0, 1, 1, 1, 1]], I32))
attention_case("Attention past and present", 2, 3, 8, 2, outs=("Y", "present"),
               past=c.randn(2, 2, 2, 4, 4))
attention_case("Attention past, present, unidirectional (GPT-2 step)", 2, 1, 8, 2,
               outs=("Y", "present"), unidirectional=1, past=c.randn(2, 2, 2, 6, 4))
attention_case("Attention past, unidirectional, 3 new tokens, mask [B, T]", 2, 3, 8, 2,
               outs=("Y", "present"), unidirectional=1, past=c.randn(2, 2, 2, 4, 4),
               mask=np.array([[1] * 7, [0, 0, 1, 1, 1, 1, 1]], I32))
attention_case("Attention past, mask [B] end positions", 2, 3, 8, 2, outs=("Y", "present"),
               past=c.randn(2, 2, 2, 2, 4), mask=np.array([4, 2], I32))
attention_case("Attention past, mask [2B] end and start", 2, 3, 8, 2, outs=("Y", "present"),
               past=c.randn(2, 2, 2, 2, 4), mask=np.array([4, 5, 1, 3], I32))
attention_case("Attention past, unidirectional, mask [B, S, T]", 2, 3, 8, 2,
               outs=("Y", "present"), unidirectional=1, past=c.randn(2, 2, 2, 2, 4),
               mask=c.ints(0, 1, 2, 3, 5, dtype=I32))
attention_case("Attention mask [B] end past the total length", 2, 3, 8, 2,
               mask=np.array([7, 2], I32))
attention_case("Attention attention_bias [1, 1, S, T]", 2, 3, 8, 2, attn_bias=c.randn(1, 1, 3, 3))
attention_case("Attention attention_bias [1, N, S, T]", 2, 4, 8, 2,
               attn_bias=c.randn(1, 2, 4, 4))
attention_case("Attention attention_bias [B, 1, S, T] and mask [B]", 2, 4, 8, 2,
               attn_bias=c.randn(2, 1, 4, 4), mask=np.array([4, 2], I32))
attention_case("Attention float16", 2, 4, 8, 2, dtype=np.float16, rtol=5e-3, atol=5e-3)
attention_case("Attention 4 threads, 64 tokens", 2, 64, 64, 4, unidirectional=1)


# 4-D mask [B, 1, M, M] (Megatron GPT-2): onnxruntime's CPU kernel refuses it; numpy reference
def np_attention(x, w, b, n, mask4, past):
    B, S, D = x.shape
    H = D // n
    qkv = x @ w + b
    q, k, v = (qkv[..., i * D:(i + 1) * D].reshape(B, S, n, H).transpose(0, 2, 1, 3)
               for i in range(3))
    P = past.shape[3]
    k = np.concatenate([past[0], k], axis=2)
    v = np.concatenate([past[1], v], axis=2)
    T = P + S
    sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(H)
    m = mask4[:, :, P:P + S, :T]
    sc = sc + np.where(m > 0, 0.0, -10000.0)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    p = sc / sc.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    return y.astype(np.float32), np.stack([k, v]).astype(np.float32)


x4, w4, b4 = c.randn(2, 3, 8), c.randn(8, 24, scale=0.3), c.randn(24, scale=0.2)
past4 = c.randn(2, 2, 2, 2, 4)
mask4 = np.tril(np.ones((6, 6), I32))[None, None].repeat(2, 0)
mask4[1, 0, :, 0] = 0
y4, pres4 = np_attention(x4.astype(np.float64), w4, b4, 2, mask4, past4.astype(np.float64))
c.add("Attention mask [B, 1, M, M] GPT-2 (numpy reference)",
      [attn_node("n0", ["X", "W", "Bi", "M", "P"], ["Y", "present"], num_heads=2)],
      {"X": x4, "M": mask4, "P": past4}, ["Y", "present"], initializers={"W": w4, "Bi": b4},
      ort="none", expected={"Y": y4, "present": pres4})

# without bias onnxruntime's CPU kernel crashes (it reads the bias unconditionally): numpy
xb, wb = c.randn(2, 3, 8), c.randn(8, 24, scale=0.3)
yb, _ = np_attention(xb.astype(np.float64), wb.astype(np.float64), np.zeros(24), 2,
                     np.ones((2, 1, 3, 3), I32), np.zeros((2, 2, 2, 0, 4)))
c.add("Attention without bias (numpy reference)", [attn_node("n0", ["X", "W"], ["Y"], num_heads=2)],
      {"X": xb}, ["Y"], initializers={"W": wb}, ort="none", expected={"Y": yb})

# Attention errors
xe = c.randn(2, 3, 8)


def attention_error(name, why, ort="none", attrs=None, w=None, feeds=None, ins=None, b=None):
    attrs = attrs or {"num_heads": 2}
    w = w if w is not None else c.randn(8, 24)
    # with a bias always: onnxruntime's CPU kernel crashes without one
    inits = {"W": w, "Bi": b if b is not None else c.randn(w.shape[1])}
    f = {"X": xe}
    f.update(feeds or {})
    ins = ["X", "W", "Bi"] + (ins or ["X", "W", ""])[3:]
    c.add(name, [attn_node("n0", ins, ["Y"], **attrs)], f, ["Y"],
          initializers=inits, error=["node 'n0'"] + why, ort=ort)


attention_error("Attention error: num_heads does not divide", ["num_heads", "divide"],
                attrs={"num_heads": 3}, ort="refuses")
attention_error("Attention error: weights width", ["weights width"], w=c.randn(8, 20),
                ort="refuses")
attention_error("Attention error: qkv_hidden_sizes sum", ["qkv_hidden_sizes", "sum"],
                attrs={"num_heads": 2, "qkv_hidden_sizes": [8, 8, 4]}, ort="refuses")
attention_error("Attention error: mask_index rank 5", ["mask_index", "rank"],
                feeds={"M": np.ones((2, 1, 1, 3, 3), I32)}, ins=["X", "W", "", "M"],
                ort="refuses")
attention_error("Attention error: mask_index 1-D length", ["mask_index", "length"],
                feeds={"M": np.array([3, 3, 3], I32)}, ins=["X", "W", "", "M"], ort="refuses")
attention_error("Attention error: mask_index 2-D shape", ["mask_index", "total"],
                feeds={"M": np.ones((2, 4), I32)}, ins=["X", "W", "", "M"], ort="refuses")
attention_error("Attention error: past shape", ["past"],
                feeds={"P": c.randn(2, 2, 3, 2, 4)}, ins=["X", "W", "", "", "P"], ort="refuses")
attention_error("Attention error: negative mask_index end position", ["mask_index", "negative"],
                feeds={"M": np.array([-1, 2], I32)}, ins=["X", "W", "", "M"], ort="refuses")
attention_error("Attention error: 4-D mask_index with unidirectional", ["unidirectional"],
                attrs={"num_heads": 2, "unidirectional": 1},
                feeds={"M": np.ones((2, 1, 3, 3), I32)}, ins=["X", "W", "", "M"], ort="refuses")
attention_error("Attention error: do_rotary", ["do_rotary"],
                attrs={"num_heads": 2, "do_rotary": 1}, ort="refuses")
attention_error("Attention error: past with k and v hidden sizes differing", ["past"],
                attrs={"num_heads": 2, "qkv_hidden_sizes": [8, 8, 4]}, w=c.randn(8, 20),
                feeds={"P": c.randn(2, 2, 2, 2, 4)}, ins=["X", "W", "", "", "P"], ort="refuses")
attention_error("Attention error: past_present_share_buffer", ["past_present_share_buffer"],
                attrs={"num_heads": 2, "past_present_share_buffer": 1},
                feeds={"P": c.randn(2, 2, 2, 6, 4), "PSL": np.array([2], I32)},
                ins=["X", "W", "", "", "P", "", "PSL"], ort="refuses")
attention_error("Attention error: input hidden vs weights rows", ["weights rows"],
                w=c.randn(6, 24), ort="refuses")


# ---------------- MultiHeadAttention ----------------

def mha_case(name, B, S, L, N, H, Hv=None, form="separate", bias=False, kpm=None, past=0,
             attn_bias=None, outs=("Y",), dtype=np.float32, rtol=1e-4, atol=1e-5, **attrs):
    Hv = Hv or H
    D, Dv = N * H, N * Hv
    feeds, ins = {}, []
    if form == "packed_qkv":
        feeds["Q"] = c.randn(B, S, N, 3, H, dtype=dtype)
        ins = ["Q", "", ""]
    elif form == "packed_kv":
        feeds["Q"] = c.randn(B, S, D, dtype=dtype)
        feeds["K"] = c.randn(B, L, N, 2, H, dtype=dtype)
        ins = ["Q", "K", ""]
    elif form == "bnsh":
        feeds["Q"] = c.randn(B, S, D, dtype=dtype)
        feeds["K"] = c.randn(B, N, L, H, dtype=dtype)
        feeds["V"] = c.randn(B, N, L, Hv, dtype=dtype)
        ins = ["Q", "K", "V"]
    else:
        feeds["Q"] = c.randn(B, S, D, dtype=dtype)
        feeds["K"] = c.randn(B, L, D, dtype=dtype)
        feeds["V"] = c.randn(B, L, Dv, dtype=dtype)
        ins = ["Q", "K", "V"]
    ins.append("Bi" if bias else "")
    inits = {"Bi": c.randn(2 * D + Dv, scale=0.3, dtype=dtype)} if bias else {}
    if kpm is not None:
        feeds["KPM"] = kpm
    ins.append("KPM" if kpm is not None else "")
    if attn_bias is not None:
        feeds["AB"] = attn_bias.astype(dtype)
    ins.append("AB" if attn_bias is not None else "")
    if past:
        feeds["PK"] = c.randn(B, N, past, H, dtype=dtype)
        feeds["PV"] = c.randn(B, N, past, Hv, dtype=dtype)
        ins += ["PK", "PV"]
    while ins and ins[-1] == "":
        ins.pop()
    graph_outs = [o for o in outs if o]
    c.add(name, [mha_node("n0", ins, outs, num_heads=N, **attrs)], feeds, graph_outs,
          initializers=inits, rtol=rtol, atol=atol, output_types={o: dtype for o in graph_outs})


mha_case("MHA separate Q, K, V", 2, 4, 6, 2, 4)
mha_case("MHA one row, one head", 1, 1, 1, 1, 8)
mha_case("MHA v head size differs", 2, 3, 5, 3, 4, Hv=6)
mha_case("MHA bias", 2, 4, 4, 2, 4, bias=True)
mha_case("MHA scale", 2, 3, 5, 2, 4, scale=0.3)
mha_case("MHA unidirectional self", 2, 5, 5, 2, 4, unidirectional=1)


# packed Q, K, V and packed K, V: onnxruntime's CPU kernel says "not implemented"; numpy
def np_mha(q, k, v, causal=False, mask=None):
    """q [B, N, S, H], k, v [B, N, T, H] -> [B, S, N * Hv]; mask: additive, broadcast"""
    B, N, S, H = q.shape
    sc = q @ k.transpose(0, 1, 3, 2) / np.sqrt(H)
    if mask is not None:
        sc = sc + mask
    if causal:
        T = k.shape[2]
        sc = sc + np.where(np.arange(T)[None] > np.arange(S)[:, None] + T - S, -1e30, 0.0)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    p = sc / sc.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(B, S, -1).astype(np.float32)


qkv5 = c.randn(2, 4, 2, 3, 4)
bq5 = c.randn(24, scale=0.3)
q5 = qkv5.astype(np.float64) + bq5.reshape(3, 2, 4).transpose(1, 0, 2)[None, None]
heads = [q5[:, :, :, i].transpose(0, 2, 1, 3) for i in range(3)]
c.add("MHA packed QKV with bias (numpy reference)",
      [mha_node("n0", ["Q", "", "", "Bi"], ["Y"], num_heads=2)], {"Q": qkv5}, ["Y"],
      initializers={"Bi": bq5}, ort="none", expected={"Y": np_mha(*heads)})
c.add("MHA packed QKV unidirectional (numpy reference)",
      [mha_node("n0", ["Q"], ["Y"], num_heads=2, unidirectional=1)], {"Q": qkv5}, ["Y"],
      ort="none", expected={"Y": np_mha(*[qkv5.astype(np.float64)[:, :, :, i].transpose(0, 2, 1, 3)
                                          for i in range(3)], causal=True)})
qp, kv5 = c.randn(2, 3, 8), c.randn(2, 5, 2, 2, 4)
kvh = [kv5.astype(np.float64)[:, :, :, i].transpose(0, 2, 1, 3) for i in range(2)]
c.add("MHA packed KV (numpy reference)", [mha_node("n0", ["Q", "K"], ["Y"], num_heads=2)],
      {"Q": qp, "K": kv5}, ["Y"], ort="none",
      expected={"Y": np_mha(qp.astype(np.float64).reshape(2, 3, 2, 4).transpose(0, 2, 1, 3),
                            *kvh)})
mha_case("MHA BNSH cross-attention", 2, 3, 7, 2, 4, form="bnsh")
mha_case("MHA BNSH cross-attention with bias", 2, 3, 7, 2, 4, form="bnsh", bias=True)
mha_case("MHA key_padding_mask [B]", 3, 2, 5, 2, 4, kpm=np.array([5, 2, 1], I32))
mha_case("MHA key_padding_mask [B, L]", 2, 3, 5, 2, 4,
         kpm=np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], I32))
mha_case("MHA key_padding_mask [B, S, L]", 2, 3, 4, 2, 4, kpm=c.ints(0, 1, 2, 3, 4, dtype=I32))
mha_case("MHA attention_bias [1, N, S, L]", 2, 3, 4, 2, 4, attn_bias=c.randn(1, 2, 3, 4))
mha_case("MHA attention_bias [B, N, S, L] with mask", 2, 3, 4, 2, 4,
         attn_bias=c.randn(2, 2, 3, 4), kpm=np.array([[1, 1, 0, 1], [1, 1, 1, 1]], I32))
mha_case("MHA past and present", 2, 2, 2, 2, 4, past=3, outs=("Y", "PKo", "PVo"))
mha_case("MHA past, present, unidirectional decode", 2, 1, 1, 2, 4, past=5,
         outs=("Y", "PKo", "PVo"), unidirectional=1)
mha_case("MHA past, unidirectional, 3 tokens, mask [B, T]", 2, 3, 3, 2, 4, past=2,
         outs=("Y", "PKo", "PVo"), unidirectional=1,
         kpm=np.array([[1] * 5, [0, 1, 1, 1, 1]], I32))
mha_case("MHA key_padding_mask [B, L] with unidirectional, a fully masked row", 2, 4, 4, 2, 4,
         unidirectional=1, kpm=np.array([[1, 1, 1, 0], [0, 1, 1, 1]], I32))
mha_case("MHA BNSH cross-attention with past", 2, 3, 5, 2, 4, form="bnsh", past=5,
         outs=("Y", "PKo", "PVo"))
mha_case("MHA unidirectional cross-attention, more keys than queries", 2, 3, 5, 2, 4,
         unidirectional=1, kpm=np.array([[1, 1, 1, 0, 1], [1, 1, 1, 1, 1]], I32))
mha_case("MHA qk output", 2, 3, 5, 2, 4, outs=("Y", "", "", "QK"))
mha_case("MHA qk output with mask, bias, attention_bias, causal", 2, 4, 4, 2, 4,
         outs=("Y", "", "", "QK"), bias=True, unidirectional=1, attn_bias=c.randn(1, 2, 4, 4),
         kpm=np.array([[1, 1, 1, 0], [1, 1, 1, 1]], I32))
mha_case("MHA float16", 2, 3, 5, 2, 4, dtype=np.float16, rtol=5e-3, atol=5e-3, bias=True)
mha_case("MHA mask_filter_value", 2, 3, 5, 2, 4, mask_filter_value=-30.0,
         kpm=np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], I32))
mha_case("MHA 64 tokens, 4 heads", 2, 64, 64, 4, 16, unidirectional=1)

# past with a key_padding_mask and no causality: onnxruntime's CPU kernel then masks every past
# key and reads the mask with the new keys' stride (its result changes with values the mask does
# not cover), so the reference is numpy with the documented meaning: the mask covers past and
# new keys.
for form, kpm in (("[B]", np.array([6, 3], I32)),
                  ("[B, T]", np.array([[1, 0, 1, 1, 1, 1, 0], [0, 1, 1, 1, 0, 1, 1]], I32))):
    qm, km, vm = c.randn(2, 3, 8), c.randn(2, 5, 8), c.randn(2, 5, 8)
    pk, pv = c.randn(2, 2, 2, 4), c.randn(2, 2, 2, 4)
    kh = np.concatenate([pk, km.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)], 2)
    vh = np.concatenate([pv, vm.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)], 2)
    if kpm.ndim == 1:
        keep = np.arange(7)[None] < kpm[:, None]
    else:
        keep = kpm > 0
    add = np.where(keep, 0.0, -10000.0)[:, None, None, :]
    c.add(f"MHA past with key_padding_mask {form} (numpy reference)",
          [mha_node("n0", ["Q", "K", "V", "", "KPM", "", "PK", "PV"], ["Y"], num_heads=2)],
          {"Q": qm, "K": km, "V": vm, "KPM": kpm, "PK": pk, "PV": pv}, ["Y"], ort="none",
          expected={"Y": np_mha(qm.astype(np.float64).reshape(2, 3, 2, 4).transpose(0, 2, 1, 3),
                                kh.astype(np.float64), vh.astype(np.float64), mask=add)})

# a beam-search step: past_key / past_value are buffers [B, N, max, H] filled up to
# past_sequence_length, cache_indirection [B / beams, beams, max] picks each past position's beam
# (with past_sequence_length 0 onnxruntime's CPU kernel returns buffers it did not fill, so the
# cases start at 1)
for name, beams, P, bias, qk in (("2 beams, past 3, qk", 2, 3, False, True),
                                 ("4 beams, past 1, bias", 4, 1, True, False),
                                 ("4 beams, past 5 (buffer full)", 4, 5, False, False),
                                 ("1 beam, past 2", 1, 2, False, False)):
    B, N, H, M = 4, 2, 4, 6
    feeds = {"Q": c.randn(B, 1, 8), "K": c.randn(B, 1, 8), "V": c.randn(B, 1, 8),
             "PK": c.randn(B, N, M, H), "PV": c.randn(B, N, M, H),
             "PSL": np.array([P], I32), "CI": c.ints(0, beams - 1, B // beams, beams, M, dtype=I32)}
    outs = ["Y", "PKo", "PVo"] + (["QK"] if qk else [])
    # qk's length is past_sequence_length + 1, a value: `onnxc compile` refuses that output
    c.add(f"MHA beam step, {name}",
          [mha_node("n0", ["Q", "K", "V", "Bi" if bias else "", "", "", "PK", "PV", "PSL", "CI"],
                    outs, num_heads=N)], feeds, outs,
          initializers={"Bi": c.randn(24, scale=0.3)} if bias else None,
          compile=["'QK'", "not a fixed number"] if qk else None)


def mha_error(name, why, feeds, ins, ort="refuses", n=2):
    c.add(name, [mha_node("n0", ins, ["Y"], num_heads=n)], feeds, ["Y"],
          error=["node 'n0'"] + why, ort=ort)


q3, k3, v3 = c.randn(2, 3, 8), c.randn(2, 5, 8), c.randn(2, 5, 8)
mha_error("MHA error: num_heads does not divide", ["num_heads", "divide"],
          {"Q": q3, "K": k3, "V": v3}, ["Q", "K", "V"], n=3)
mha_error("MHA error: key_padding_mask shape", ["key_padding_mask"],
          {"Q": q3, "K": k3, "V": v3, "KPM": np.ones((2, 4), I32)}, ["Q", "K", "V", "", "KPM"])
mha_error("MHA error: past_key shape", ["past_key"],
          {"Q": q3, "K": k3, "V": v3, "PK": c.randn(2, 3, 2, 4), "PV": c.randn(2, 3, 2, 4)},
          ["Q", "K", "V", "", "", "", "PK", "PV"])
# past_sequence_length without cache_indirection: onnxruntime's CPU kernel returns presents it
# never filled; onnxc refuses it
mha_error("MHA error: past_sequence_length without cache_indirection", ["cache_indirection"],
          {"Q": q3[:, :1], "K": k3[:, :1], "V": v3[:, :1], "PK": c.randn(2, 2, 6, 4),
           "PV": c.randn(2, 2, 6, 4), "PSL": np.array([3], I32)},
          ["Q", "K", "V", "", "", "", "PK", "PV", "PSL"], ort="none")
mha_error("MHA error: cache_indirection beam out of range", ["cache_indirection", "beam"],
          {"Q": q3[:, :1], "K": k3[:, :1], "V": v3[:, :1], "PK": c.randn(2, 2, 6, 4),
           "PV": c.randn(2, 2, 6, 4), "PSL": np.array([3], I32),
           "CI": np.full((1, 2, 6), 2, I32)},
          ["Q", "K", "V", "", "", "", "PK", "PV", "PSL", "CI"], ort="none")  # onnxruntime crashes
mha_error("MHA error: key rank 2", ["key", "rank"], {"Q": q3, "K": c.randn(2, 8), "V": v3},
          ["Q", "K", "V"])

c.write()
