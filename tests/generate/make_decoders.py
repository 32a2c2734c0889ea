"""make_decoders.py - tiny decoder-only language models for the generation
loop's tests (tests/oracle/ort_generate.mjs), built with python3-onnx from
seeded numpy weights:

  a/          no cache: input_ids [batch, sequence] -> logits, the positions
              and the causal mask computed inside the graph, so the sequence
              axis is dynamic and each step runs the whole sequence;
  b/          the same weights in Hugging Face Optimum's decoder-with-past
              layout: input_ids, attention_mask, position_ids and
              past_key_values.N.key/value in, logits and present.N.key/value
              out, the graph concatenating past and new keys and values;
  b_ctx/      b's model with a genai_config.json that gives a context length
              of 16 (for the "beyond the context" error);
  c/          onnxruntime-genai's layout: GroupQueryAttention (rotary inside,
              past and present sharing one buffer of max_length),
              MatMulNBits (4-bit weights), SkipSimplifiedLayerNormalization,
              with its genai_config.json;
  notdecoder/ a model with no input_ids (for the "not a decoder" error).

usage: python3 make_decoders.py OUTDIR; writes OUTDIR/manifest.json listing
the models and their layouts. Exits 77 when numpy or onnx are missing."""
import json
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"python3-onnx / numpy not available: {e}")
    sys.exit(77)

VOCAB, HIDDEN, HEADS, LAYERS, FFN, CONTEXT = 100, 64, 4, 2, 128, 64
HEAD = HIDDEN // HEADS
KV_HEADS = 2  # the genai model groups two query heads per key/value head
NEG = -1e9


