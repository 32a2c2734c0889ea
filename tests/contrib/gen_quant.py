"""gen_quant.py - cases of the com.microsoft 8-bit operators (src/ops/contrib/quant.c,
quant_eltwise.c) for tests/oracle/ort_cases.mjs: DynamicQuantizeMatMul,
MatMulIntegerToFloat, QGemm and the QLinear* forms, uint8 and int8, per-tensor
and per-column scales, optional inputs present and absent, and the bad inputs."""
import numpy as np

from cases import Cases, node

c = Cases(seed=23)
U8, I8 = np.uint8, np.int8


def q8(dt, *shape):
    lo, hi = (0, 255) if dt == U8 else (-128, 127)
    return c.ints(lo, hi, *shape, dtype=dt)


def f(v):
    return np.array(v, dtype=np.float32)


def zp(dt, v):
    return np.array(v, dtype=dt)


# ---- MatMulIntegerToFloat: float output, 1e-5 relative (the float epilogue)
for a_dt, b_dt in [(U8, U8), (U8, I8), (I8, I8)]:
    for shape_a, K, N in [((3, 7), 7, 5), ((2, 4, 33), 33, 17), ((1, 16), 16, 1)]:
        tag = f"{np.dtype(a_dt).name}x{np.dtype(b_dt).name} A{shape_a} N{N}"
        A = q8(a_dt, *shape_a)
        B = q8(b_dt, K, N)
        ini = {"B": B, "a_scale": f(0.02), "b_scale": f(0.05)}
        c.add(f"MatMulIntegerToFloat {tag} no zero points",
              [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale"], ["Y"], "n0")],
              {"A": A}, ["Y"], initializers=ini, rtol=1e-5, atol=1e-5)
        ini2 = dict(ini, a_zp=zp(a_dt, 3), b_zp=q8(b_dt, N),
                    b_scale=c.randn(N, scale=0.01) ** 2 + 0.001, bias=c.randn(N))
        c.add(f"MatMulIntegerToFloat {tag} per-column, zero points, bias",
              [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale", "a_zp", "b_zp",
                                             "bias"], ["Y"], "n0")],
              {"A": A}, ["Y"], initializers=ini2, rtol=1e-5, atol=1e-4)
# B given at run time (not packed at prepare)
A, B = q8(U8, 5, 9), q8(I8, 9, 6)
c.add("MatMulIntegerToFloat B at run time",
      [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale", "", "b_zp"], ["Y"], "n0")],
      {"A": A, "B": B}, ["Y"], initializers={"a_scale": f(0.1), "b_scale": f(0.03),
                                              "b_zp": zp(I8, -2)}, rtol=1e-5, atol=1e-5)

# batched B [batch, K, N] beside A [batch, M, K]
for per_col in [False, True]:
    A, B = q8(U8, 3, 5, 12), q8(I8, 3, 12, 7)
    ini = {"a_scale": f(0.03), "b_scale": (c.randn(7, scale=0.05) ** 2 + 0.01) if per_col
           else f(0.02), "a_zp": zp(U8, 7), "b_zp": q8(I8, 7) if per_col else zp(I8, 1)}
    # onnxruntime refuses per-column scales beside a batched B: a numpy reference there
    ref = ((A.astype(np.int64) - 7) @ (B.astype(np.int64) - ini["b_zp"].astype(np.int64))
           ).astype(np.float64) * (np.float32(0.03) * ini["b_scale"].astype(np.float32))
    c.add(f"MatMulIntegerToFloat batched B, per-column {per_col}",
          [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale", "a_zp", "b_zp"], ["Y"],
                "n0")], {"A": A, "B": B}, ["Y"], initializers=ini, rtol=1e-5, atol=1e-4,
          ort="none" if per_col else "compare",
          expected={"Y": ref.astype(np.float32)} if per_col else None)
c.add("MatMulIntegerToFloat batched B, A of other batch dimensions",
      [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale"], ["Y"], "n0")],
      {"A": q8(U8, 2, 5, 12), "B": q8(I8, 3, 12, 7)}, ["Y"],
      initializers={"a_scale": f(0.03), "b_scale": f(0.02)}, ort="refuses",
      error=["node 'n0'", "batch"])
# float16 scales, bias and output (onnxruntime's CPU kernel takes them)
H = np.float16
for per_col in [False, True]:
    A, B = q8(U8, 3, 2, 24), q8(I8, 24, 10)
    ini = {"B": B, "a_scale": np.array(0.02, H), "a_zp": zp(U8, 100),
           "b_scale": (c.randn(10, scale=0.05) ** 2 + 0.01).astype(H) if per_col
           else np.array(0.04, H), "bias": c.randn(10).astype(H)}
    c.add(f"MatMulIntegerToFloat float16, per-column {per_col}",
          [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale", "a_zp", "", "bias"],
                ["Y"], "n0")], {"A": A}, ["Y"], initializers=ini, rtol=2e-3, atol=2e-3,
          output_types={"Y": H})
