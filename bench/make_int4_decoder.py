#!/usr/bin/python3
"""Build a GPT-2-small-sized decoder step with weight-only low-bit weights.

usage: make_int4_decoder.py OUT.onnx [--bits=4] [--block=32] [--asym] [--layers=12] [--past=127]

The graph is GPT-2 small (hidden 768, 12 heads, FFN 3072, vocabulary 50257)
for one new token over a KV cache of `past` positions, in the form weight-only
quantizers write at opset 21: every projection weight W[K, N] (the QKV, output,
FFN and LM-head matrices) is a constant of int4 (or int2/int8 with --bits)
dequantized in blocks of `block` rows down each column,

    DequantizeLinear(Wq, scale[K / block, N] [, zero_point], axis=0, block_size=block) -> MatMul

symmetric by default (signed weights, no zero point), or unsigned with a zero
point per block (--asym). Embeddings, biases and layer norms stay float32.
Weights are seeded N(0, 0.02) like an untrained checkpoint, so that the
figures measure the kernels, not the values. Needs Debian's python3-onnx and
numpy; no network.

Inputs: input_ids, position_ids [1, 1] int64; attention_mask [1, past + 1]
int64; past_key_i / past_value_i [1, 12, past, 64] float. Outputs: logits and
the present keys and values.
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN, VOCAB = 768, 12, 3072, 50257
# TensorProto data types by (bits, signed); as numbers, since Debian's onnx
# (1.12) predates int4 and int2
QTYPES = {(4, True): 22, (4, False): 21, (2, True): 26, (2, False): 25, (8, True): 3, (8, False): 2}


def low_bit_tensor(name, qtype, bits, values):
    """A TensorProto of `values` (integers) packed as ONNX stores sub-byte
    types: element i in bits [(i % per) * bits, ...) of byte i // per, the
    first element in the low bits."""
    flat = values.astype(np.int64).flatten()
    per = 8 // bits
    u = (flat & ((1 << bits) - 1)).astype(np.uint8)
    u = np.concatenate([u, np.zeros((-len(u)) % per, np.uint8)]).reshape(-1, per)
    packed = np.zeros(len(u), np.uint8)
    for j in range(per):
        packed |= (u[:, j] << (j * bits)).astype(np.uint8)
    t = onnx.TensorProto()
    t.name = name
    t.data_type = qtype
    t.dims.extend(values.shape)
    t.raw_data = packed.tobytes()
    return t


class Builder:
    def __init__(self, bits, block, asym, seed=7):
        self.nodes, self.inits, self.count = [], [], 0
        self.rng = np.random.default_rng(seed)
        self.bits, self.block, self.asym = bits, block, asym
        self.weight_bytes = 0

    def fresh(self, stem):
        self.count += 1
        return '%s_%d' % (stem, self.count)

    def constant(self, array, stem='c'):
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def quantized(self, k, n):
        """DequantizeLinear of a blockwise low-bit [k, n] weight; returns its output."""
        w = (self.rng.standard_normal((k, n)) * 0.02).astype(np.float32)
        nb = -(-k // self.block)
        padded = np.zeros((nb * self.block, n), np.float32)
        padded[:k] = w
        blocks = padded.reshape(nb, self.block, n)
        levels = (1 << self.bits) - 1
        if self.asym:
            lo, hi = np.minimum(blocks.min(1), 0), np.maximum(blocks.max(1), 0)
            scale = np.maximum(hi - lo, 1e-8) / levels
            zero = np.clip(np.round(-lo / scale), 0, levels)
            q = np.clip(np.round(blocks / scale[:, None]) + zero[:, None], 0, levels)
        else:
            half = 1 << (self.bits - 1)
            scale = np.maximum(np.abs(blocks).max(1), 1e-8) / (half - 1 if self.bits > 2 else half)
            q = np.clip(np.round(blocks / scale[:, None]), -half, half - 1)
        qtype = QTYPES[(self.bits, not self.asym)]
        qname = self.fresh('wq')
        self.inits.append(low_bit_tensor(qname, qtype, self.bits, q.reshape(nb * self.block, n)[:k]))
        ins = [qname, self.constant(scale.astype(np.float32), 'ws')]
        if self.asym:
            zname = self.fresh('wz')
            self.inits.append(low_bit_tensor(zname, qtype, self.bits, zero))
            ins.append(zname)
        self.weight_bytes += k * n * self.bits // 8 + scale.size * 4 + (zero.size * self.bits // 8 if self.asym else 0)
        return self.node('DequantizeLinear', ins, axis=0, block_size=self.block)

    def linear(self, x, k, n, bias=True):
        y = self.node('MatMul', [x, self.quantized(k, n)])
        if not bias:
            return y
        return self.node('Add', [y, self.constant((self.rng.standard_normal(n) * 0.02).astype(np.float32), 'b')])

    def layernorm(self, x):
        gain = self.constant(np.ones(HIDDEN, np.float32), 'g')
        shift = self.constant((self.rng.standard_normal(HIDDEN) * 0.02).astype(np.float32), 'beta')
        return self.node('LayerNormalization', [x, gain, shift], axis=-1, epsilon=1e-5)


def build(layers, past, bits, block, asym):
    b = Builder(bits, block, asym)
    dh = HIDDEN // HEADS
    wte = b.constant((b.rng.standard_normal((VOCAB, HIDDEN)) * 0.02).astype(np.float32), 'wte')
    wpe = b.constant((b.rng.standard_normal((1024, HIDDEN)) * 0.02).astype(np.float32), 'wpe')
    x = b.node('Add', [b.node('Gather', [wte, 'input_ids']), b.node('Gather', [wpe, 'position_ids'])])
    # the mask as an additive bias over the keys: 0 where attended, a large negative elsewhere
    keep = b.node('Cast', [b.node('Unsqueeze', ['attention_mask', b.constant(np.array([1, 2], np.int64))])], to=TensorProto.BOOL)
    bias = b.node('Where', [keep, b.constant(np.float32(0)), b.constant(np.float32(-3.4e38))])
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, [1, 1]) for n in ('input_ids', 'position_ids')]
    inputs.append(helper.make_tensor_value_info('attention_mask', TensorProto.INT64, [1, 'total']))
    outputs = []
    scale = b.constant(np.float32(1 / np.sqrt(dh)))
    for i in range(layers):
        h = b.layernorm(x)
        q, k, v = b.node('Split', [b.linear(h, HIDDEN, 3 * HIDDEN), b.constant(np.array([HIDDEN] * 3, np.int64))], n_out=3, axis=2)
        shape = b.constant(np.array([0, 0, HEADS, dh], np.int64))
        q, k, v = (b.node('Transpose', [b.node('Reshape', [t, shape])], perm=[0, 2, 1, 3]) for t in (q, k, v))
        for kind, t in (('key', k), ('value', v)):
            inputs.append(helper.make_tensor_value_info('past_%s_%d' % (kind, i), TensorProto.FLOAT, [1, HEADS, 'past', dh]))
            outputs.append(helper.make_tensor_value_info('present_%s_%d' % (kind, i), TensorProto.FLOAT, [1, HEADS, 'total', dh]))
            b.nodes.append(helper.make_node('Concat', ['past_%s_%d' % (kind, i), t], ['present_%s_%d' % (kind, i)], axis=2))
        scores = b.node('MatMul', [q, b.node('Transpose', ['present_key_%d' % i], perm=[0, 1, 3, 2])])
        probs = b.node('Softmax', [b.node('Add', [b.node('Mul', [scores, scale]), bias])], axis=-1)
        ctx = b.node('Transpose', [b.node('MatMul', [probs, 'present_value_%d' % i])], perm=[0, 2, 1, 3])
        ctx = b.node('Reshape', [ctx, b.constant(np.array([0, 0, HIDDEN], np.int64))])
        x = b.node('Add', [x, b.linear(ctx, HIDDEN, HIDDEN)])
        a = b.linear(b.layernorm(x), HIDDEN, FFN)
        # the tanh form of Gelu, as GPT-2 exports write it
        cube = b.node('Mul', [b.node('Mul', [a, a]), a])
        inner = b.node('Mul', [b.node('Add', [a, b.node('Mul', [cube, b.constant(np.float32(0.044715))])]), b.constant(np.float32(0.7978846))])
        a = b.node('Mul', [b.node('Mul', [a, b.constant(np.float32(0.5))]), b.node('Add', [b.node('Tanh', [inner]), b.constant(np.float32(1))])])
        x = b.node('Add', [x, b.linear(a, FFN, HIDDEN)])
    logits = b.node('MatMul', [b.layernorm(x), b.quantized(HIDDEN, VOCAB)])
    b.nodes.append(helper.make_node('Identity', [logits], ['logits']))
    outputs.insert(0, helper.make_tensor_value_info('logits', TensorProto.FLOAT, [1, 1, VOCAB]))
    graph = helper.make_graph(b.nodes, 'decoder_int%d' % bits, inputs, outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 21)], producer_name='onnxc bench/make_int4_decoder.py')
    model.ir_version = 10
    return model, b.weight_bytes


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    opt = dict((a[2:].split('=', 1) + ['1'])[:2] for a in sys.argv[1:] if a.startswith('--'))
    if len(args) != 1:
        raise SystemExit(__doc__)
    model, wbytes = build(int(opt.get('layers', 12)), int(opt.get('past', 127)), int(opt.get('bits', 4)),
                          int(opt.get('block', 32)), 'asym' in opt)
    # (onnx's own checker predates opset 21 here: check with `onnxc check`)
    onnx.save(model, args[0])
    print('%s: %d nodes, %.1f MB of quantized weights and scales read per token' % (args[0], len(model.graph.node), wbytes / 1e6))


if __name__ == '__main__':
    main()
