#!/usr/bin/python3
"""Build a BERT encoder in the form Hugging Face Optimum writes at
optimization level O2 (onnxruntime's transformer optimizer): the com.microsoft
fused operators in place of the exported subgraphs.

usage: make_bert_o2.py OUT.onnx [--layers=6] [--hidden=384] [--heads=12] [--ffn=1536]
                                [--vocab=30522] [--gelu=BiasGelu|FastGelu]

Per layer: Attention (packed QKV weights [H, 3H], bias, mask_index from
EmbedLayerNormalization) -> MatMul -> SkipLayerNormalization (the dense
bias as its bias input) -> MatMul -> BiasGelu (FastGelu at O3) -> MatMul ->
SkipLayerNormalization. Inputs input_ids, attention_mask, token_type_ids
[batch, sequence] int64 (cast to int32 as Optimum does); output
last_hidden_state. all-MiniLM-L6-v2's geometry by default (the bench set's
minilm_l6, there in the exported form), seeded N(0, 0.02) weights. Needs
python3-onnx and numpy; no network."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def main():
    out = sys.argv[1]
    opt = dict(a[2:].split("=", 1) for a in sys.argv[2:] if a.startswith("--"))
    L, H = int(opt.get("layers", 6)), int(opt.get("hidden", 384))
    N, F = int(opt.get("heads", 12)), int(opt.get("ffn", 1536))
    V, gelu = int(opt.get("vocab", 30522)), opt.get("gelu", "BiasGelu")
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def w(name, *shape, scale=0.02):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                             name))
        return name

    def ones(name, n):
        inits.append(numpy_helper.from_array(np.ones(n, np.float32), name))
        return name

    for k in ("input_ids", "attention_mask", "token_type_ids"):
        nodes.append(helper.make_node("Cast", [k], [k + "_i32"], to=TensorProto.INT32))
    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids_i32", "token_type_ids_i32", w("word", V, H), w("pos", 512, H), w("seg", 2, H),
         ones("emb_g", H), w("emb_b", H), "attention_mask_i32"],
        ["h0", "mask_index"], domain=MS, epsilon=1e-12))
    x = "h0"
    for l in range(L):
        p = f"l{l}_"
        nodes.append(helper.make_node("Attention", [x, w(p + "qkv", H, 3 * H), w(p + "qkv_b", 3 * H),
                                                    "mask_index"], [p + "att"], domain=MS,
                                      num_heads=N))
        nodes.append(helper.make_node("MatMul", [p + "att", w(p + "o", H, H)], [p + "o_mm"]))
        nodes.append(helper.make_node("SkipLayerNormalization",
                                      [p + "o_mm", x, ones(p + "ln1_g", H), w(p + "ln1_b", H),
                                       w(p + "o_b", H)], [p + "ln1"], domain=MS, epsilon=1e-12))
        nodes.append(helper.make_node("MatMul", [p + "ln1", w(p + "f1", H, F)], [p + "f1_mm"]))
        nodes.append(helper.make_node(gelu, [p + "f1_mm", w(p + "f1_b", F)], [p + "act"],
                                      domain=MS))
        nodes.append(helper.make_node("MatMul", [p + "act", w(p + "f2", F, H)], [p + "f2_mm"]))
        nodes.append(helper.make_node("SkipLayerNormalization",
                                      [p + "f2_mm", p + "ln1", ones(p + "ln2_g", H),
                                       w(p + "ln2_b", H), w(p + "f2_b", H)], [p + "out"],
                                      domain=MS, epsilon=1e-12))
        x = p + "out"
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ins = [helper.make_tensor_value_info(k, TensorProto.INT64, ["batch", "sequence"])
           for k in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                          ["batch", "sequence", H])]
    g = helper.make_graph(nodes, "bert_o2", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(MS, 1)],
                          producer_name="onnxc-bench")
    m.ir_version = 8
    onnx.save(m, out)


if __name__ == "__main__":
    main()