# large enough to be split over threads
c.add("MatMulIntegerToFloat 200x300x150",
      [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale", "a_zp", "b_zp"], ["Y"],
            "n0")], {"A": q8(U8, 200, 300)}, ["Y"],
      initializers={"B": q8(I8, 300, 150), "a_scale": f(0.01), "b_scale": f(0.02),
                    "a_zp": zp(U8, 128), "b_zp": zp(I8, 0)}, rtol=1e-5, atol=1e-3,
      threads=(1, 2, 4))

# ---- DynamicQuantizeMatMul
for b_dt in [U8, I8]:
    for shape_a, K, N in [((4, 12), 12, 8), ((2, 3, 31), 31, 9), ((1, 5), 5, 3)]:
        tag = f"{np.dtype(b_dt).name} A{shape_a} N{N}"
        A = c.randn(*shape_a, scale=2.0)
        B = q8(b_dt, K, N)
        c.add(f"DynamicQuantizeMatMul {tag}",
              [node("DynamicQuantizeMatMul", ["A", "B", "b_scale"], ["Y"], "n0")],
              {"A": A}, ["Y"], initializers={"B": B, "b_scale": f(0.02)}, rtol=1e-4, atol=1e-4)
        c.add(f"DynamicQuantizeMatMul {tag} per-column, zero point, bias",
              [node("DynamicQuantizeMatMul", ["A", "B", "b_scale", "b_zp", "bias"], ["Y"], "n0")],
              {"A": A}, ["Y"], initializers={"B": B, "b_scale": c.randn(N, scale=0.1) ** 2 + 0.01,
                                              "b_zp": q8(b_dt, N), "bias": c.randn(N)},
              rtol=1e-4, atol=1e-4)
c.add("DynamicQuantizeMatMul all-positive A",
      [node("DynamicQuantizeMatMul", ["A", "B", "b_scale"], ["Y"], "n0")],
      {"A": np.abs(c.randn(3, 8)) + 0.5}, ["Y"],
      initializers={"B": q8(I8, 8, 4), "b_scale": f(0.05)}, rtol=1e-4, atol=1e-4)

# ---- QGemm: float and quantized outputs, transA / transB, alpha, C
for a_dt, b_dt in [(U8, U8), (U8, I8), (I8, I8)]:
    for M, K, N, ta, tb in [(4, 9, 6, 0, 0), (3, 17, 5, 1, 0), (1, 8, 7, 0, 1), (5, 6, 33, 1, 1)]:
        tag = f"{np.dtype(a_dt).name}x{np.dtype(b_dt).name} {M}x{K}x{N} tA{ta} tB{tb}"
        A = q8(a_dt, *((K, M) if ta else (M, K)))
        B = q8(b_dt, *((N, K) if tb else (K, N)))
        base = {"B": B, "a_scale": f(0.03), "a_zp": zp(a_dt, 5), "b_scale": f(0.02),
                "b_zp": zp(b_dt, 1)}
        attrs = dict(transA=ta, transB=tb)
        c.add(f"QGemm {tag} float",
              [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp"], ["Y"], "n0",
                    **attrs)], {"A": A}, ["Y"], initializers=base, rtol=1e-5, atol=1e-5)
        pc = dict(base, b_scale=c.randn(N, scale=0.05) ** 2 + 0.001, b_zp=q8(b_dt, N),
                  C=c.ints(-500, 500, N, dtype=np.int32))
        c.add(f"QGemm {tag} per-column, C, alpha, float",
              [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C"], ["Y"], "n0",
                    alpha=0.75, **attrs)], {"A": A}, ["Y"], initializers=pc, rtol=1e-5, atol=1e-5)
        qo = dict(pc, y_scale=f(0.6 if a_dt == U8 else 0.4), y_zp=zp(a_dt, 7),
                  C=c.ints(-500, 500, M, N, dtype=np.int32))
        c.add(f"QGemm {tag} quantized output, C (M, N)",
              [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C", "y_scale",
                              "y_zp"], ["Y"], "n0", **attrs)], {"A": A}, ["Y"], initializers=qo,
              rtol=0, atol=0, output_types={"Y": a_dt})
A = q8(U8, 3, 5)
qgb = {"a_scale": f(0.1), "a_zp": zp(U8, 2), "B": q8(U8, 5, 4), "b_scale": f(0.1),
       "b_zp": zp(U8, 3)}
c.add("QGemm C (M, 1), quantized",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C", "y_scale", "y_zp"],
            ["Y"], "n0")], {"A": A}, ["Y"],
      initializers=dict(qgb, C=c.ints(-100, 100, 3, 1, dtype=np.int32), y_scale=f(0.5),
                        y_zp=zp(U8, 100)), rtol=0, atol=0, output_types={"Y": U8})
c.add("QGemm scalar C, B at run time",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C"], ["Y"], "n0")],
      {"A": A, "B": q8(U8, 5, 4)}, ["Y"],
      initializers={k: v for k, v in dict(qgb, C=np.array(40, dtype=np.int32)).items() if k != "B"},
      rtol=1e-5, atol=1e-5)