class Graph:
    """Nodes and initializers under construction, with fresh value names."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, arr, name=None):
        self.k += 1
        name = name or f"c{self.k}"
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, op, ins, n_out=1, domain="", **attrs):
        self.k += 1
        outs = [f"{op.lower()}{self.k}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{self.k}", domain=domain,
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def i64(self, *v):
        return self.const(np.array(v, np.int64))


def weights(seed=7):
    r = np.random.default_rng(seed)
    n = lambda *s, scale: (r.standard_normal(s) * scale).astype(np.float32)
    w = {"emb": n(VOCAB, HIDDEN, scale=1.0), "pos": n(CONTEXT, HIDDEN, scale=0.5),
         "lm": n(HIDDEN, VOCAB, scale=2.0 / np.sqrt(HIDDEN)), "ln_f": 1 + n(HIDDEN, scale=0.1)}
    for l in range(LAYERS):
        for name, shape in (("q", (HIDDEN, HIDDEN)), ("k", (HIDDEN, HIDDEN)),
                            ("v", (HIDDEN, HIDDEN)), ("o", (HIDDEN, HIDDEN)),
                            ("up", (HIDDEN, FFN)), ("down", (FFN, HIDDEN))):
            w[f"{name}{l}"] = n(*shape, scale=1.0 / np.sqrt(shape[0]))
        w[f"ln1_{l}"] = 1 + n(HIDDEN, scale=0.1)
        w[f"ln2_{l}"] = 1 + n(HIDDEN, scale=0.1)
    return w


def layer_norm(g, x, gamma):
    return g.op("LayerNormalization", [x, g.const(gamma), g.const(np.zeros(HIDDEN, np.float32))],
                axis=-1, epsilon=1e-5)


def heads(g, x):
    """[B, S, HIDDEN] -> [B, HEADS, S, HEAD]"""
    r = g.op("Reshape", [x, g.i64(0, -1, HEADS, HEAD)])
    return g.op("Transpose", [r], perm=[0, 2, 1, 3])


def mha_decoder(with_past):
    """The decoder in plain ONNX operators: without a cache (a) or in
    Optimum's decoder-with-past layout (b)."""
    w, g = weights(), Graph()
    ids = "input_ids"
    emb = g.op("Gather", [g.const(w["emb"]), ids])
    zero, one = g.i64(0), g.i64(1)
    seq = g.op("Gather", [g.op("Shape", [ids]), g.const(np.array(1, np.int64))])
    if with_past:
        pos = "position_ids"
    else:
        pos = g.op("Unsqueeze", [g.op("Range", [g.const(np.array(0, np.int64)), seq,
                                                g.const(np.array(1, np.int64))]), zero])
    x = g.op("Add", [emb, g.op("Gather", [g.const(w["pos"]), pos])])
    inputs = [helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch", "sequence", VOCAB])]
    if with_past:
        inputs += [helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                                 ["batch", "total_sequence"]),
                   helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                                 ["batch", "sequence"])]
    bias = None
    for l in range(LAYERS):
        h = layer_norm(g, x, w[f"ln1_{l}"])
        q = heads(g, g.op("MatMul", [h, g.const(w[f"q{l}"])]))
        k = heads(g, g.op("MatMul", [h, g.const(w[f"k{l}"])]))
        v = heads(g, g.op("MatMul", [h, g.const(w[f"v{l}"])]))
        if with_past:
            for kind, new in (("key", k), ("value", v)):
                past = f"past_key_values.{l}.{kind}"
                inputs.append(helper.make_tensor_value_info(
                    past, TensorProto.FLOAT, ["batch", HEADS, "past_sequence", HEAD]))
                present = f"present.{l}.{kind}"
                g.nodes.append(helper.make_node("Concat", [past, new], [present], axis=2,
                                                name=f"concat_{kind}_{l}"))
                outputs.append(helper.make_tensor_value_info(
                    present, TensorProto.FLOAT, ["batch", HEADS, "total_sequence", HEAD]))
            k, v = f"present.{l}.key", f"present.{l}.value"
        if bias is None:  # the causal mask (and the attention mask), once
            total = g.op("Gather", [g.op("Shape", [k]), g.const(np.array(2, np.int64))])
            past_len = g.op("Sub", [total, seq])
            s0 = g.const(np.array(1, np.int64))
            qpos = g.op("Range", [past_len, total, s0])
            kpos = g.op("Range", [g.const(np.array(0, np.int64)), total, s0])
            future = g.op("Greater", [g.op("Unsqueeze", [kpos, zero]),
                                      g.op("Unsqueeze", [qpos, one])])  # [S, T]
            if with_past:
                masked = g.op("Equal", ["attention_mask", g.const(np.array(0, np.int64))])
                masked = g.op("Unsqueeze", [masked, g.i64(1, 2)])  # [B, 1, 1, T]
                future = g.op("Or", [future, masked])
            bias = g.op("Where", [future, g.const(np.array(NEG, np.float32)),
                                  g.const(np.array(0, np.float32))])
        kt = g.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = g.op("Mul", [g.op("MatMul", [q, kt]), g.const(np.array(HEAD**-0.5, np.float32))])
        p = g.op("Softmax", [g.op("Add", [s, bias])], axis=-1)
        a = g.op("Transpose", [g.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        a = g.op("Reshape", [a, g.i64(0, -1, HIDDEN)])
        x = g.op("Add", [x, g.op("MatMul", [a, g.const(w[f"o{l}"])])])
        h = layer_norm(g, x, w[f"ln2_{l}"])
        u = g.op("MatMul", [h, g.const(w[f"up{l}"])])
        u = g.op("Mul", [u, g.op("Sigmoid", [u])])
        x = g.op("Add", [x, g.op("MatMul", [u, g.const(w[f"down{l}"])])])
    h = layer_norm(g, x, w["ln_f"])
    g.nodes.append(helper.make_node("MatMul", [h, g.const(w["lm"])], ["logits"], name="lm_head"))
    graph = helper.make_graph(g.nodes, "decoder", inputs, outputs, g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="onnxc-tests")
    m.ir_version = 8
    return m


def quantize_4bit(wt, block=32):
    """MatMulNBits' B, scales and zero points for a weight wt [K, N]:
    per column n and block of `block` rows, q = round(w / scale) + 8 in
    [0, 15], two per byte, the lower row in the low nibble; zero point 8."""
    k, n = wt.shape
    blocks = k // block
    b = wt.T.reshape(n, blocks, block)
    scale = np.abs(b).max(axis=2) / 7.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(b / scale[:, :, None]) + 8, 0, 15).astype(np.uint8)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    return packed, scale.reshape(-1).astype(np.float32)


def genai_decoder():
    """The decoder in onnxruntime-genai's layout (c)."""
    w, g = weights(11), Graph()
    ms = "com.microsoft"

    def nbits(x, wt):
        k, n = wt.shape
        packed, scale = quantize_4bit(wt)
        return g.op("MatMulNBits", [x, g.const(packed), g.const(scale)], domain=ms, K=k, N=n,
                    bits=4, block_size=32)

    def rms(x, gamma):
        ms_ = g.op("ReduceMean", [g.op("Mul", [x, x])], axes=[-1])
        inv = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [ms_, g.const(
            np.array(1e-5, np.float32))])])])
        return g.op("Mul", [g.op("Mul", [x, inv]), g.const(gamma)])

    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch", "total_sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                             ["batch", "sequence", VOCAB])]
    summed = g.op("ReduceSum", ["attention_mask", g.i64(1)], keepdims=0)
    seqlens_k = g.op("Cast", [g.op("Sub", [summed, g.const(np.array(1, np.int64))])],
                     to=TensorProto.INT32)
    total = g.op("Cast", [g.op("Gather", [g.op("Shape", ["attention_mask"]),
                                          g.const(np.array(1, np.int64))])],
                 to=TensorProto.INT32)
    inv_freq = 1.0 / (10000 ** (np.arange(0, HEAD, 2, dtype=np.float64) / HEAD))
    freqs = np.outer(np.arange(CONTEXT, dtype=np.float64), inv_freq)
    cos, sin = g.const(np.cos(freqs).astype(np.float32)), g.const(np.sin(freqs).astype(np.float32))
    x = g.op("Gather", [g.const(w["emb"]), "input_ids"])
    kv = HEAD * KV_HEADS
    h = rms(x, w["ln1_0"])
    residual = x
    for l in range(LAYERS):
        q = nbits(h, w[f"q{l}"])
        k = nbits(h, w[f"k{l}"][:, :kv])
        v = nbits(h, w[f"v{l}"][:, :kv])
        past = [f"past_key_values.{l}.key", f"past_key_values.{l}.value"]
        present = [f"present.{l}.key", f"present.{l}.value"]
        for p, pr in zip(past, present):
            inputs.append(helper.make_tensor_value_info(
                p, TensorProto.FLOAT, ["batch", KV_HEADS, "past_sequence", HEAD]))
            outputs.append(helper.make_tensor_value_info(
                pr, TensorProto.FLOAT, ["batch", KV_HEADS, "total_sequence", HEAD]))
        att = f"attn{l}"
        g.nodes.append(helper.make_node(
            "GroupQueryAttention", [q, k, v, past[0], past[1], seqlens_k, total, cos, sin],
            [att, present[0], present[1]], name=f"gqa_{l}", domain=ms, num_heads=HEADS,
            kv_num_heads=KV_HEADS, do_rotary=1, rotary_interleaved=0))
        o = nbits(att, w[f"o{l}"])
        h, _, _, residual = g.op("SkipSimplifiedLayerNormalization",
                                 [o, residual, g.const(w[f"ln2_{l}"])], n_out=4, domain=ms,
                                 epsilon=1e-5)
        u = nbits(h, w[f"up{l}"])
        u = g.op("Mul", [u, g.op("Sigmoid", [u])])
        d = nbits(u, w[f"down{l}"])
        gamma = w[f"ln1_{l + 1}"] if l + 1 < LAYERS else w["ln_f"]
        h, _, _, residual = g.op("SkipSimplifiedLayerNormalization",
                                 [d, residual, g.const(gamma)], n_out=4, domain=ms, epsilon=1e-5)
    packed, scale = quantize_4bit(w["lm"])
    g.nodes.append(helper.make_node("MatMulNBits", [h, g.const(packed), g.const(scale)],
                                    ["logits"], name="lm_head", domain=ms, K=HIDDEN, N=VOCAB,
                                    bits=4, block_size=32))
    graph = helper.make_graph(g.nodes, "genai_decoder", inputs, outputs, g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(ms, 1)],
                          producer_name="onnxc-tests")
    m.ir_version = 8
    return m


