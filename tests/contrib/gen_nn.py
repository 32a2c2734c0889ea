"""gen_nn.py - cases of the com.microsoft encoder building blocks
(src/ops/contrib/nn.c) for tests/oracle/ort_cases.mjs: the GELU forms, the
layer norms with a skip input, SimplifiedLayerNormalization (default
domain), EmbedLayerNormalization, BiasSoftmax, FusedMatMul and FusedConv.
onnxruntime-node is the oracle; where its CPU provider has no kernel
(BiasSoftmax) or deviates from the operator's definition
(the statistics outputs of the skip layer norms it leaves unset, double
inputs its schema refuses), numpy computes the reference."""
import numpy as np

from cases import Cases, node

c = Cases(seed=11)
F16 = np.float16


def erf(x):
    """erf in float64 (Abramowitz-Stegun 7.1.26 is too coarse): math.erf"""
    import math
    return np.vectorize(math.erf)(x.astype(np.float64))


# ---- QuickGelu: the default alpha, another alpha, a large tensor over threads
x = c.randn(2, 3, 40, scale=3.0)
c.add("QuickGelu default alpha", [node("QuickGelu", ["X"], ["Y"], "qg0")], {"X": x}, ["Y"])
c.add("QuickGelu alpha 1.5", [node("QuickGelu", ["X"], ["Y"], "qg1", alpha=1.5)],
      {"X": x}, ["Y"])
c.add("QuickGelu 300k values", [node("QuickGelu", ["X"], ["Y"], "qg2")],
      {"X": c.randn(3, 100, 1000, scale=4.0)}, ["Y"])

# ---- Gelu (erf), FastGelu (tanh, bias?), BiasGelu (A + B)
c.add("Gelu 2x3x40", [node("Gelu", ["X"], ["Y"], "g0")], {"X": x}, ["Y"])
c.add("Gelu odd 7x33", [node("Gelu", ["X"], ["Y"], "g1")], {"X": c.randn(7, 33, scale=2.5)},
      ["Y"])
c.add("Gelu 200k values", [node("Gelu", ["X"], ["Y"], "g2")],
      {"X": c.randn(2, 100, 1000, scale=3.0)}, ["Y"])
c.add("FastGelu no bias", [node("FastGelu", ["X"], ["Y"], "fg0")], {"X": x}, ["Y"])
c.add("FastGelu bias", [node("FastGelu", ["X", "B"], ["Y"], "fg1")],
      {"X": x, "B": c.randn(40)}, ["Y"])
c.add("FastGelu bias odd 3x7x33", [node("FastGelu", ["X", "B"], ["Y"], "fg2")],
      {"X": c.randn(3, 7, 33, scale=2.0), "B": c.randn(33)}, ["Y"])
c.add("FastGelu bias 1 row", [node("FastGelu", ["X", "B"], ["Y"], "fg3")],
      {"X": c.randn(1, 1, 17), "B": c.randn(17)}, ["Y"])
c.add("FastGelu bias 256k values", [node("FastGelu", ["X", "B"], ["Y"], "fg4")],
      {"X": c.randn(4, 256, 256, scale=3.0), "B": c.randn(256)}, ["Y"])
c.add("BiasGelu 2x5x64", [node("BiasGelu", ["A", "B"], ["Y"], "bg0")],
      {"A": c.randn(2, 5, 64, scale=2.0), "B": c.randn(64)}, ["Y"])
c.add("BiasGelu odd 1x1x17", [node("BiasGelu", ["A", "B"], ["Y"], "bg1")],
      {"A": c.randn(1, 1, 17, scale=2.0), "B": c.randn(17)}, ["Y"])
c.add("BiasGelu 2-D 9x130", [node("BiasGelu", ["A", "B"], ["Y"], "bg2")],
      {"A": c.randn(9, 130, scale=2.0), "B": c.randn(130)}, ["Y"])
c.add("BiasGelu 300k values", [node("BiasGelu", ["A", "B"], ["Y"], "bg3")],
      {"A": c.randn(3, 100, 1000, scale=3.0), "B": c.randn(1000)}, ["Y"])
xh = c.randn(2, 6, 40, scale=2.0, dtype=F16)
bh = c.randn(40, dtype=F16)
c.add("Gelu float16", [node("Gelu", ["X"], ["Y"], "g16")], {"X": xh}, ["Y"],
      output_types={"Y": F16}, rtol=2e-3, atol=2e-3)
