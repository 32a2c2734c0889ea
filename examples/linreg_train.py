#!/usr/bin/env python3
"""Builds linreg_train.onnx: a linear regression y = X @ W + B with a mean
squared error loss, and a TrainingInfoProto that trains W and B with
Gradient + Adagrad (learning rate 0.3, epsilon 1e-7).

The three parts are written in the ONNX text syntax below and assembled with
python-onnx (whose 1.12 parser has no syntax for TrainingInfoProto; onnxc's
text format has one, and examples/linreg_train.onnxtxt is this model printed
by `onnxc print`). Usage:
    linreg_train.py OUT.onnx

Train it with onnxc (data: X [N,2], Y [N,1] float32, as .npy or .pb):
    onnxc train linreg_train.onnxtxt --init --steps 100 -i X=x.npy -i Y=y.npy \
        --print loss --save trained.onnx
    onnxc run trained.onnx -i X=x.npy -i Y=y.npy
"""
import sys

import onnx
import onnx.parser

# Inference graph: prediction and loss. W and B start at nonzero values; the
# initialization step resets them (and the Adagrad state) to zeros.
MODEL = """
<ir_version: 8, opset_import: ["" : 18, "ai.onnx.preview.training" : 1]>
linreg (float[N,2] X, float[N,1] Y) => (float[N,1] pred, float loss)
<float[2,1] W = {0.5, -0.5}, float[1] B = {0.25}>
{
    xw = MatMul(X, W)
    pred = Add(xw, B)
    diff = Sub(pred, Y)
    sq = Mul(diff, diff)
    loss = ReduceMean<keepdims = 0>(sq)
}
"""

# One training step (it reads X, Y and loss of the inference graph): gradients of the loss with respect to W and B, one
# Adagrad update of W and B (with their accumulated squared gradients H_W and
# H_B), and the step count T + 1.
ALGORITHM = """
algorithm ()
  => (float[2,1] W_new, float[1] B_new, float[2,1] HW_new, float[1] HB_new, int64 T_new)
<float lr = {0.3}, int64 T = {0}, float[2,1] H_W = {0.0, 0.0}, float[1] H_B = {0.0},
 int64 one = {1}>
{
    gW, gB = ai.onnx.preview.training.Gradient<xs = ["W", "B"], y = "loss">(W, B)
    W_new, B_new, HW_new, HB_new = ai.onnx.preview.training.Adagrad<epsilon = 1e-07>(lr, T, W, B, gW, gB, H_W, H_B)
    T_new = Add(T, one)
}
"""

# Initialization: zeros for the parameters and the optimizer state.
INITIALIZATION = """
initialization () => (float[2,1] W0, float[1] B0, float[2,1] HW0, float[1] HB0, int64 T0)
{
    W0 = Constant<value = float[2,1] {0.0, 0.0}>()
    B0 = Constant<value = float[1] {0.0}>()
    HW0 = Constant<value = float[2,1] {0.0, 0.0}>()
    HB0 = Constant<value = float[1] {0.0}>()
    T0 = Constant<value = int64 {0}>()
}
"""


def binding(pairs):
    return [onnx.StringStringEntryProto(key=k, value=v) for k, v in pairs]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: linreg_train.py OUT.onnx")
    model = onnx.parser.parse_model(MODEL)
    ti = model.training_info.add()
    ti.algorithm.CopyFrom(onnx.parser.parse_graph(ALGORITHM))
    ti.initialization.CopyFrom(onnx.parser.parse_graph(INITIALIZATION))
    ti.update_binding.extend(binding([("W", "W_new"), ("B", "B_new"), ("H_W", "HW_new"),
                                      ("H_B", "HB_new"), ("T", "T_new")]))
    ti.initialization_binding.extend(binding([("W", "W0"), ("B", "B0"), ("H_W", "HW0"),
                                              ("H_B", "HB0"), ("T", "T0")]))
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
