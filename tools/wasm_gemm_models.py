#!/usr/bin/env python3
"""wasm_gemm_models.py - one-node models of the bench set's large GEMMs, to
measure the GFLOP/s that onnxc's WebAssembly build and onnxruntime-web reach
on each (tools/wasm_simd_peak.c gives the engine's ceiling):

    /usr/bin/python3 tools/wasm_gemm_models.py OUTDIR

writes OUTDIR/NAME.onnx for each shape and prints `NAME FLOPS` lines; time
each model with js/bench.mjs and js/ortweb_bench.mjs (same --runs) and divide.
The weights are constants (initializers), as in the models: both runtimes
pack them once at session creation.

Shapes: MiniLM-L6 at 128 tokens (the attention projections, the MLP's two
MatMuls), ResNet-50's convolutions (a 3x3 and the 1x1s of the first and last
stages, batch 1 at 224x224) and PP-OCRv4 det's wide early 3x3; the 3x3
stride-1 layers that take Winograd F(4x4, 3x3) (ResNet-50's at 56, 28 and 14;
its 512-channel 7x7 one does not, too small an image; PP-OCRv4's 96 -> 24
head at 160 and 40) count the direct sum's flops, so their GFLOP/s are
direct-sum equivalents."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: ("matmul", M, K, N) or ("conv", Cin, H, W, Cout, kernel, stride)
SHAPES = {
    "minilm_qkv": ("matmul", 128, 384, 384),
    "minilm_mlp_up": ("matmul", 128, 384, 1536),
    "minilm_mlp_down": ("matmul", 128, 1536, 384),
    "resnet_s1_3x3": ("conv", 64, 56, 56, 64, 3, 1),
    "resnet_s1_1x1": ("conv", 64, 56, 56, 256, 1, 1),
    "resnet_s2_3x3": ("conv", 128, 28, 28, 128, 3, 1),
    "resnet_s3_3x3": ("conv", 256, 14, 14, 256, 3, 1),
    "resnet_s4_3x3": ("conv", 512, 7, 7, 512, 3, 1),
    "resnet_s4_1x1": ("conv", 512, 7, 7, 2048, 1, 1),
    "ppocr_3x3": ("conv", 32, 160, 160, 32, 3, 1),
    "ppocr_head_3x3": ("conv", 96, 160, 160, 24, 3, 1),
    "ppocr_head_3x3_40": ("conv", 96, 40, 40, 24, 3, 1),
}


def matmul_model(m, k, n):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32) * 0.05, "W")
    node = helper.make_node("MatMul", ["X", "W"], ["Y"])
    g = helper.make_graph([node], "mm", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, m, k])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, m, n])], [w])
    return g, 2.0 * m * k * n


def conv_model(cin, h, w, cout, ks, stride):
    rng = np.random.default_rng(1)
    wt = numpy_helper.from_array(rng.standard_normal((cout, cin, ks, ks)).astype(np.float32) * 0.05, "W")
    b = numpy_helper.from_array(np.zeros(cout, np.float32), "B")
    pad = ks // 2
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], kernel_shape=[ks, ks], strides=[stride, stride],
                            pads=[pad] * 4)
    oh, ow = (h + 2 * pad - ks) // stride + 1, (w + 2 * pad - ks) // stride + 1
    g = helper.make_graph([node], "conv", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, cin, h, w])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, cout, oh, ow])], [wt, b])
    return g, 2.0 * cout * oh * ow * cin * ks * ks


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: wasm_gemm_models.py OUTDIR")
    out = sys.argv[1]
    for name, s in SHAPES.items():
        g, flops = matmul_model(*s[1:]) if s[0] == "matmul" else conv_model(*s[1:])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, f"{out}/{name}.onnx")
        print(name, int(flops))


if __name__ == "__main__":
    main()