c.add("FastGelu float16 bias", [node("FastGelu", ["X", "B"], ["Y"], "fg16")],
      {"X": xh, "B": bh}, ["Y"], output_types={"Y": F16}, rtol=2e-3, atol=2e-3)
c.add("BiasGelu float16", [node("BiasGelu", ["A", "B"], ["Y"], "bg16")],
      {"A": xh, "B": bh}, ["Y"], output_types={"Y": F16}, rtol=2e-3, atol=2e-3)
# errors: a bias that is not 1-D of the last dimension
c.add("FastGelu bias of the wrong length", [node("FastGelu", ["X", "B"], ["Y"], "n0")],
      {"X": x, "B": c.randn(39)}, ["Y"], ort="refuses", error=["node 'n0'", "bias"])
c.add("BiasGelu bias of the wrong length", [node("BiasGelu", ["A", "B"], ["Y"], "n0")],
      {"A": x, "B": c.randn(41)}, ["Y"], ort="refuses", error=["node 'n0'", "bias"])


# ---- SkipLayerNormalization and SkipSimplifiedLayerNormalization
def skip_ln_ref(inp, skip, gamma, beta=None, bias=None, eps=1e-12, rms=False):
    """float64 reference: (output, mean, inv_std_var, sum)"""
    s = inp.astype(np.float64) + skip.astype(np.float64)
    if bias is not None:
        s = s + bias.astype(np.float64)
    mean = np.zeros(s.shape[:-1] + (1,)) if rms else s.mean(-1, keepdims=True)
    var = ((s - mean) ** 2).mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    y = (s - mean) * inv * gamma.astype(np.float64)
    if beta is not None:
        y = y + beta.astype(np.float64)
    return y, mean, inv, s


def skip_case(name, op, shape, skip_shape, beta=True, bias=True, eps=None, dtype=np.float32,
              sum_out=True, rtol=1e-4, atol=1e-4):
    H = shape[-1]
    inp = c.randn(*shape, scale=2.0, dtype=dtype)
    skip = c.randn(*skip_shape, dtype=dtype)
    g = (c.randn(H) * 0.5 + 1.0).astype(dtype)
    b = c.randn(H, dtype=dtype) if beta and op == "SkipLayerNormalization" else None
    bi = c.randn(H, scale=0.5, dtype=dtype) if bias else None
    feeds = {"I": inp, "S": skip, "G": g}
    ins = ["I", "S", "G"]
    if op == "SkipLayerNormalization":
        ins.append("B" if b is not None else "")
        if b is not None:
            feeds["B"] = b
    if bi is not None:
        ins.append("Bi")
        feeds["Bi"] = bi
    while ins[-1] == "":
        ins.pop()
    attrs = {} if eps is None else {"epsilon": eps}
    outs = ["Y", "", "", "Sum"] if sum_out else ["Y"]
    n = node(op, ins, outs, "sl", **attrs)
    ot = {"Y": dtype, "Sum": dtype}
    if dtype == np.float64:
        # onnxruntime's schema stops at float and float16; onnxc takes double too: numpy
        rms = op != "SkipLayerNormalization"
        y, _, _, s = skip_ln_ref(inp, skip, g, b, bi, 1e-12 if eps is None else eps, rms)
        exp = {"Y": y}
        if sum_out:
            exp["Sum"] = s
        c.add(name, [n], feeds, [o for o in outs if o], output_types=ot, rtol=1e-5, atol=1e-5,
              ort="none", expected=exp)
    else:
        c.add(name, [n], feeds, [o for o in outs if o], output_types=ot, rtol=rtol, atol=atol)


for op, tag in (("SkipLayerNormalization", "SkipLN"), ("SkipSimplifiedLayerNormalization",
                                                        "SkipRMS")):
    skip_case(f"{tag} 2x8x32 beta bias sum", op, (2, 8, 32), (2, 8, 32))
    skip_case(f"{tag} no beta no bias", op, (2, 8, 32), (2, 8, 32), beta=False, bias=False)
    skip_case(f"{tag} beta only", op, (3, 5, 24), (3, 5, 24), bias=False)
    skip_case(f"{tag} bias only", op, (3, 5, 24), (3, 5, 24), beta=False)
    skip_case(f"{tag} skip 1xSxH", op, (3, 4, 40), (1, 4, 40))
    skip_case(f"{tag} skip SxH", op, (3, 4, 40), (4, 40), bias=False)
    skip_case(f"{tag} 2-D input", op, (5, 48), (5, 48))
    skip_case(f"{tag} odd H 33 one row", op, (1, 1, 33), (1, 1, 33), sum_out=False)
    skip_case(f"{tag} epsilon 1e-3", op, (2, 3, 16), (2, 3, 16), eps=1e-3)
    skip_case(f"{tag} 4x128x256 threads", op, (4, 128, 256), (4, 128, 256), bias=False)
    skip_case(f"{tag} float16", op, (2, 6, 64), (2, 6, 64), bias=False, dtype=F16, rtol=5e-3,
              atol=5e-3)
    skip_case(f"{tag} double", op, (2, 3, 20), (2, 3, 20), bias=False, dtype=np.float64)

