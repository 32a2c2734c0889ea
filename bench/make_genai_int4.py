#!/usr/bin/python3
"""Build a decoder in onnxruntime-genai's int4 layout at a size whose
weights do not fit in cache, for the decode-bandwidth figure (issue 32):
GroupQueryAttention (rotary inside, past and present one buffer of the
context length), MatMulNBits (4 bits, block 32), SkipSimplifiedLayer-
Normalization, with its genai_config.json; the graph is
tests/generate/make_decoders.py's model (c) at other dimensions.

usage: make_genai_int4.py OUTDIR [--layers=4] [--hidden=2048] [--heads=32] [--kv-heads=8]
                                 [--ffn=5632] [--vocab=32000] [--context=2048]

Prints the bytes of weights one decode step reads (packed 4-bit matrices and
their scales). Run `onnxc generate OUTDIR/model.onnx --ids 1,2,3 --max-new-tokens 64
--threads N`: bytes / (1 / tokens per second) is the weight read rate, to
compare with bench/membw.c's figure."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "generate"))
import make_decoders as md  # noqa: E402
import onnx  # noqa: E402


def main():
    out = sys.argv[1]
    opt = dict(a[2:].split("=", 1) for a in sys.argv[2:] if a.startswith("--"))
    md.LAYERS = int(opt.get("layers", 4))
    md.HIDDEN = int(opt.get("hidden", 2048))
    md.HEADS = int(opt.get("heads", 32))
    md.KV_HEADS = int(opt.get("kv-heads", 8))
    md.HEAD = md.HIDDEN // md.HEADS
    md.FFN = int(opt.get("ffn", 5632))
    md.VOCAB = int(opt.get("vocab", 32000))
    md.CONTEXT = int(opt.get("context", 2048))
    os.makedirs(out, exist_ok=True)
    m = md.genai_decoder()
    nbytes = sum(len(t.raw_data) for t in m.graph.initializer if t.data_type in (2, 1)
                 and t.name and len(t.dims) >= 1 and t.raw_data)
    packed = 0
    for n in m.graph.node:
        if n.op_type == "MatMulNBits":
            for name in n.input[1:3]:
                t = next(t for t in m.graph.initializer if t.name == name)
                packed += len(t.raw_data)
    onnx.save(m, os.path.join(out, "model.onnx"))
    with open(os.path.join(out, "genai_config.json"), "w") as f:
        json.dump(md.genai_config(md.CONTEXT, [md.VOCAB - 1]), f, indent=1)
    print(f"MatMulNBits weights and scales read per decode step: {packed} bytes "
          f"({packed / 1e6:.1f} MB); all initializers {nbytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
