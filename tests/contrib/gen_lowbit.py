"""gen_lowbit.py - cases of com.microsoft MatMulNBits, GatherBlockQuantized and the contrib
QuantizeLinear / DequantizeLinear (src/ops/contrib/lowbit.c) for tests/oracle/ort_cases.mjs.

Every MatMulNBits and GatherBlockQuantized case also carries a float64 numpy reference built
from the unpacked weights (`expected`), which onnxruntime's output is checked against by hand
(see the report of the contrib-lowbit branch); the harness compares onnxc with onnxruntime."""
import numpy as np
from onnx import TensorProto, helper

from cases import Cases, node

c = Cases(seed=23)
rng = c.rng


def pack_fields(vals, bits):
    """uint8 fields of `bits` bits, the last axis packed low field first (8 / bits per byte);
    the last axis is padded with zeros to whole bytes"""
    per = 8 // bits
    v = vals.astype(np.uint8)
    pad = (-v.shape[-1]) % per
    if pad:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (pad,), np.uint8)], axis=-1)
    v = v.reshape(v.shape[:-1] + (-1, per))
    out = np.zeros(v.shape[:-1], np.uint8)
    for j in range(per):
        out |= (v[..., j] << (bits * j)).astype(np.uint8)
    return out


def nbits(K, N, bits, bs, zp=None, g_idx=None, two_d=False, dtype=np.float32):
    """MatMulNBits constants: B [N, k_blocks, blob], scales, zero points (None, "packed" or
    "float"), and the float weights W [N, K] they stand for (float64)."""
    kb = -(-K // bs)
    q = rng.integers(0, 2 ** bits, size=(N, kb * bs)).astype(np.uint8)
    B = pack_fields(q.reshape(N, kb, bs), bits)
    s = (rng.random((N, kb)) * 0.05 + 0.01).astype(dtype)
    if zp == "packed":
        z = rng.integers(0, 2 ** bits, size=(N, kb)).astype(np.uint8)
        Z = pack_fields(z, bits)
    elif zp == "float":
        z = (rng.random((N, kb)) * (2 ** bits - 1)).astype(dtype)
        Z = z
    else:
        z = np.full((N, kb), 2 ** (bits - 1), np.float64)
        Z = None
    g = np.arange(K) // bs if g_idx is None else g_idx[:K]
    W = (q[:, :K].astype(np.float64) - z.astype(np.float64)[:, g]) * s.astype(np.float64)[:, g]
    if not two_d:
        s = s.reshape(-1)
        if Z is not None:
            Z = Z.reshape(-1)
    return B, s, Z, W


def matmul_nbits(name, a_shape, K, N, bits=4, bs=32, zp=None, g_idx=None, bias=False,
                 two_d=False, level=None, dtype=np.float32, rtol=1e-4, atol=1e-4, ort="compare",
                 error=None, attrs=None, consts=None):
    """one MatMulNBits case; A is fed at run time, the rest are constants"""
    B, s, Z, W = nbits(K, N, bits, bs, zp, g_idx, two_d, dtype)
    A = c.randn(*a_shape, dtype=dtype)
    init = {"B": B, "scales": s}
    ins = ["A", "B", "scales"]
    ins.append("zp" if Z is not None else "")
    if Z is not None:
        init["zp"] = Z
    if g_idx is not None:
        init["g_idx"] = g_idx.astype(np.int32)
    ins.append("g_idx" if g_idx is not None else "")
    ref = A.astype(np.float64) @ W.T
    if bias:
        init["bias"] = c.randn(N, dtype=dtype)
        ins.append("bias")
        ref = ref + init["bias"].astype(np.float64)
    while ins[-1] == "":
        ins.pop()
    at = dict(K=K, N=N, bits=bits, block_size=bs)
    if level is not None:
        at["accuracy_level"] = level
    at.update(attrs or {})
    init.update(consts or {})
    c.add(name, [node("MatMulNBits", ins, ["Y"], "n0", **at)], {"A": A}, ["Y"],
          initializers=init, rtol=rtol, atol=atol, ort=ort, error=error,
          output_types={"Y": dtype}, expected=None if error else {"Y": ref.astype(dtype)})


# ---- MatMulNBits: widths, block sizes, zero points, shapes ----
matmul_nbits("MatMulNBits 4-bit bs32 one row", (1, 64), 64, 8)
matmul_nbits("MatMulNBits 4-bit bs16 short last block, N odd, packed zp", (3, 40), 40, 7, bs=16,
             zp="packed")
matmul_nbits("MatMulNBits 4-bit batch dims, float zp, bias", (2, 3, 96), 96, 33, zp="float",
             bias=True)
matmul_nbits("MatMulNBits 4-bit 2-D scales and zp", (2, 80), 80, 11, bs=16, zp="packed",
             two_d=True)
matmul_nbits("MatMulNBits 4-bit bs128 several column groups", (5, 200), 200, 130, bs=128,
             zp="packed", bias=True)
matmul_nbits("MatMulNBits 4-bit bs256 decode", (1, 1, 520), 520, 70, bs=256)
matmul_nbits("MatMulNBits 4-bit bs64 K 4096 decode", (1, 4096), 4096, 96, bs=64, zp="packed",
             rtol=1e-4, atol=3e-4)
matmul_nbits("MatMulNBits 4-bit two rows", (2, 128), 128, 65, zp="packed")
matmul_nbits("MatMulNBits 4-bit rank-1 A", (64,), 64, 9)
matmul_nbits("MatMulNBits 2-bit bs16 packed zp", (4, 48), 48, 5, bits=2, bs=16, zp="packed")
matmul_nbits("MatMulNBits 2-bit one row short block", (1, 70), 70, 12, bits=2, bs=32)
matmul_nbits("MatMulNBits 2-bit float zp bias", (3, 64), 64, 6, bits=2, bs=16, zp="float",
             bias=True)
matmul_nbits("MatMulNBits 8-bit bs32", (2, 72), 72, 9, bits=8)
matmul_nbits("MatMulNBits 8-bit packed zp decode", (1, 256), 256, 67, bits=8, bs=64,
             zp="packed", bias=True)
# onnxruntime 1.30 refuses float zero points with 8 bits (its unpacked path takes 2 and 4):
# the numpy reference
matmul_nbits("MatMulNBits 8-bit float zp", (3, 50), 50, 4, bits=8, bs=16, zp="float",
             ort="none")
# act-order (GPTQ): g_idx from a permutation, equal groups; and an arbitrary one.
# onnxruntime 1.30 ignores uint8 zero points when g_idx is given (it dequantizes with
# 2^(bits - 1)); onnxc applies them as documented: those cases take the numpy reference.
perm = rng.permutation(64)
matmul_nbits("MatMulNBits g_idx act-order packed zp", (2, 64), 64, 6, bs=16, zp="packed",
             g_idx=perm // 16, ort="none")
matmul_nbits("MatMulNBits g_idx act-order float zp", (3, 64), 64, 9, bs=16, zp="float",
             g_idx=rng.permutation(64) // 16)
matmul_nbits("MatMulNBits g_idx act-order decode bias", (1, 96), 96, 70, bs=32, g_idx=rng.permutation(96) // 32,
             bias=True)
matmul_nbits("MatMulNBits g_idx uneven groups", (3, 48), 48, 5, bs=16, zp="packed",
             g_idx=rng.integers(0, 3, size=48), ort="none")
matmul_nbits("MatMulNBits g_idx uneven groups no zp", (3, 48), 48, 5, bs=16,
             g_idx=rng.integers(0, 3, size=48))
# onnxruntime 1.30 gives other values with 2 bits and g_idx (not those of its documented
# dequantization, which its 2-bit product without g_idx follows): the numpy reference
matmul_nbits("MatMulNBits g_idx 2-bit", (2, 64), 64, 5, bits=2, bs=16,
             g_idx=rng.permutation(64) // 16, bias=True, ort="none")
matmul_nbits("MatMulNBits g_idx padded to whole blocks, short last block", (2, 40), 40, 6,
             bs=16, g_idx=np.concatenate([rng.permutation(np.arange(40) // 16),
                                          np.zeros(8, np.int64)]))
matmul_nbits("MatMulNBits g_idx one group holds most", (2, 64), 64, 7, bs=16,
             g_idx=np.where(np.arange(64) < 50, 1, rng.integers(0, 4, size=64)))
# block_size 512: onnxruntime's CPU kernel stops at 256; onnxc's decoder takes it
matmul_nbits("MatMulNBits block_size 512", (2, 1100), 1100, 20, bs=512, zp="packed",
             ort="none", atol=3e-4)
# accuracy_level 4: onnxruntime quantizes A to int8 per block (about 1/254 of a block's
# largest activation); onnxc does too for one and two rows where the CPU has AVX512-VNNI (the
# two then agree to float rounding), and computes in float elsewhere and for more rows (those
# differ from onnxruntime by its quantization error)
def has_vnni():
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_vnni" in f.read()
    except OSError:
        return False


tight = dict(rtol=1e-5, atol=1e-5) if has_vnni() else dict(rtol=0, atol=0.15)
for M in (1, 2):
    matmul_nbits(f"MatMulNBits accuracy_level 4, {M} rows", (M, 256), 256, 40, level=4,
                 zp="packed", **tight)
matmul_nbits("MatMulNBits accuracy_level 4, 4 rows (float here)", (4, 256), 256, 40, level=4,
             zp="packed", rtol=0, atol=0.15)
matmul_nbits("MatMulNBits accuracy_level 4 8-bit", (1, 128), 128, 24, bits=8, level=4,
             **(tight if has_vnni() else dict(rtol=0, atol=1.5)))
matmul_nbits("MatMulNBits accuracy_level 1", (2, 64), 64, 8, level=1)
# float16
matmul_nbits("MatMulNBits float16 A", (2, 64), 64, 10, dtype=np.float16, zp="packed",
             bias=True, rtol=2e-3, atol=2e-3)
matmul_nbits("MatMulNBits float16 decode float zp", (1, 96), 96, 17, dtype=np.float16,
             zp="float", rtol=2e-3, atol=2e-3)

# ---- MatMulNBits: bad models ----
matmul_nbits("MatMulNBits block_size 24", (1, 48), 48, 4, bs=24, ort="refuses",
             error=["node 'n0'", "block_size"])
matmul_nbits("MatMulNBits block_size 8", (1, 32), 32, 4, bs=8, ort="refuses",
             error=["node 'n0'", "block_size"])
matmul_nbits("MatMulNBits K disagrees with B", (1, 64), 64, 4, attrs={"K": 128},
             ort="refuses", error=["node 'n0'", "B"])
matmul_nbits("MatMulNBits N disagrees with B", (1, 64), 64, 4, attrs={"N": 5},
             ort="refuses", error=["node 'n0'", "B"])
matmul_nbits("MatMulNBits scales wrong length", (1, 64), 64, 4,
             consts={"scales": np.ones(7, np.float32)}, ort="refuses",
             error=["node 'n0'", "scales"])
matmul_nbits("MatMulNBits zero points wrong length", (1, 64), 64, 4, zp="packed",
             consts={"zp": np.zeros(3, np.uint8)}, ort="refuses",
             error=["node 'n0'", "zero_points"])
matmul_nbits("MatMulNBits bits 3", (1, 64), 64, 4, attrs={"bits": 3}, ort="refuses",
             error=["node 'n0'", "bits"])
matmul_nbits("MatMulNBits g_idx wrong length", (1, 64), 64, 4, g_idx=np.arange(64) // 32,
             consts={"g_idx": np.zeros(10, np.int32)}, ort="refuses",
             error=["node 'n0'", "g_idx"])
matmul_nbits("MatMulNBits g_idx out of range", (1, 64), 64, 4, g_idx=np.arange(64) // 32,
             consts={"g_idx": np.full(64, 5, np.int32)}, ort="refuses",
             error=["node 'n0'", "g_idx"])


# ---- GatherBlockQuantized ----
def raw_tensor(name, dtype, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = raw.tobytes()
    return t


def gbq(name, V, H, idx, bits=4, bs=16, zp=False, kind="uint8", sdtype=np.float32,
        gather_axis=None, quantize_axis=None, ort="compare", error=None, idx_const=False):
    """GatherBlockQuantized over a [V, H] table (or [H, V] with the int4 kinds and
    gather_axis 1, quantize_axis 0), blocks along H"""
    nb = -(-H // bs)
    q = rng.integers(0, 2 ** bits, size=(V, H)).astype(np.uint8)
    s = (rng.random((V, nb)) * 0.1 + 0.01).astype(sdtype)
    z = rng.integers(0, 2 ** bits, size=(V, nb)).astype(np.uint8) if zp else None
    if kind == "uint8":
        zdef = 2 ** (bits - 1)
    else:
        zdef = 0
    zz = (z if zp else np.full((V, nb), zdef)).astype(np.float64)
    blk = np.arange(H) // bs
    if kind == "int4":  # the fields as signed 4-bit values
        qv = np.where(q >= 8, q.astype(np.int64) - 16, q)
        zv = np.where(zz >= 8, zz - 16, zz) if zp else zz
    else:
        qv, zv = q.astype(np.int64), zz
    deq = (qv - zv[:, blk]) * s.astype(np.float64)[:, blk]  # [V, H]
    transpose = kind != "uint8" and gather_axis == 1
    inits, extra = {}, []
    attrs = dict(block_size=bs, bits=bits)
    if gather_axis is not None:
        attrs["gather_axis"] = gather_axis
    if quantize_axis is not None:
        attrs["quantize_axis"] = quantize_axis
    if kind == "uint8":
        inits["data"] = pack_fields(q, bits)
        inits["scales"] = s
        if zp:
            inits["zp"] = pack_fields(z, bits)
    else:
        code = 22 if kind == "int4" else 21  # INT4, UINT4 (onnx 1.16 names)
        data = q if not transpose else q.T.copy()
        sc = s if not transpose else s.T.copy()
        inits["scales"] = sc
        extra.append(raw_tensor("data", code, list(data.shape), pack_fields(data.reshape(-1), 4)))
        if zp:
            zd = z if not transpose else z.T.copy()
            extra.append(raw_tensor("zp", code, list(zd.shape), pack_fields(zd.reshape(-1), 4)))
    ins = ["data", "idx", "scales"] + (["zp"] if zp else [])
    feeds = {} if idx_const else {"idx": idx}
    if idx_const:
        inits["idx"] = idx
    ref = None
    if not error:
        if transpose:
            ref = np.take(deq.T, idx, axis=1)
        else:
            ref = deq[np.where(idx < 0, idx + V, idx)]
        ref = {"Y": ref.astype(sdtype)}
    n = node("GatherBlockQuantized", ins, ["Y"], "g0", **attrs)
    c.add(name, [n], feeds, ["Y"], initializers=inits, ort=ort, error=error, expected=ref,
          output_types={"Y": sdtype}, rtol=1e-5, atol=1e-6)
    if extra:  # the int4 constants, which numpy_helper of onnx 1.12 cannot write
        import onnx, os
        path = os.path.join(c.dir, c.cases[-1]["model"])
        m = onnx.load(path)
        m.graph.initializer.extend(extra)
        onnx.save(m, path)


gbq("GatherBlockQuantized uint8 4-bit", 10, 64, np.array([[3, 0, 9], [9, 1, 3]], np.int64))
gbq("GatherBlockQuantized uint8 4-bit zp, short block", 7, 40,
    np.array([6, -1, 2], np.int64), zp=True)
gbq("GatherBlockQuantized uint8 4-bit int32 indices", 5, 32, np.array([4, 0], np.int32),
    bs=32, zp=True)
gbq("GatherBlockQuantized uint8 8-bit", 6, 48, np.array([5, 2, 2, 0], np.int64), bits=8,
    zp=True)
gbq("GatherBlockQuantized uint8 8-bit no zp", 6, 48, np.array([1], np.int64), bits=8)
gbq("GatherBlockQuantized uint8 2-bit", 9, 64, np.array([[8], [0]], np.int64), bits=2,
    zp=True)
gbq("GatherBlockQuantized uint8 float16 scales", 8, 64, np.array([7, 3], np.int64),
    sdtype=np.float16, zp=True)
gbq("GatherBlockQuantized uint8 scalar index", 8, 32, np.array(2, np.int64), idx_const=True)
gbq("GatherBlockQuantized uint4", 8, 64, np.array([1, 6, 7], np.int64), kind="uint4",
    zp=True)
gbq("GatherBlockQuantized int4", 8, 64, np.array([[0, 5]], np.int64), kind="int4",
    zp=True)
gbq("GatherBlockQuantized int4 no zp", 8, 64, np.array([2, -3], np.int64), kind="int4")
gbq("GatherBlockQuantized uint4 gather_axis 1 quantize_axis 0", 6, 32,
    np.array([5, 0, 3], np.int64), kind="uint4", zp=True, gather_axis=1, quantize_axis=0)
gbq("GatherBlockQuantized index out of range", 6, 32, np.array([1, 6], np.int64),
    ort="none", error=["node 'g0'", "out of range"], idx_const=True)
gbq("GatherBlockQuantized index out of range at run", 6, 32, np.array([-7], np.int64),
    ort="none", error=["node 'g0'", "out of range"])
gbq("GatherBlockQuantized block_size 20", 6, 40, np.array([1], np.int64), bs=20,
    ort="refuses", error=["node 'g0'", "block_size"])


# ---- com.microsoft QuantizeLinear / DequantizeLinear ----
def qdq(name, op, x, s, z=None, axis=None, out=np.float32, ort="compare", extra=None):
    inits = {"s": s}
    ins = ["x", "s"]
    if z is not None:
        inits["z"] = z
        ins.append("z")
    attrs = {} if axis is None else {"axis": axis}
    c.add(name, [node(op, ins, ["y"], "q0", **attrs)], {"x": x}, ["y"], initializers=inits,
          ort=ort, output_types={"y": out}, rtol=1e-6, atol=1e-6)


x = c.randn(2, 3, 5, scale=4.0)
qdq("ms QuantizeLinear uint8 per tensor", "QuantizeLinear", x, np.float32(0.05),
    np.uint8(128), out=np.uint8)
qdq("ms QuantizeLinear int8 per axis", "QuantizeLinear", x,
    np.array([0.02, 0.05, 0.1], np.float32), np.array([1, -3, 0], np.int8), axis=1,
    out=np.int8)
qdq("ms QuantizeLinear uint16", "QuantizeLinear", x, np.float32(0.001), np.uint16(30000),
    out=np.uint16)
qdq("ms QuantizeLinear int16 axis -1", "QuantizeLinear", x,
    np.linspace(0.0005, 0.002, 5).astype(np.float32), np.zeros(5, np.int16), axis=-1,
    out=np.int16)
qdq("ms QuantizeLinear no zero point", "QuantizeLinear", x, np.float32(0.1), out=np.uint8)
xq = c.ints(0, 255, 2, 3, 5, dtype=np.uint8)
qdq("ms DequantizeLinear uint8", "DequantizeLinear", xq, np.float32(0.05), np.uint8(100))
qdq("ms DequantizeLinear int8 per axis", "DequantizeLinear", c.ints(-128, 127, 2, 3, 5,
    dtype=np.int8), np.array([0.02, 0.05, 0.1], np.float32), np.array([1, -3, 0], np.int8),
    axis=1)
qdq("ms DequantizeLinear uint16", "DequantizeLinear", c.ints(0, 65535, 4, 6, dtype=np.uint16),
    np.float32(0.001), np.uint16(30000))
qdq("ms DequantizeLinear int16 per axis", "DequantizeLinear",
    c.ints(-32768, 32767, 4, 6, dtype=np.int16), np.linspace(0.001, 0.01, 4).astype(np.float32),
    np.arange(4).astype(np.int16), axis=0)
qdq("ms DequantizeLinear int32", "DequantizeLinear", c.ints(-100000, 100000, 7, dtype=np.int32),
    np.float32(0.01))

qdq("ms QuantizeLinear float16", "QuantizeLinear", x.astype(np.float16), np.float16(0.05),
    np.uint8(128), out=np.uint8)
qdq("ms DequantizeLinear float16 scale", "DequantizeLinear", xq, np.float16(0.05),
    np.uint8(100), out=np.float16)


def qdq_4bit(name, code, zero, axis=None, scale=None):
    """QuantizeLinear to int4 / uint4 then DequantizeLinear back, both com.microsoft (the
    4-bit zero point written raw: onnx 1.12 has no 4-bit types)"""
    import onnx, os
    x = c.randn(3, 4, 6, scale=0.6)
    s = scale if scale is not None else np.float32(0.1)
    attrs = {} if axis is None else {"axis": axis}
    nodes = [node("QuantizeLinear", ["x", "s", "z"], ["q"], "q0", **attrs),
             node("DequantizeLinear", ["q", "s", "z"], ["y"], "q1", **attrs)]
    c.add(name, nodes, {"x": x}, ["y"], initializers={"s": s}, rtol=1e-6, atol=1e-6)
    path = os.path.join(c.dir, c.cases[-1]["model"])
    m = onnx.load(path)
    zero = np.asarray(zero)
    m.graph.initializer.append(raw_tensor("z", code, list(zero.shape),
                                          pack_fields((zero & 15).reshape(-1), 4)))
    onnx.save(m, path)


qdq_4bit("ms Q/DQ int4 per tensor", 22, np.int8(-2))
qdq_4bit("ms Q/DQ uint4 per tensor", 21, np.uint8(9))
qdq_4bit("ms Q/DQ int4 per axis", 22, np.array([1, -3, 0, 2], np.int8), axis=1,
         scale=np.array([0.05, 0.1, 0.2, 0.08], np.float32))

c.write()
