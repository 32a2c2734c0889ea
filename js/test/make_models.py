"""Models for js/test/api.test.mjs, written into the folder given (argv[1]):
   ext.onnx + weights.bin   Y = X @ W + B with W and B in external data; ext_expected.json holds
                            X and numpy's Y (the oracle)
   identity_<type>.onnx     one Identity per element type, for the copies in and out of the heap
   mlp.onnx                 Y = Relu(X @ W1) @ W2 (X 64x256): work enough to be split over
                            threads; mlp_expected.json holds X and numpy's Y
   winograd.onnx            3x3 stride-1 convolutions of the sizes that take Winograd F(4x4, 3x3)
                            (constant W, 16+ channels, 9x9+ images): Y = Conv(Relu(Conv(X) + R))
                            (bias, residual and activation fused in, bands of tile rows, output
                            channels past one chunk, tile rows not a multiple of four wide), and
                            Y2 = Conv(Z) with asymmetric pads over 400 input channels (two depth
                            blocks of the products; one band, so 2 threads split its
                            output channels); winograd_expected.json holds the inputs and
                            numpy's direct sums in float64
   convt.onnx               ConvTranspose of 2x2 kernels at stride 2 (src/kernels/convt_wasm.c in the
                            SIMD128 module): 24 -> 1 channels with bias over rows of 133 pixels
                            (blocks of 8 and 4 and a tail; two bands of rows), 2 groups of 3 -> 3
                            without bias on 2 images of 11-pixel rows, and 130 input channels (past
                            the direct kernel's 128: the GEMM path); convt_expected.json holds the
                            inputs and numpy's sums in float64
   depthwise.onnx           depthwise convolutions (src/kernels/conv_direct_wasm.c's SIMD128 rows):
                            3x3 stride 2, 5x5 and 7x7 stride 1, dilation 2 with asymmetric pads, a
                            channel multiplier of 2, rows not a multiple of 8 wide, widths under 8;
                            depthwise_expected.json holds the inputs and numpy's sums in float64
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
W = rng.standard_normal((64, 32)).astype(np.float32)
B = rng.standard_normal((32,)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node('MatMul', ['X', 'W'], ['T']), helper.make_node('Add', ['T', 'B'], ['Y'])],
    'ext', [helper.make_tensor_value_info('X', TensorProto.FLOAT, [2, 64])],
    [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [2, 32])],
    [numpy_helper.from_array(W, 'W'), numpy_helper.from_array(B, 'B')])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
X = rng.standard_normal((2, 64)).astype(np.float32)
Y = X @ W + B  # numpy: the oracle
convert_model_to_external_data(m, all_tensors_to_one_file=True, location='weights.bin', size_threshold=0)
onnx.save_model(m, os.path.join(out, 'ext.onnx'))
json.dump({'X': X.ravel().tolist(), 'Y': Y.ravel().tolist()}, open(os.path.join(out, 'ext_expected.json'), 'w'))

TYPES = {'float32': TensorProto.FLOAT, 'float16': TensorProto.FLOAT16, 'float64': TensorProto.DOUBLE,
         'int8': TensorProto.INT8, 'int16': TensorProto.INT16, 'int32': TensorProto.INT32,
         'int64': TensorProto.INT64, 'uint8': TensorProto.UINT8, 'uint16': TensorProto.UINT16,
         'uint32': TensorProto.UINT32, 'uint64': TensorProto.UINT64, 'bool': TensorProto.BOOL,
         'string': TensorProto.STRING}
for name, code in TYPES.items():
    g = helper.make_graph([helper.make_node('Identity', ['x'], ['y'])], 'id_' + name,
                          [helper.make_tensor_value_info('x', code, [2, 3])],
                          [helper.make_tensor_value_info('y', code, [2, 3])])
    onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid('', 19)]),
                    os.path.join(out, 'identity_%s.onnx' % name))

# work a thread pool splits (the threads case of api.test.mjs)
W1 = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
W2 = (rng.standard_normal((256, 64)) / 16).astype(np.float32)
g = helper.make_graph(
    [helper.make_node('MatMul', ['X', 'W1'], ['H']), helper.make_node('Relu', ['H'], ['R']),
     helper.make_node('MatMul', ['R', 'W2'], ['Y'])],
    'mlp', [helper.make_tensor_value_info('X', TensorProto.FLOAT, [64, 256])],
    [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [64, 64])],
    [numpy_helper.from_array(W1, 'W1'), numpy_helper.from_array(W2, 'W2')])
onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), os.path.join(out, 'mlp.onnx'))
X = rng.standard_normal((64, 256)).astype(np.float32)
Y = np.maximum(X.astype(np.float64) @ W1, 0) @ W2  # numpy in float64: the oracle
json.dump({'X': X.ravel().tolist(), 'Y': Y.ravel().tolist()}, open(os.path.join(out, 'mlp_expected.json'), 'w'))

# Winograd's sizes (the winograd case of api.test.mjs)
def conv3x3(x, w, b, pads):  # direct sum in float64, pads (top, left, bottom, right)
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for ky in range(3):
        for kx in range(3):
            y += np.einsum('mc,nchw->nmhw', w[:, :, ky, kx].astype(np.float64),
                           x[:, :, ky:ky + oh, kx:kx + ow])
    return y if b is None else y + b.astype(np.float64)[None, :, None, None]


def wconv(m, c):
    return (rng.standard_normal((m, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)


WA, BA, WB, WC = wconv(40, 24), rng.standard_normal(40).astype(np.float32), wconv(18, 40), wconv(64, 400)
f = TensorProto.FLOAT
g = helper.make_graph(
    [helper.make_node('Conv', ['X', 'WA', 'BA'], ['A'], pads=[1, 1, 1, 1]),
     helper.make_node('Add', ['A', 'R'], ['S']), helper.make_node('Relu', ['S'], ['T']),
     helper.make_node('Conv', ['T', 'WB'], ['Y']),
     helper.make_node('Conv', ['Z', 'WC'], ['Y2'], kernel_shape=[3, 3], pads=[2, 1, 0, 2])],
    'winograd', [helper.make_tensor_value_info('X', f, [2, 24, 38, 41]),
                 helper.make_tensor_value_info('R', f, [2, 40, 38, 41]),
                 helper.make_tensor_value_info('Z', f, [1, 400, 10, 9])],
    [helper.make_tensor_value_info('Y', f, [2, 18, 36, 39]),
     helper.make_tensor_value_info('Y2', f, [1, 64, 10, 10])],
    [numpy_helper.from_array(WA, 'WA'), numpy_helper.from_array(BA, 'BA'),
     numpy_helper.from_array(WB, 'WB'), numpy_helper.from_array(WC, 'WC')])
onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), os.path.join(out, 'winograd.onnx'))
X = rng.standard_normal((2, 24, 38, 41)).astype(np.float32)
R = rng.standard_normal((2, 40, 38, 41)).astype(np.float32)
Z = rng.standard_normal((1, 400, 10, 9)).astype(np.float32)
T = np.maximum(conv3x3(X, WA, BA, (1, 1, 1, 1)) + R, 0)
Y = conv3x3(T, WB, None, (0, 0, 0, 0))
Y2 = conv3x3(Z, WC, None, (2, 1, 0, 2))
json.dump({k: v.ravel().tolist() for k, v in (('X', X), ('R', R), ('Z', Z), ('Y', Y), ('Y2', Y2))},
          open(os.path.join(out, 'winograd_expected.json'), 'w'))

# ConvTranspose 2x2 stride 2 (the convt case of api.test.mjs)
def convt2(x, w, b, groups):  # float64: y[n, g Mg + m, 2h + i, 2w + j] = b + sum_c x w[c, m, i, j]
    n, c, h, wd = x.shape
    cg, mg = c // groups, w.shape[1]
    y = np.zeros((n, groups * mg, 2 * h, 2 * wd))
    for gi in range(groups):
        xs = x[:, gi * cg:(gi + 1) * cg].astype(np.float64)
        ws = w[gi * cg:(gi + 1) * cg].astype(np.float64)
        for i in range(2):
            for j in range(2):
                y[:, gi * mg:(gi + 1) * mg, i::2, j::2] = np.einsum('nchw,cm->nmhw', xs, ws[:, :, i, j])
    return y if b is None else y + b.astype(np.float64)[None, :, None, None]


C1, C2, C3 = rng.standard_normal((24, 1, 2, 2)).astype(np.float32), rng.standard_normal((6, 3, 2, 2)).astype(np.float32), \
    rng.standard_normal((130, 4, 2, 2)).astype(np.float32)
CB1 = rng.standard_normal(1).astype(np.float32)
g = helper.make_graph(
    [helper.make_node('ConvTranspose', ['X1', 'C1', 'CB1'], ['Y1'], kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node('ConvTranspose', ['X2', 'C2'], ['Y2'], strides=[2, 2], group=2),
     helper.make_node('ConvTranspose', ['X3', 'C3'], ['Y3'], strides=[2, 2])],
    'convt', [helper.make_tensor_value_info('X1', f, [1, 24, 70, 133]),
              helper.make_tensor_value_info('X2', f, [2, 6, 7, 11]),
              helper.make_tensor_value_info('X3', f, [1, 130, 3, 6])],
    [helper.make_tensor_value_info('Y1', f, [1, 1, 140, 266]),
     helper.make_tensor_value_info('Y2', f, [2, 6, 14, 22]),
     helper.make_tensor_value_info('Y3', f, [1, 4, 6, 12])],
    [numpy_helper.from_array(C1, 'C1'), numpy_helper.from_array(CB1, 'CB1'),
     numpy_helper.from_array(C2, 'C2'), numpy_helper.from_array(C3, 'C3')])
onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), os.path.join(out, 'convt.onnx'))
X1 = rng.standard_normal((1, 24, 70, 133)).astype(np.float32)
X2 = rng.standard_normal((2, 6, 7, 11)).astype(np.float32)
X3 = rng.standard_normal((1, 130, 3, 6)).astype(np.float32)
json.dump({k: v.ravel().tolist() for k, v in (('X1', X1), ('X2', X2), ('X3', X3), ('Y1', convt2(X1, C1, CB1, 1)),
                                               ('Y2', convt2(X2, C2, None, 2)), ('Y3', convt2(X3, C3, None, 1)))},
          open(os.path.join(out, 'convt_expected.json'), 'w'))

# depthwise convolutions (the depthwise case of api.test.mjs)
def dwconv(x, w, b, stride, pads, dil):  # float64, pads (top, left, bottom, right), group = C
    n, c, h, wd = x.shape
    mg, kh, kw = w.shape[0] // c, w.shape[2], w.shape[3]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - (kh - 1) * dil - 1) // stride + 1
    ow = (xp.shape[3] - (kw - 1) * dil - 1) // stride + 1
    y = np.zeros((n, c * mg, oh, ow))
    for m in range(c * mg):
        for i in range(kh):
            for j in range(kw):
                y[:, m] += w[m, 0, i, j] * xp[:, m // mg, i * dil:i * dil + (oh - 1) * stride + 1:stride,
                                            j * dil:j * dil + (ow - 1) * stride + 1:stride]
    return y if b is None else y + b.astype(np.float64)[None, :, None, None]


DW_CASES = [  # name, input dims, outputs per channel, kernel, stride, pads, dilation, bias
    ('D1', [1, 5, 13, 19], 1, 3, 2, [1, 1, 1, 1], 1, True),
    ('D2', [2, 3, 11, 10], 1, 5, 1, [2, 2, 2, 2], 1, True),
    ('D3', [1, 4, 9, 21], 1, 3, 1, [2, 1, 0, 3], 2, False),
    ('D4', [1, 3, 8, 17], 1, 3, 2, [0, 2, 1, 0], 1, True),
    ('D5', [1, 2, 12, 12], 1, 7, 1, [3, 3, 3, 3], 1, True),
    ('D6', [1, 3, 10, 6], 2, 3, 1, [1, 1, 1, 1], 1, True),
    ('D7', [1, 6, 20, 41], 1, 5, 2, [2, 2, 2, 2], 1, True),
]
nodes, inits, ins, outs, dw_data = [], [], [], [], {}
for name, dims, mg, k, st, pads, dil, bias in DW_CASES:
    c = dims[1]
    w = rng.standard_normal((c * mg, 1, k, k)).astype(np.float32)
    b = rng.standard_normal(c * mg).astype(np.float32) if bias else None
    x = rng.standard_normal(dims).astype(np.float32)
    inits.append(numpy_helper.from_array(w, 'W' + name))
    if bias:
        inits.append(numpy_helper.from_array(b, 'B' + name))
    nodes.append(helper.make_node('Conv', ['X' + name, 'W' + name] + (['B' + name] if bias else []), ['Y' + name],
                                  group=c, strides=[st, st], pads=pads, dilations=[dil, dil]))
    y = dwconv(x, w, b, st, pads, dil)
    ins.append(helper.make_tensor_value_info('X' + name, f, dims))
    outs.append(helper.make_tensor_value_info('Y' + name, f, list(y.shape)))
    dw_data['X' + name], dw_data['Y' + name] = x, y
g = helper.make_graph(nodes, 'depthwise', ins, outs, inits)
onnx.save_model(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), os.path.join(out, 'depthwise.onnx'))
json.dump({k: {'dims': list(v.shape), 'data': v.ravel().tolist()} for k, v in dw_data.items()},
          open(os.path.join(out, 'depthwise_expected.json'), 'w'))