c.add("QGemm y_scale without y_zero_point: float divided by y_scale",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "", "y_scale"], ["Y"],
            "n0")], {"A": A}, ["Y"], initializers=dict(qgb, y_scale=f(0.5)), rtol=1e-5, atol=1e-5)
c.add("QGemm 150x200x130 quantized",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C", "y_scale", "y_zp"],
            ["Y"], "n0", transB=1)], {"A": q8(I8, 150, 200)}, ["Y"],
      initializers={"a_scale": f(0.01), "a_zp": zp(I8, -3), "B": q8(I8, 130, 200),
                    "b_scale": f(0.01), "b_zp": zp(I8, 0), "C": c.ints(-999, 999, 130,
                                                                          dtype=np.int32),
                    "y_scale": f(0.05), "y_zp": zp(I8, 1)}, rtol=0, atol=0,
      output_types={"Y": I8}, threads=(1, 2, 4))
c.add("QGemm a_zero_point of another type",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp"], ["Y"], "n0")],
      {"A": A}, ["Y"], initializers=dict(qgb, a_zp=zp(I8, 0)), ort="refuses",
      error=["node 'n0'", "a_zero_point"])
c.add("QGemm C of the wrong shape",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "C"], ["Y"], "n0")],
      {"A": A}, ["Y"], initializers=dict(qgb, C=np.zeros((2, 4), np.int32)), ort="refuses",
      error=["node 'n0'", "C must be"])
c.add("QGemm y_zero_point without y_scale",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp", "", "", "y_zp"], ["Y"],
            "n0")], {"A": A}, ["Y"], initializers=dict(qgb, y_zp=zp(U8, 1)), ort="none",
      error=["node 'n0'", "y_zero_point is given without y_scale"], output_types={"Y": U8})
c.add("QGemm mismatched K",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp"], ["Y"], "n0")],
      {"A": A}, ["Y"], initializers=dict(qgb, B=q8(U8, 6, 4)), ort="refuses",
      error=["node 'n0'", "K"])
c.add("QGemm b_scale of the wrong length",
      [node("QGemm", ["A", "a_scale", "a_zp", "B", "b_scale", "b_zp"], ["Y"], "n0")],
      {"A": A}, ["Y"], initializers=dict(qgb, b_scale=f([0.1, 0.2, 0.3])), ort="refuses",
      error=["node 'n0'", "b_scale"])
