#!/usr/bin/python3
"""make_fp16_model.py - a float32 ONNX model converted to float16 (or bfloat16)
the way exporters and onnxconverter-common's convert_float_to_float16 do it,
for benchmarking the 16-bit paths (src/kernels/gemm_h.c):

  /usr/bin/python3 bench/make_fp16_model.py IN.onnx OUT.onnx [--bf16] [--half-io]

- every float32 initializer, Constant / ConstantOfShape value and float
  attribute tensor becomes float16, clamped to +-65504 first (a mask constant
  of -3.4e38 becomes -65504, as the converters clamp it);
- Cast(to=FLOAT) becomes Cast(to=FLOAT16); value_info types follow;
- graph inputs and outputs stay float32 by default, with a Cast at the
  boundary (onnxconverter-common's keep_io_types=True, what most fp16 exports
  ship): the model takes the same inputs as the float32 one, so the same
  benchmark specs apply. --half-io makes them float16 instead.
- --bf16 writes bfloat16 instead of float16 (rounded to nearest even), and
  raises the opset to 16 if lower (Where accepts bfloat16 from 16 on).

Needs Debian's python3-onnx and python3-numpy; no network.
Example (the models come from ../shared/bench/make_transformers.py), then the
side-by-side benchmark on the converted models under their usual names (the
float32 inputs of ../shared/bench/bench.json still apply; its output check's
atol 1e-4 is a float32 tolerance, so read its maxabs against float16's
precision instead):
  for m in gpt2_step minilm_l6; do
    /usr/bin/python3 bench/make_fp16_model.py /tmp/onnxc-bench-models/$m.onnx \\
        /tmp/onnxc-fp16-models/$m.onnx
  done
  ONNXC_BENCH_MODELS=/tmp/onnxc-fp16-models /usr/bin/python3 ../shared/bench/sidebyside.py \\
      build/onnxc gpt2_step minilm_l6
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FP16_MAX = 65504.0


def to_bf16_bits(a):
    """float32 array -> uint16 bfloat16 bits, nearest even, NaN kept quiet"""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    return np.where(nan, ((u >> 16) | np.uint32(0x40)).astype(np.uint16), rounded)


def convert_tensor(t, half):
    """a float32 TensorProto -> the same tensor in the half type (same name)"""
    a = numpy_helper.to_array(t).astype(np.float32)
    if half == TensorProto.FLOAT16:
        out = numpy_helper.from_array(np.clip(a, -FP16_MAX, FP16_MAX).astype(np.float16), t.name)
    else:
        out = TensorProto()
        out.name = t.name
        out.dims.extend(a.shape)
        out.data_type = TensorProto.BFLOAT16
        out.raw_data = to_bf16_bits(a).tobytes()
    out.doc_string = t.doc_string
    return out


def convert_type(tp, half):
    """float32 tensor types (also inside sequences / optionals) -> half, in place"""
    which = tp.WhichOneof('value')
    if which == 'tensor_type' and tp.tensor_type.elem_type == TensorProto.FLOAT:
        tp.tensor_type.elem_type = half
    elif which == 'sequence_type':
        convert_type(tp.sequence_type.elem_type, half)
    elif which == 'optional_type':
        convert_type(tp.optional_type.elem_type, half)


def convert_graph(g, half, keep_io):
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(convert_tensor(t, half))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(convert_tensor(a.t, half))
            elif a.type == onnx.AttributeProto.GRAPH:
                convert_graph(a.g, half, False)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    convert_graph(sub, half, False)
            elif n.op_type == 'Cast' and a.name == 'to' and a.i == TensorProto.FLOAT:
                a.i = half
    for vi in g.value_info:
        convert_type(vi.type, half)
    if not keep_io:
        for vi in list(g.input) + list(g.output):
            convert_type(vi.type, half)
        return
    # float32 at the boundary: Cast after each float input, before each float output
    head, tail = [], []
    for vi in g.input:
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT and \
                vi.name not in {t.name for t in g.initializer}:
            inner = vi.name + '_half'
            for n in g.node:
                n.input[:] = [inner if x == vi.name else x for x in n.input]
            head.append(helper.make_node('Cast', [vi.name], [inner], to=half,
                                         name=vi.name + '_to_half'))
    for vi in g.output:
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            inner = vi.name + '_half'
            for n in g.node:
                n.output[:] = [inner if x == vi.name else x for x in n.output]
                n.input[:] = [inner if x == vi.name else x for x in n.input]
            tail.append(helper.make_node('Cast', [inner], [vi.name], to=TensorProto.FLOAT,
                                         name=vi.name + '_to_float'))
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    flags = {a for a in sys.argv[1:] if a.startswith('--')}
    if len(args) != 2 or flags - {'--bf16', '--half-io'}:
        sys.exit(__doc__)
    half = TensorProto.BFLOAT16 if '--bf16' in flags else TensorProto.FLOAT16
    m = onnx.load(args[0])
    if half == TensorProto.BFLOAT16:
        for o in m.opset_import:
            if o.domain in ('', 'ai.onnx') and o.version < 16:
                o.version = 16
    convert_graph(m.graph, half, '--half-io' not in flags)
    onnx.checker.check_model(m)
    onnx.save(m, args[1])
    n = sum(1 for t in m.graph.initializer if t.data_type == half)
    print('%s: %d initializers in %s, inputs/outputs %s' %
          (args[1], n, TensorProto.DataType.Name(half),
           'in the half type' if '--half-io' in flags else 'float32 with a Cast at the boundary'))


if __name__ == '__main__':
    main()