# the statistics outputs, which onnxruntime's CPU kernel leaves unset: numpy
inp, skip = c.randn(2, 3, 16, scale=2.0), c.randn(2, 3, 16)
g, b, bi = c.randn(16) + 1.0, c.randn(16), c.randn(16)
y, mean, inv, s = skip_ln_ref(inp, skip, g, b, bi)
c.add("SkipLN mean and inv_std_var",
      [node("SkipLayerNormalization", ["I", "S", "G", "B", "Bi"], ["Y", "M", "V", "Sum"], "sl")],
      {"I": inp, "S": skip, "G": g, "B": b, "Bi": bi}, ["Y", "M", "V", "Sum"], ort="none",
      expected={"Y": y.astype(np.float32), "M": mean.astype(np.float32),
                "V": inv.astype(np.float32), "Sum": s.astype(np.float32)})
y, mean, inv, s = skip_ln_ref(inp, skip, g, None, None, rms=True)
c.add("SkipRMS inv_std_var",
      [node("SkipSimplifiedLayerNormalization", ["I", "S", "G"], ["Y", "", "V"], "sl")],
      {"I": inp, "S": skip, "G": g}, ["Y", "V"], ort="none",
      expected={"Y": y.astype(np.float32), "V": inv.astype(np.float32)})

# errors
for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"):
    i3 = c.randn(2, 4, 16)
    c.add(f"{op} gamma of the wrong length", [node(op, ["I", "S", "G"], ["Y"], "n0")],
          {"I": i3, "S": i3, "G": c.randn(15)}, ["Y"], ort="refuses",
          error=["node 'n0'", "gamma"])
    c.add(f"{op} skip of another hidden size", [node(op, ["I", "S", "G"], ["Y"], "n0")],
          {"I": i3, "S": c.randn(2, 4, 17), "G": c.randn(16)}, ["Y"], ort="refuses",
          error=["node 'n0'", "skip"])
    c.add(f"{op} skip of rank 4", [node(op, ["I", "S", "G"], ["Y"], "n0")],
          {"I": i3, "S": c.randn(1, 2, 4, 16), "G": c.randn(16)}, ["Y"], ort="refuses",
          error=["node 'n0'", "skip"])
    bias_in = ["I", "S", "G", "", "Bi"] if op == "SkipLayerNormalization" else ["I", "S", "G", "Bi"]
    c.add(f"{op} bias of the wrong length", [node(op, bias_in, ["Y"], "n0")],
          {"I": i3, "S": i3, "G": c.randn(16), "Bi": c.randn(8)}, ["Y"],
          ort="refuses", error=["node 'n0'", "bias"])


# ---- SimplifiedLayerNormalization (default domain, since 1)
def rms_ref(x, scale, axis, eps=1e-5):
    ax = tuple(range(axis % x.ndim, x.ndim))
    xd = x.astype(np.float64)
    inv = 1.0 / np.sqrt((xd * xd).mean(axis=ax, keepdims=True) + eps)
    return xd * inv * scale.astype(np.float64), inv


def rms_case(name, shape, axis=None, eps=None, dtype=np.float32, inv_out=False, sshape=None,
             **kw):
    x = c.randn(*shape, scale=2.0, dtype=dtype)
    a = -1 if axis is None else axis
    sc = (c.randn(*(sshape or shape[a % len(shape):])) * 0.5 + 1.0).astype(dtype)
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if eps is not None:
        attrs["epsilon"] = eps
    outs = ["Y", "V"] if inv_out else ["Y"]
    c.add(name, [node("SimplifiedLayerNormalization", ["X", "S"], outs, "rn", domain="", **attrs)],
          {"X": x, "S": sc}, outs, output_types={"Y": dtype}, ms_opset=0, **kw)


