"""The demo page's bundled model (js/demo/model.onnx): a tiny image classifier with
random weights (seed fixed), small enough to ship with the page (a few KB) and
made of the operators a real one uses (Conv, Relu, MaxPool, GlobalAveragePool,
Flatten, Gemm, Softmax), so that the page's image path (NCHW float input) and
its score display (argmax of a 1-D vector) have something to show.

    /usr/bin/python3 js/demo/make_model.py [OUT.onnx]    (default: next to this file)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'model.onnx')
rng = np.random.default_rng(35)


def weight(name, shape, fan_in):
    # He-scaled normal weights: activations keep a useful range through the layers
    return numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name)


inits = [
    weight('w1', (8, 3, 3, 3), 27), numpy_helper.from_array(np.full(8, 0.05, np.float32), 'b1'),
    weight('w2', (16, 8, 3, 3), 72), numpy_helper.from_array(np.full(16, 0.05, np.float32), 'b2'),
    weight('wf', (10, 16), 16), numpy_helper.from_array(np.linspace(-0.1, 0.1, 10).astype(np.float32), 'bf'),
]
nodes = [
    helper.make_node('Conv', ['image', 'w1', 'b1'], ['c1'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c1'], ['r1']),
    helper.make_node('MaxPool', ['r1'], ['p1'], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node('Conv', ['p1', 'w2', 'b2'], ['c2'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node('Relu', ['c2'], ['r2']),
    helper.make_node('GlobalAveragePool', ['r2'], ['g']),
    helper.make_node('Flatten', ['g'], ['f']),
    helper.make_node('Gemm', ['f', 'wf', 'bf'], ['logits'], transB=1),
    helper.make_node('Softmax', ['logits'], ['scores'], axis=1),
]
g = helper.make_graph(nodes, 'onnxc_demo', [helper.make_tensor_value_info('image', TensorProto.FLOAT, [1, 3, 32, 32])],
                      [helper.make_tensor_value_info('scores', TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], producer_name='onnxc js/demo/make_model.py')
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save_model(m, out)
print('%s: %d bytes' % (out, os.path.getsize(out)))
