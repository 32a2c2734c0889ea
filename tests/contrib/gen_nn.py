"""gen_nn.py - cases of the com.microsoft encoder building blocks
(src/ops/contrib/nn.c) for tests/oracle/ort_cases.mjs."""
import numpy as np

from cases import Cases, node

c = Cases(seed=11)

# QuickGelu: the default alpha, another alpha, a large tensor split over threads
x = c.randn(2, 3, 40, scale=3.0)
c.add("QuickGelu default alpha", [node("QuickGelu", ["X"], ["Y"], "qg0")], {"X": x}, ["Y"])
c.add("QuickGelu alpha 1.5", [node("QuickGelu", ["X"], ["Y"], "qg1", alpha=1.5)],
      {"X": x}, ["Y"])
c.add("QuickGelu 300k values", [node("QuickGelu", ["X"], ["Y"], "qg2")],
      {"X": c.randn(3, 100, 1000, scale=4.0)}, ["Y"])

c.write()