rms_case("SimplifiedLN 2x5x32", (2, 5, 32))
rms_case("SimplifiedLN odd 3x7x33 inv_std_var", (3, 7, 33), inv_out=True)
rms_case("SimplifiedLN axis 1 of 2x4x8", (2, 4, 8), axis=1, inv_out=True)
rms_case("SimplifiedLN epsilon 1e-2", (4, 10), eps=1e-2)
rms_case("SimplifiedLN axis 1 scale broadcast [8]", (2, 4, 8), axis=1, sshape=(8,))
rms_case("SimplifiedLN axis -2 scale [3, 1]", (2, 3, 5), axis=-2, sshape=(3, 1), inv_out=True)
rms_case("SimplifiedLN one row", (1, 65))
rms_case("SimplifiedLN 8x128x512 threads", (8, 128, 512))
rms_case("SimplifiedLN float16", (2, 6, 64), dtype=F16, rtol=5e-3, atol=5e-3)
rms_case("SimplifiedLN double", (3, 20), dtype=np.float64)
c.add("SimplifiedLN scale of the wrong length",
      [node("SimplifiedLayerNormalization", ["X", "S"], ["Y"], "n0", domain="")],
      {"X": c.randn(2, 8), "S": c.randn(7)}, ["Y"], ms_opset=0, ort="refuses",
      error=["node 'n0'", "scale"])


# ---- EmbedLayerNormalization
def embed_case(name, B, S, H, V=30, P=16, G=2, segment=True, mask=True, pos_ids=None,
               emb_sum=False, eps=None, ids=None, gamma_len=None, ort="compare", error=None):
    inputs = {"ids": ids if ids is not None else c.ints(0, V - 1, B, S, dtype=np.int32)}
    ins = ["ids", "seg" if segment else "", "W", "P", "SE" if segment else "", "G", "Bt"]
    if segment:
        inputs["seg"] = c.ints(0, G - 1, B, S, dtype=np.int32)
    inputs["W"] = c.randn(V, H)
    inputs["P"] = c.randn(P, H)
    if segment:
        inputs["SE"] = c.randn(G, H)
    inputs["G"] = c.randn(gamma_len or H) * 0.5 + 1.0
    inputs["Bt"] = c.randn(H)
    if mask:
        m = np.ones((B, S), np.int32)
        for b in range(B):
            m[b, S - b % S:] = 0
        inputs["M"] = m
        ins.append("M")
    if pos_ids is not None:
        if not mask:
            ins.append("")
        inputs["pid"] = pos_ids
        ins.append("pid")
    outs = ["Y", "MI"] + (["ES"] if emb_sum else [])
    attrs = {} if eps is None else {"epsilon": eps}
    c.add(name, [node("EmbedLayerNormalization", ins, outs, "n0" if error else "em", **attrs)],
          inputs, outs, output_types={"MI": np.int32}, ort=ort, error=error, rtol=1e-4,
          atol=1e-4)


embed_case("EmbedLN segment mask", 2, 7, 32)
embed_case("EmbedLN no mask", 2, 7, 32, mask=False)
embed_case("EmbedLN no segment", 3, 5, 24, segment=False)
embed_case("EmbedLN embedding_sum", 2, 6, 16, emb_sum=True)
embed_case("EmbedLN epsilon 1e-5 odd H", 1, 9, 33, eps=1e-5)
embed_case("EmbedLN position_ids 1xS", 2, 5, 16, pos_ids=np.array([[4, 3, 2, 1, 0]], np.int32))
embed_case("EmbedLN position_ids BxS", 2, 4, 16,
           pos_ids=np.array([[0, 2, 4, 6], [1, 3, 5, 7]], np.int32))
embed_case("EmbedLN 4x64x128 threads", 4, 64, 128, V=500, P=64)
embed_case("EmbedLN input id out of range", 2, 4, 16,
           ids=np.array([[1, 2, 3, 4], [5, 30, 0, 1]], np.int32), ort="refuses",
           error=["node 'n0'", "out of"])
embed_case("EmbedLN gamma of the wrong length", 2, 4, 16, gamma_len=15, ort="refuses",
           error=["node 'n0'", "gamma"])


# ---- BiasSoftmax: no CPU kernel in onnxruntime, numpy
def bsm_ref(x, b, axis):
    xd = x.astype(np.float64) + b.astype(np.float64)
    shp = xd.shape
    a = axis % len(shp)
    z = xd.reshape(int(np.prod(shp[:a])), -1)
    z = np.exp(z - z.max(-1, keepdims=True))
    return (z / z.sum(-1, keepdims=True)).reshape(shp)