c.add("MatMulIntegerToFloat mismatched K",
      [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale"], ["Y"], "n0")],
      {"A": q8(U8, 2, 3)}, ["Y"], initializers={"B": q8(U8, 4, 2), "a_scale": f(0.1),
                                                 "b_scale": f(0.1)}, ort="refuses",
      error=["node 'n0'", "K"])
c.add("MatMulIntegerToFloat a_scale per row",
      [node("MatMulIntegerToFloat", ["A", "B", "a_scale", "b_scale"], ["Y"], "n0")],
      {"A": q8(U8, 2, 3)}, ["Y"], initializers={"B": q8(U8, 3, 2), "a_scale": f([0.1, 0.2]),
                                                 "b_scale": f(0.1)}, ort="none",
      error=["node 'n0'", "a_scale"])
c.add("DynamicQuantizeMatMul b_zero_point of another type",
      [node("DynamicQuantizeMatMul", ["A", "B", "b_scale", "b_zp"], ["Y"], "n0")],
      {"A": c.randn(2, 3)}, ["Y"], initializers={"B": q8(U8, 3, 2), "b_scale": f(0.1),
                                                  "b_zp": zp(I8, 0)}, ort="refuses",
      error=["node 'n0'", "b_zero_point"])

# ---- QLinearAdd / QLinearMul (1 unit: onnxruntime rounds a float expression)
for op in ["QLinearAdd", "QLinearMul"]:
    for dt in [U8, I8]:
        for sa, sb, tag in [((3, 5, 7), (3, 5, 7), "same shape"), ((2, 3, 9), (9,), "row"),
                            ((4, 1), (1, 6), "outer"), ((129,), (1,), "one-element B"),
                            ((2, 40, 300), (2, 40, 300), "large")]:
            a, b = q8(dt, *sa), q8(dt, *sb)
            ini = {"sa": f(0.05), "za": zp(dt, 3), "sb": f(0.08), "zb": zp(dt, -4 if dt == I8
                                                                          else 130),
                   "sc": f(0.1 if op == "QLinearAdd" else 0.4), "zc": zp(dt, 10)}
            c.add(f"{op} {np.dtype(dt).name} {tag}",
                  [node(op, ["A", "sa", "za", "B", "sb", "zb", "sc", "zc"], ["C"], "n0")],
                  {"A": a, "B": b}, ["C"], initializers=ini, rtol=0, atol=1,
                  output_types={"C": dt})
# scales given at run time (the factors folded by the generated code, not the compiler);
# onnxruntime takes scalars only, fed here as [1] and reshaped
for op, dt in [("QLinearAdd", U8), ("QLinearMul", I8)]:
    c.add(f"{op} {np.dtype(dt).name} scales at run time",
          [node("Reshape", [s + "1", "scalar"], [s], "r" + s, domain="") for s in ["sa", "sb", "sc"]]
          + [node(op, ["A", "sa", "za", "B", "sb", "zb", "sc", "zc"], ["C"], "n0")],
          {"A": q8(dt, 3, 8), "B": q8(dt, 8), "sa1": f([0.05]), "sb1": f([0.07]),
           "sc1": f([0.1 if op == "QLinearAdd" else 0.5])}, ["C"],
          initializers={"za": zp(dt, 2), "zb": zp(dt, 9), "zc": zp(dt, 4),
                        "scalar": np.zeros(0, np.int64)}, rtol=0, atol=1, output_types={"C": dt})
c.add("QLinearAdd scale of two values",
      [node("QLinearAdd", ["A", "sa", "", "B", "sb", "", "sc", "zc"], ["C"], "n0")],
      {"A": q8(U8, 4), "B": q8(U8, 4)}, ["C"],
      initializers={"sa": f([0.1, 0.2]), "sb": f(0.1), "sc": f(0.1), "zc": zp(U8, 0)},
      ort="refuses",
      error=["node 'n0'", "a_scale"], output_types={"C": U8})

# ---- QLinearSigmoid / QLinearLeakyRelu: exact (both build the same byte table)
for dt in [U8, I8]:
    x = q8(dt, 3, 4, 50)
    for op, attrs in [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {}),
                      ("QLinearLeakyRelu", {"alpha": 0.3})]:
        ini = {"xs": f(0.07), "xz": zp(dt, 12), "ys": f(1 / 256 if op == "QLinearSigmoid"
                                                         else 0.05), "yz": zp(dt, -128 if dt == I8
                                                                             else 0)}
        c.add(f"{op} {np.dtype(dt).name} {attrs}",
              [node(op, ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", **attrs)], {"X": x}, ["Y"],
              initializers=ini, rtol=0, atol=0, output_types={"Y": dt}, integer_nodes=["n0"])
        # (onnxruntime aborts on an absent Y_zero_point)
        c.add(f"{op} {np.dtype(dt).name} {attrs} no X_zero_point",
              [node(op, ["X", "xs", "", "ys", "yz"], ["Y"], "n0", **attrs)], {"X": x}, ["Y"],
              initializers={"xs": f(0.05), "ys": f(0.01), "yz": zp(dt, 0)}, rtol=0, atol=0,
              output_types={"Y": dt})
    c.add(f"QLinearSigmoid {np.dtype(dt).name} scales at run time",
          [node("QLinearSigmoid", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0")],
          {"X": x, "xs": f([0.03]), "ys": f([0.004])}, ["Y"],
          initializers={"xz": zp(dt, 1), "yz": zp(dt, 2)}, rtol=0, atol=0, output_types={"Y": dt})

# ---- QLinearConcat: exact (tables)
for dt in [U8, I8]:
    a, b, d = q8(dt, 2, 3, 4), q8(dt, 2, 5, 4), q8(dt, 2, 1, 4)
    ins = ["ys", "yz", "A", "sa", "za", "B", "sb", "zb", "D", "sd", "zd"]
    ini = {"ys": f(0.1), "yz": zp(dt, 5), "sa": f(0.1), "za": zp(dt, 5), "sb": f(0.05),
           "zb": zp(dt, 0), "sd": f(0.3), "zd": zp(dt, -3 if dt == I8 else 200)}
    for axis in [1, -2]:
        c.add(f"QLinearConcat {np.dtype(dt).name} axis {axis}",
              [node("QLinearConcat", ins, ["Y"], "n0", axis=axis)], {"A": a, "B": b, "D": d},
              ["Y"], initializers=ini, rtol=0, atol=0, output_types={"Y": dt},
              integer_nodes=["n0"])
    e1, e2 = q8(dt, 3, 2), q8(dt, 3, 7)
    c.add(f"QLinearConcat {np.dtype(dt).name} last axis, two inputs",
          [node("QLinearConcat", ins[:8], ["Y"], "n0", axis=1)], {"A": e1, "B": e2}, ["Y"],
          initializers={k: ini[k] for k in ins[:8] if k in ini}, rtol=0, atol=0,
          output_types={"Y": dt})
c.add("QLinearConcat zero point of another type",
      [node("QLinearConcat", ["ys", "yz", "A", "sa", "za"], ["Y"], "n0", axis=0)],
      {"A": q8(U8, 2)}, ["Y"],
      initializers={"ys": f(0.1), "yz": zp(U8, 0), "sa": f(0.1), "za": zp(I8, 0)},
      ort="refuses", error=["node 'n0'", "X_zero_point"], output_types={"Y": U8})
c.add("QLinearConcat scale of two values",
      [node("QLinearConcat", ["ys", "yz", "A", "sa", "za"], ["Y"], "n0", axis=0)],
      {"A": q8(U8, 2)}, ["Y"],
      initializers={"ys": f(0.1), "yz": zp(U8, 0), "sa": f([0.1, 0.2]), "za": zp(U8, 0)},
      # (onnxruntime reads the first value and goes on)
      ort="none", error=["node 'n0'", "X_scale of tensor 0"], output_types={"Y": U8})
c.add("QLinearConcat broken triple",
      [node("QLinearConcat", ["ys", "yz", "A", "sa", "za", "B", "sb"], ["Y"], "n0", axis=0)],
      {"A": q8(U8, 2), "B": q8(U8, 2)}, ["Y"],
      initializers={"ys": f(0.1), "yz": zp(U8, 0), "sa": f(0.1), "za": zp(U8, 0),
                    "sb": f(0.1)}, ort="none", error=["node 'n0'", "triples"],
      output_types={"Y": U8})

# ---- QLinearWhere: exact
for dt in [U8, I8]:
    cond = c.rng.random((3, 1, 6)) > 0.5
    x, y = q8(dt, 3, 4, 6), q8(dt, 6)
    ini = {"xs": f(0.1), "xz": zp(dt, 3), "ys": f(0.02), "yz": zp(dt, 9), "zs": f(0.05),
           "zz": zp(dt, 1)}
    c.add(f"QLinearWhere {np.dtype(dt).name} broadcast",
          [node("QLinearWhere", ["C", "X", "xs", "xz", "Y", "ys", "yz", "zs", "zz"], ["Z"],
                "n0")], {"C": cond, "X": x, "Y": y}, ["Z"], initializers=ini, rtol=0, atol=0,
          output_types={"Z": dt}, integer_nodes=["n0"])

    x2, y2 = q8(dt, 5, 7), q8(dt, 5, 7)
    c.add(f"QLinearWhere {np.dtype(dt).name} same shapes, Y already at Z's scale",
          [node("QLinearWhere", ["C", "X", "xs", "xz", "Y", "zs", "zz", "zs", "zz"], ["Z"],
                "n0")], {"C": c.rng.random((5, 7)) > 0.5, "X": x2, "Y": y2}, ["Z"],
          initializers=ini, rtol=0, atol=0, output_types={"Z": dt})

# ---- QLinearGlobalAveragePool (1 unit: a float factor)
for dt in [U8, I8]:
    for cl, shape in [(0, (2, 3, 5, 7)), (1, (2, 5, 7, 3)), (0, (1, 4, 9)), (1, (3, 4, 4, 16))]:
        c.add(f"QLinearGlobalAveragePool {np.dtype(dt).name} channels_last {cl} {shape}",
              [node("QLinearGlobalAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0",
                    channels_last=cl)], {"X": q8(dt, *shape)}, ["Y"],
              initializers={"xs": f(0.05), "xz": zp(dt, 4), "ys": f(0.03), "yz": zp(dt, -2
                                                                                 if dt == I8
                                                                                 else 20)},
              rtol=0, atol=1, output_types={"Y": dt})

# ---- QLinearAveragePool
for dt in [U8, I8]:
    for cl in [0, 1]:
        for attrs in [dict(kernel_shape=[3, 3]), dict(kernel_shape=[2, 3], strides=[2, 2]),
                      dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                      dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
                      dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], ceil_mode=1)]:
            shape = (2, 7, 8, 3) if cl else (2, 3, 7, 8)
            c.add(f"QLinearAveragePool {np.dtype(dt).name} channels_last {cl} {attrs}",
                  [node("QLinearAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0",
                        channels_last=cl, **attrs)], {"X": q8(dt, *shape)}, ["Y"],
                  initializers={"xs": f(0.05), "xz": zp(dt, 4), "ys": f(0.04), "yz": zp(dt, 1)},
                  rtol=0, atol=1, output_types={"Y": dt})
    c.add(f"QLinearAveragePool {np.dtype(dt).name} auto_pad SAME_UPPER",
          [node("QLinearAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0",
                kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER")],
          {"X": q8(dt, 1, 2, 7, 6)}, ["Y"],
          initializers={"xs": f(0.05), "xz": zp(dt, 4), "ys": f(0.04), "yz": zp(dt, 1)},
          rtol=0, atol=1, output_types={"Y": dt})
    c.add(f"QLinearAveragePool {np.dtype(dt).name} 1-D",
          [node("QLinearAveragePool", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0",
                kernel_shape=[4], strides=[3])], {"X": q8(dt, 2, 3, 20)}, ["Y"],
          initializers={"xs": f(0.05), "xz": zp(dt, 4), "ys": f(0.04), "yz": zp(dt, 1)},
          rtol=0, atol=1, output_types={"Y": dt})

# ---- QLinearSoftmax
for dt in [U8, I8]:
    yz = zp(dt, 0 if dt == U8 else -128)
    for opset, axis, shape in [(13, -1, (3, 10)), (13, 1, (2, 5, 4)), (12, 1, (2, 3, 4)),
                               (13, -1, (1, 300)), (12, 2, (2, 3, 4, 5)),
                               (13, -1, (64, 1000))]:
        c.add(f"QLinearSoftmax {np.dtype(dt).name} opset {opset} axis {axis} {shape}",
              [node("QLinearSoftmax", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", opset=opset,
                    axis=axis)], {"X": q8(dt, *shape)}, ["Y"],
              initializers={"xs": f(0.08), "xz": zp(dt, 0), "ys": f(1 / 256), "yz": yz},
              rtol=0, atol=1, output_types={"Y": dt})

# ---- QLinearConv (com.microsoft): NCHW and channels_last NHWC; exact where
# onnxruntime's integer requantization agrees, else 1 unit
for xdt, wdt in [(U8, U8), (U8, I8), (I8, I8)]:
    for cl in [0, 1]:
        for attrs, C, M, hw, k in [(dict(), 3, 4, (7, 6), (3, 3)),
                                   (dict(pads=[1, 1, 1, 1], strides=[2, 1]), 5, 6, (9, 8), (3, 3)),
                                   (dict(group=4), 4, 8, (5, 5), (3, 3)),
                                   (dict(group=6, pads=[1, 1, 1, 1]), 6, 6, (6, 7), (3, 3)),
                                   (dict(dilations=[2, 1]), 2, 3, (8, 5), (2, 2))]:
            g = attrs.get("group", 1)
            shape = (2, *hw, C) if cl else (2, C, *hw)
            x = q8(xdt, *shape)
            w = q8(wdt, M, C // g, *k)
            ini = {"w": w, "xs": f(0.02), "xz": zp(xdt, 3), "ws": c.randn(M, scale=0.01) ** 2
                   + 0.002, "wz": zp(wdt, 0), "ys": f(0.05), "yz": zp(xdt, 5),
                   "B": c.ints(-300, 300, M, dtype=np.int32)}
            c.add(f"QLinearConv {np.dtype(xdt).name}x{np.dtype(wdt).name} channels_last {cl} "
                  f"{attrs} C{C} M{M}",
                  [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"], ["y"],
                        "n0", channels_last=cl, **attrs)], {"x": x}, ["y"], initializers=ini,
                  rtol=0, atol=1, output_types={"y": xdt}, integer_nodes=["n0"])

# 1-D and 3-D convolutions, both layouts
for cl in [0, 1]:
    for shape, w_shape, attrs in [((2, 4, 11), (5, 4, 3), dict(strides=[2])),
                                  ((1, 3, 4, 5, 6), (4, 3, 2, 2, 3), dict(pads=[1, 0, 1, 0, 1, 1]))]:
        xs_ = shape if not cl else (shape[0], *shape[2:], shape[1])
        ini = {"w": q8(I8, *w_shape), "xs": f(0.03), "xz": zp(U8, 100), "ws": f(0.02),
               "wz": zp(I8, 0), "ys": f(0.1), "yz": zp(U8, 128)}
        c.add(f"QLinearConv uint8xint8 {len(shape) - 2}-D channels_last {cl}",
              [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], "n0",
                    channels_last=cl, **attrs)], {"x": q8(U8, *xs_)}, ["y"], initializers=ini,
              rtol=0, atol=1, output_types={"y": U8})

# ---- QAttention: the integer projection, then the float attention
def qattn_case(name, B, S, D, heads, hidden, w_dt=I8, per_col=False, mask=None, past=0,
               outputs=("Y",), ort="compare", error=None, **attrs):
    x = q8(U8, B, S, D)
    w = q8(w_dt, D, 3 * hidden)
    ins = ["x", "w", "bias", "xs", "ws", "", "xz", "wz", ""]
    ini = {"w": w, "bias": c.randn(3 * hidden, scale=0.5), "xs": f(0.02), "xz": zp(U8, 120)}
    ini["ws"] = (c.randn(3 * hidden, scale=0.05) ** 2 + 0.01) if per_col else f(0.03)
    ini["wz"] = q8(w_dt, 3 * hidden) if per_col else zp(w_dt, 2 if w_dt == I8 else 128)
    feeds = {"x": x}
    if mask is not None:
        ins[5] = "mask"
        feeds["mask"] = mask
    if past:
        ins[8] = "past"
        feeds["past"] = c.randn(2, B, heads, past, hidden // heads)
    c.add(name, [node("QAttention", ins, list(outputs), "n0", num_heads=heads, **attrs)], feeds,
          list(outputs), initializers=ini, rtol=1e-4, atol=1e-4, ort=ort, error=error)


qattn_case("QAttention int8 weight, no mask", 2, 3, 8, 2, 8)
qattn_case("QAttention uint8 weight, per-column", 2, 5, 12, 3, 12, w_dt=U8, per_col=True)
qattn_case("QAttention int8 weight per-column, one row", 1, 1, 16, 4, 16, per_col=True)
qattn_case("QAttention key lengths", 3, 4, 8, 2, 8,
           mask=np.array([4, 2, 3], dtype=np.int32))
qattn_case("QAttention end and start positions", 2, 5, 8, 2, 8,
           mask=np.array([5, 4, 1, 0], dtype=np.int32))
qattn_case("QAttention raw mask (B, T)", 2, 4, 8, 1, 8,
           mask=(c.rng.random((2, 4)) > 0.3).astype(np.int32))
qattn_case("QAttention raw mask (B, S, T)", 2, 3, 8, 2, 8,
           mask=(c.rng.random((2, 3, 3)) > 0.3).astype(np.int32))
qattn_case("QAttention unidirectional", 2, 6, 8, 2, 8, unidirectional=1)
qattn_case("QAttention unidirectional, raw mask, mask_filter_value", 2, 4, 8, 2, 8,
           mask=np.array([[1, 1, 0, 1], [1, 1, 1, 1]], dtype=np.int32), unidirectional=1,
           mask_filter_value=-500.0)
qattn_case("QAttention scale attribute", 2, 3, 8, 2, 8, scale=0.1)
qattn_case("QAttention past and present", 2, 3, 8, 2, 8, past=4, outputs=("Y", "present"))
qattn_case("QAttention past, unidirectional, key lengths", 2, 2, 8, 2, 8, past=3,
           outputs=("Y", "present"), unidirectional=1, mask=np.array([5, 4], dtype=np.int32))
qattn_case("QAttention present without past", 1, 4, 8, 2, 8, outputs=("Y", "present"))
qattn_case("QAttention larger, 4 heads", 2, 33, 64, 4, 64, per_col=True)
qattn_case("QAttention mask_index of the wrong length", 2, 3, 8, 2, 8,
           mask=np.array([3, 3, 3], dtype=np.int32), ort="refuses",
           error=["node 'n0'", "mask_index"])
qattn_case("QAttention hidden not a multiple of num_heads", 1, 2, 8, 3, 8, ort="refuses",
           error=["node 'n0'", "num_heads"])

for opset, shape in [(12, (2, 3, 4)), (13, (2, 3, 4))]:
    c.add(f"QLinearSoftmax uint8 opset {opset} default axis",
          [node("QLinearSoftmax", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", opset=opset)],
          {"X": q8(U8, *shape)}, ["Y"],
          initializers={"xs": f(0.1), "xz": zp(U8, 0), "ys": f(1 / 256), "yz": zp(U8, 0)},
          rtol=0, atol=1, output_types={"Y": U8})
for dt in [U8, I8]:
    c.add(f"QLinearSoftmax {np.dtype(dt).name} scales at run time",
          [node("QLinearSoftmax", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", opset=13)],
          {"X": q8(dt, 4, 12), "xs": f([0.06]), "ys": f([1 / 256])}, ["Y"],
          initializers={"xz": zp(dt, 0), "yz": zp(dt, 0 if dt == U8 else -128)}, rtol=0, atol=1,
          output_types={"Y": dt})
# a tiny y_scale: onnxruntime converts the out-of-range quotient to uint32 (undefined,
# 0 here); onnxc saturates. numpy reference: round(softmax * floor(1 / y_scale)), saturated
xsm = q8(U8, 3, 7)
esm = np.exp((xsm.astype(np.float64) - xsm.max(axis=1, keepdims=True)) * 0.1)
psm = esm / esm.sum(axis=1, keepdims=True)
c.add("QLinearSoftmax tiny y_scale saturates (numpy reference)",
      [node("QLinearSoftmax", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", opset=13)],
      {"X": xsm}, ["Y"],
      initializers={"xs": f(0.1), "xz": zp(U8, 0), "ys": f(1e-6), "yz": zp(U8, 0)},
      rtol=0, atol=1, output_types={"Y": U8}, ort="none",
      expected={"Y": np.clip(np.rint(psm * np.floor(1 / np.float32(1e-6))), 0, 255).astype(U8)})
c.add("QLinearSoftmax axis out of range",
      [node("QLinearSoftmax", ["X", "xs", "xz", "ys", "yz"], ["Y"], "n0", opset=13, axis=3)],
      {"X": q8(U8, 2, 3)}, ["Y"],
      initializers={"xs": f(0.1), "xz": zp(U8, 0), "ys": f(1 / 256), "yz": zp(U8, 0)},
      ort="none", error=["node 'n0'", "axis"], output_types={"Y": U8})

# ---- degenerate sizes. With K = 0 onnxruntime writes no real result (its QGemm
# stores bytes into the float output, MatMulIntegerToFloat drops the bias,
# DynamicQuantizeMatMul leaves the output unwritten): numpy references of the
# definition (the product is empty, so C or bias alone)
c.add("QGemm K = 0: C scaled (numpy reference)",
      [node("QGemm", ["A", "as", "az", "B", "bs", "bz", "C"], ["Y"], "n0")],
      {"A": np.zeros((3, 0), U8)}, ["Y"],
      initializers={"as": f(0.1), "az": zp(U8, 3), "B": np.zeros((0, 2), U8), "bs": f(0.2),
                    "bz": zp(U8, 1), "C": np.array([5, 7], np.int32)}, ort="none",
      expected={"Y": np.tile(np.array([5, 7], np.float32) * np.float32(0.1 * np.float32(0.2)),
                             (3, 1)).astype(np.float32)})
c.add("MatMulIntegerToFloat K = 0: bias (numpy reference)",
      [node("MatMulIntegerToFloat", ["A", "B", "as", "bs", "", "", "bias"], ["Y"], "n0")],
      {"A": np.zeros((3, 0), U8)}, ["Y"],
      initializers={"B": np.ones((0, 2), I8), "as": f(0.1), "bs": f(0.1), "bias": f([1, 2])},
      ort="none", expected={"Y": np.tile(f([1, 2]), (3, 1))})
c.add("MatMulIntegerToFloat no rows",
      [node("MatMulIntegerToFloat", ["A", "B", "as", "bs"], ["Y"], "n0")],
      {"A": np.zeros((0, 4), U8)}, ["Y"],
      initializers={"B": np.ones((4, 2), I8), "as": f(0.1), "bs": f(0.1)})
c.add("DynamicQuantizeMatMul K = 0: zeros (numpy reference)",
      [node("DynamicQuantizeMatMul", ["A", "B", "bs"], ["Y"], "n0")],
      {"A": np.zeros((3, 0), np.float32)}, ["Y"],
      initializers={"B": np.ones((0, 2), I8), "bs": f(0.1)}, ort="none",
      expected={"Y": np.zeros((3, 2), np.float32)})
c.add("QLinearAdd empty", [node("QLinearAdd", ["A", "s", "z", "B", "s", "z", "s", "z"], ["C"],
                                "n0")],
      {"A": np.zeros((0, 3), U8), "B": np.zeros((1, 3), U8)}, ["C"],
      initializers={"s": f(0.1), "z": zp(U8, 1)}, output_types={"C": U8})
c.add("QLinearGlobalAveragePool empty batch",
      [node("QLinearGlobalAveragePool", ["X", "s", "z", "s", "z"], ["Y"], "n0")],
      {"X": np.zeros((0, 3, 4, 4), U8)}, ["Y"], initializers={"s": f(0.1), "z": zp(U8, 1)},
      output_types={"Y": U8})
c.add("QLinearConv per-channel w_zero_point",
      [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], "n0")],
      {"x": q8(U8, 1, 2, 5, 5)}, ["y"],
      initializers={"w": q8(I8, 3, 2, 3, 3), "xs": f(0.1), "xz": zp(U8, 3),
                    "ws": f([0.01, 0.02, 0.03]), "wz": np.array([0, 2, -3], I8), "ys": f(0.3),
                    "yz": zp(U8, 4)}, rtol=0, atol=1, output_types={"y": U8})

# ---- a QOperator model end to end (onnxruntime's quantizer's QOperator format):
# QuantizeLinear -> QLinearConv -> QLinearAdd (the residual) ->
# QLinearGlobalAveragePool -> DequantizeLinear, all com.microsoft; uint8 or int8
# activations, int8 weights per output channel. `onnxc compile` makes the
# convolution integer-only (fixed-point requantization: within 1 of onnxruntime's
# float one, a quantum of the output at most after the average)
for dt in [U8, I8]:
    z0 = 0 if dt == I8 else 128
    ini = {"xs": f(0.03), "xz": zp(dt, z0 - 3), "w": q8(I8, 3, 3, 3, 3),
           "ws": c.randn(3, scale=0.01) ** 2 + 0.004, "wz": np.zeros(3, I8),
           "cs": f(0.05), "cz": zp(dt, z0 + 2), "B": c.ints(-200, 200, 3, dtype=np.int32),
           "as": f(0.06), "az": zp(dt, z0), "gs": f(0.02), "gz": zp(dt, z0 - 1)}
    c.add(f"QOperator model {np.dtype(dt).name}: Q, QLinearConv, QLinearAdd, "
          "QLinearGlobalAveragePool, DQ",
          [node("QuantizeLinear", ["x", "xs", "xz"], ["q"], "quant"),
           node("QLinearConv", ["q", "xs", "xz", "w", "ws", "wz", "cs", "cz", "B"], ["cv"], "conv",
                pads=[1, 1, 1, 1]),
           node("QLinearAdd", ["cv", "cs", "cz", "q", "xs", "xz", "as", "az"], ["a"], "add"),
           node("QLinearGlobalAveragePool", ["a", "as", "az", "gs", "gz"], ["g"], "pool"),
           node("DequantizeLinear", ["g", "gs", "gz"], ["y"], "dequant")],
          {"x": c.randn(2, 3, 10, 9, scale=2.0)}, ["y"], initializers=ini, rtol=0, atol=0.021,
          integer_nodes=["conv"])

c.write()
