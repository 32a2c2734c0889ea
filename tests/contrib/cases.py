"""cases.py - what the contrib-operator case generators (gen_*.py) share:
building one-node (or small) models with python3-onnx, saving their inputs
as .npy, and listing them in cases.json for tests/oracle/ort_cases.mjs,
which runs each through onnxruntime-node and `onnxc run` and compares.

A generator is run as `python3 gen_x.py OUTDIR`; it exits 77 (skip) when
numpy or onnx cannot be imported."""
import json
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
except ImportError as e:  # the test is skipped, not failed
    print(f"python3-onnx / numpy not available: {e}")
    sys.exit(77)

MS = "com.microsoft"
NP_TO_ONNX = {
    np.dtype("float32"): onnx.TensorProto.FLOAT,
    np.dtype("float64"): onnx.TensorProto.DOUBLE,
    np.dtype("float16"): onnx.TensorProto.FLOAT16,
    np.dtype("int64"): onnx.TensorProto.INT64,
    np.dtype("int32"): onnx.TensorProto.INT32,
    np.dtype("int16"): onnx.TensorProto.INT16,
    np.dtype("int8"): onnx.TensorProto.INT8,
    np.dtype("uint8"): onnx.TensorProto.UINT8,
    np.dtype("uint16"): onnx.TensorProto.UINT16,
    np.dtype("bool"): onnx.TensorProto.BOOL,
}


class Cases:
    """Collects cases into OUTDIR (sys.argv[1]); write() ends the run."""

    def __init__(self, seed=1):
        self.dir = sys.argv[1]
        self.cases = []
        self.rng = np.random.default_rng(seed)

    def randn(self, *shape, scale=1.0, dtype=np.float32):
        return (self.rng.standard_normal(shape) * scale).astype(dtype)

    def ints(self, lo, hi, *shape, dtype=np.int64):
        """uniform integers in [lo, hi]"""
        return self.rng.integers(lo, hi + 1, size=shape).astype(dtype)

    def add(self, name, nodes, inputs, outputs, initializers=None, opset=17, ms_opset=1,
            rtol=1e-4, atol=1e-5, threads=(1, 2), ort="compare", error=None, expected=None,
            ort_level="disabled", output_types=None, ort_share=None, compile=None):
        """One case: `nodes` (onnx NodeProtos) over graph inputs `inputs` (name ->
        numpy array, fed at run time), `initializers` (name -> numpy array,
        constants of the model), graph outputs `outputs` (names; their
        element type from output_types, name -> numpy dtype, float32 by
        default; shapes left to inference). error: substrings onnxc's
        message must hold (the run must fail); expected: name -> numpy
        array, the reference when onnxruntime refuses the case (ort="none");
        ort_share: output name -> input name, onnxruntime writing the output
        over that input's tensor (SparseAttention's present over past);
        compile: substrings of the message with which `onnxc compile` must
        refuse the case (an output whose length depends on data)."""
        k = len(self.cases)
        initializers = initializers or {}
        output_types = output_types or {}
        g = helper.make_graph(
            nodes, f"case{k}",
            [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], list(a.shape))
             for n, a in inputs.items()],
            [helper.make_tensor_value_info(
                n, NP_TO_ONNX[np.dtype(output_types.get(n, np.float32))], None)
             for n in outputs],
            [numpy_helper.from_array(a, n) for n, a in initializers.items()])
        imports = [helper.make_opsetid("", opset)]
        if ms_opset:
            imports.append(helper.make_opsetid(MS, ms_opset))
        m = helper.make_model(g, opset_imports=imports, producer_name="onnxc-tests")
        m.ir_version = 8
        model = f"c{k}.onnx"
        onnx.save(m, os.path.join(self.dir, model))
        files = {}
        for n, a in inputs.items():
            files[n] = f"c{k}_in_{len(files)}.npy"
            np.save(os.path.join(self.dir, files[n]), np.ascontiguousarray(a))
        case = {"name": name, "model": model, "inputs": files, "outputs": list(outputs),
                "rtol": rtol, "atol": atol, "threads": list(threads), "ort": ort,
                "ort_level": ort_level}
        if error:
            case["error"] = list(error)
        if ort_share:
            case["ort_share"] = dict(ort_share)
        if compile:
            case["compile"] = list(compile)
        if expected:
            case["expected"] = {}
            for n, a in expected.items():
                case["expected"][n] = f"c{k}_ref_{len(case['expected'])}.npy"
                np.save(os.path.join(self.dir, case["expected"][n]), np.ascontiguousarray(a))
        self.cases.append(case)

    def write(self):
        with open(os.path.join(self.dir, "cases.json"), "w") as f:
            json.dump(self.cases, f, indent=1)


def node(op, inputs, outputs, name, domain=MS, **attrs):
    """a NodeProto of `domain` (com.microsoft unless told)"""
    return helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs)