def bsm_case(name, shape, bshape, axis, inner, **kw):
    x, b = c.randn(*shape, scale=3.0), c.randn(*bshape, scale=2.0)
    attrs = {"is_inner_broadcast": inner}
    if axis is not None:
        attrs["axis"] = axis
    if kw.get("error"):
        c.add(name, [node("BiasSoftmax", ["X", "B"], ["Y"], "n0", **attrs)], {"X": x, "B": b},
              ["Y"], ort="none", **kw)
        return
    y = bsm_ref(x, b, 1 if axis is None else axis).astype(np.float32)
    c.add(name, [node("BiasSoftmax", ["X", "B"], ["Y"], "bs", **attrs)], {"X": x, "B": b}, ["Y"],
          ort="none", expected={"Y": y}, **kw)


bsm_case("BiasSoftmax axis 3 inner mask [B,1,1,T]", (2, 3, 4, 5), (2, 1, 1, 5), 3, 1)
bsm_case("BiasSoftmax axis 3 outer bias [N,S,T]", (2, 3, 4, 5), (3, 4, 5), 3, 0)
bsm_case("BiasSoftmax axis 3 outer bias [1,1,S,T]", (2, 3, 4, 7), (1, 1, 4, 7), 3, 0)
bsm_case("BiasSoftmax axis 2 outer", (2, 3, 4, 5), (1, 3, 4, 5), 2, 0)
bsm_case("BiasSoftmax axis 2 inner", (2, 3, 4, 5), (2, 1, 4, 5), 2, 1)
bsm_case("BiasSoftmax default axis 1", (3, 4, 6), (1, 4, 6), None, 0)
bsm_case("BiasSoftmax axis -1 same shape", (2, 5, 33), (2, 5, 33), -1, 0)
bsm_case("BiasSoftmax 8x12x64x64 threads", (8, 12, 64, 64), (8, 1, 1, 64), 3, 1)
xh, bh = c.randn(2, 3, 4, 9, scale=3.0, dtype=F16), c.randn(2, 1, 1, 9, dtype=F16)
c.add("BiasSoftmax float16", [node("BiasSoftmax", ["X", "B"], ["Y"], "bs", axis=3,
                                   is_inner_broadcast=1)],
      {"X": xh, "B": bh}, ["Y"], ort="none", output_types={"Y": F16}, rtol=2e-3, atol=1e-3,
      expected={"Y": bsm_ref(xh, bh, 3).astype(F16)})
bsm_case("BiasSoftmax bias not broadcastable", (2, 3, 4, 5), (2, 3, 4, 6), 3, 0,
         error=["node 'n0'", "bias"])
bsm_case("BiasSoftmax inner pattern with outer bias", (2, 3, 4, 5), (1, 3, 4, 5), 3, 1,
         error=["node 'n0'", "bias"])


# ---- FusedMatMul
def fmm_case(name, ashape, bshape, **attrs):
    c.add(name, [node("FusedMatMul", ["A", "B"], ["Y"], "fm", **attrs)],
          {"A": c.randn(*ashape), "B": c.randn(*bshape)}, ["Y"], rtol=1e-4, atol=1e-4)


fmm_case("FusedMatMul 3x4 4x5", (3, 4), (4, 5))
fmm_case("FusedMatMul alpha 0.5", (3, 4), (4, 5), alpha=0.5)
fmm_case("FusedMatMul transA", (4, 3), (4, 5), transA=1)
fmm_case("FusedMatMul transB alpha", (3, 4), (5, 4), transB=1, alpha=-1.25)
fmm_case("FusedMatMul transA transB", (4, 3), (5, 4), transA=1, transB=1)
fmm_case("FusedMatMul batched", (2, 3, 4), (2, 4, 5))
fmm_case("FusedMatMul broadcast B 2-D", (2, 3, 4), (4, 5), transA=0, alpha=2.0)
fmm_case("FusedMatMul batched transB", (2, 3, 4), (2, 5, 4), transB=1)
fmm_case("FusedMatMul transBatchA", (3, 2, 4), (2, 4, 5), transBatchA=1)
fmm_case("FusedMatMul transBatchB", (2, 3, 4), (4, 2, 5), transBatchB=1)
fmm_case("FusedMatMul transBatchA transA", (4, 2, 3), (2, 4, 5), transBatchA=1, transA=1)
fmm_case("FusedMatMul transBatchB transB", (2, 3, 4), (5, 2, 4), transBatchB=1, transB=1)
fmm_case("FusedMatMul 4-D transBatchA", (3, 2, 2, 4), (2, 2, 4, 5), transBatchA=1, alpha=0.75)
fmm_case("FusedMatMul 96x200 200x130", (96, 200), (200, 130), alpha=0.125)
c.add("FusedMatMul float16 transB", [node("FusedMatMul", ["A", "B"], ["Y"], "fm", transB=1,
                                          alpha=0.5)],
      {"A": c.randn(2, 3, 8, dtype=F16), "B": c.randn(5, 8, dtype=F16)}, ["Y"],
      output_types={"Y": F16}, rtol=5e-3, atol=5e-3)