def genai_config(context, eos):
    return {"model": {
        "type": "test", "context_length": context, "eos_token_id": eos, "vocab_size": VOCAB,
        "decoder": {
            "filename": "model.onnx", "head_size": HEAD, "hidden_size": HIDDEN,
            "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
            "num_hidden_layers": LAYERS,
            "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                       "past_key_names": "past_key_values.%d.key",
                       "past_value_names": "past_key_values.%d.value"},
            "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                        "present_value_names": "present.%d.value"}}},
        "search": {"max_length": context, "past_present_share_buffer": True,
                   "do_sample": False}}


def not_decoder():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def save(out, sub, model, config=None):
    d = os.path.join(out, sub)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    if config:
        with open(os.path.join(d, "genai_config.json"), "w") as f:
            json.dump(config, f, indent=1)


def main():
    out = sys.argv[1]
    b = mha_decoder(True)
    save(out, "a", mha_decoder(False))
    save(out, "b", b)
    save(out, "b_ctx", b, {"model": {"context_length": 16}})
    save(out, "c", genai_decoder(), genai_config(CONTEXT, [VOCAB - 1]))
    save(out, "notdecoder", not_decoder())
    manifest = {"vocab": VOCAB, "context": CONTEXT, "models": {
        "a": {"layout": "nocache"}, "b": {"layout": "optimum", "heads": HEADS, "head": HEAD,
                                          "layers": LAYERS},
        "c": {"layout": "genai", "heads": KV_HEADS, "head": HEAD, "layers": LAYERS,
              "max_length": CONTEXT}}}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
