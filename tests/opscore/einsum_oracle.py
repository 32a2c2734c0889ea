"""Einsum against numpy.einsum (independent oracle): float32 equations that
take the batched-GEMM path (batch/M/N/K labels, ellipsis broadcasting,
implicit output, empty dims) and some that do not (diagonals, one-sided sums).
Usage: einsum_oracle.py ONNXC. Exit 77 (skipped) without numpy/onnx."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    sys.exit(77)

CASES = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("i,i->", [(7,), (7,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bik,bkj->bji", [(2, 0, 3), (2, 3, 4)]),
    ("ijk,ikl->", [(2, 3, 4), (2, 4, 5)]),
    ("ii,ij->j", [(3, 3), (3, 4)]),
    ("ij,kl->ik", [(3, 4), (5, 6)]),
]


def main():
    onnxc = sys.argv[1]
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as root:
        for n, (eq, shapes) in enumerate(CASES):
            ins = [rng.random(s, dtype=np.float32) for s in shapes]
            ref = np.asarray(np.einsum(eq, *ins), dtype=np.float32)
            node = helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)
            graph = helper.make_graph(
                [node], "g",
                [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in zip("ab", shapes)],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
            model.ir_version = 7
            case = os.path.join(root, "einsum_%d" % n)
            data = os.path.join(case, "test_data_set_0")
            os.makedirs(data)
            onnx.save(model, os.path.join(case, "model.onnx"))
            for i, a in enumerate(ins):
                with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())
            with open(os.path.join(data, "output_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(ref).SerializeToString())
        r = subprocess.run([onnxc, "test", root], capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