c.add("FusedMatMul inner dims differ", [node("FusedMatMul", ["A", "B"], ["Y"], "n0", transA=1)],
      {"A": c.randn(3, 4), "B": c.randn(5, 5)}, ["Y"], ort="refuses", error=["node 'n0'"])


# ---- FusedConv
def conv_case(name, xs, ws, act=None, params=None, bias=True, z=False, **attrs):
    inputs = {"X": c.randn(*xs), "W": c.randn(*ws, scale=0.5)}
    ins = ["X", "W"]
    if bias:
        inputs["B"] = c.randn(ws[0])
        ins.append("B")
    if z:
        if not bias:
            ins.append("")
        ins.append("Z")
    if act is not None:
        attrs["activation"] = act
    if params is not None:
        attrs["activation_params"] = params
    if z:
        # Z of Y's shape: from the output size of the convolution
        k = ws[2:]
        st = attrs.get("strides", [1] * len(k))
        pads = attrs.get("pads", [0] * 2 * len(k))
        osz = [(xs[2 + i] + pads[i] + pads[i + len(k)] - k[i]) // st[i] + 1 for i in range(len(k))]
        inputs["Z"] = c.randn(xs[0], ws[0], *osz)
    c.add(name, [node("FusedConv", ins, ["Y"], "fc", **attrs)], inputs, ["Y"], rtol=1e-4,
          atol=1e-4)


conv_case("FusedConv no activation", (1, 3, 8, 8), (4, 3, 3, 3))
conv_case("FusedConv Relu pads", (1, 3, 8, 8), (4, 3, 3, 3), "Relu", pads=[1, 1, 1, 1])
conv_case("FusedConv Tanh", (2, 3, 7, 9), (5, 3, 3, 3), "Tanh")
conv_case("FusedConv Sigmoid strides", (1, 4, 9, 9), (6, 4, 3, 3), "Sigmoid", strides=[2, 2])
conv_case("FusedConv LeakyRelu", (1, 3, 8, 8), (4, 3, 3, 3), "LeakyRelu", [0.1])
conv_case("FusedConv Clip", (1, 3, 8, 8), (4, 3, 1, 1), "Clip", [-0.5, 0.5])
conv_case("FusedConv HardSigmoid", (1, 3, 8, 8), (4, 3, 3, 3), "HardSigmoid", [0.2, 0.5])
conv_case("FusedConv Relu Z", (1, 3, 8, 8), (4, 3, 3, 3), "Relu", z=True, pads=[1, 1, 1, 1])
conv_case("FusedConv Tanh Z no bias", (2, 3, 6, 6), (4, 3, 3, 3), "Tanh", bias=False, z=True)
conv_case("FusedConv Sigmoid Z", (1, 2, 5, 5), (3, 2, 3, 3), "Sigmoid", z=True)
conv_case("FusedConv group 2 Relu", (1, 4, 6, 6), (6, 2, 3, 3), "Relu", group=2)
conv_case("FusedConv 1-D LeakyRelu", (2, 3, 17), (4, 3, 5), "LeakyRelu", [0.2])
conv_case("FusedConv 64ch 28x28 Relu", (1, 32, 28, 28), (64, 32, 3, 3), "Relu", pads=[1, 1, 1, 1])
c.add("FusedConv unknown activation",
      [node("FusedConv", ["X", "W"], ["Y"], "n0", activation="Swoosh")],
      {"X": c.randn(1, 3, 8, 8), "W": c.randn(4, 3, 3, 3)}, ["Y"], ort="refuses",
      error=["node 'n0'", "unknown activation"])

c.write()
