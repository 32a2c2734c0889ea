"""Writes weights.bin for examples/perceptron_external.onnxtxt (307 240 bytes,
little-endian float32): W1 64x1024, W2 1024x10, B1 1024, B2 10 at the offsets
the example names. Values are small and deterministic.

usage: python3 tests/text/make_weights.py [OUT]   (default examples/weights.bin)
"""
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "examples/weights.bin"
counts = [64 * 1024, 1024 * 10, 1024, 10]  # W1, W2, B1, B2
with open(out, "wb") as f:
    for n in counts:
        f.write(struct.pack("<%df" % n, *[((i * 37) % 101 - 50) / 1000.0 for i in range(n)]))
