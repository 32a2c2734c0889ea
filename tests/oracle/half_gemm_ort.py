#!/usr/bin/python3
"""half_gemm_ort.py - MatMul and Gemm by constant float16 weights (onnxc's
packed 16-bit GEMM, src/kernels/gemm_h.c) against onnxruntime (npm
onnxruntime-node, CPU), on seeded random inputs.

  /usr/bin/python3 tests/oracle/half_gemm_ort.py ONNXC_BIN [ORT_NODE_MODULES]

Each model is run by `onnxc run` on one and on two threads and by
onnxruntime; every output element must be within one unit in the last place
of float16 (at onnxruntime's value) plus the float32 rounding of a K-term
sum: both sum in float32 and round once, in different orders. bfloat16 is
not compared: onnxruntime's CPU provider has no bfloat16 MatMul.
Needs python3-onnx, python3-numpy and node; exits 77 (skip) without
onnxruntime-node (scripts/setup.sh installs it in build/ort-oracle).
Prints one line per case and a closing line 'N passed, N failed'."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))

# reads MODEL and the raw float16 input, writes the raw float16 output
ORT_RUN = r"""
const ort = require('onnxruntime-node');
const fs = require('fs');
const [model, input, dims, output] = process.argv.slice(1);
(async () => {
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, logSeverityLevel: 3});
  const b = fs.readFileSync(input);
  const a = new Uint16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const r = await s.run({A: new ort.Tensor('float16', a, JSON.parse(dims))});
  const y = r[s.outputNames[0]];
  fs.writeFileSync(output, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
})().catch((e) => { console.error(String(e.message || e)); process.exit(1); });
"""


def model(name, node, inits, a_dims):
    g = helper.make_graph([node], name,
                          [helper.make_tensor_value_info('A', TensorProto.FLOAT16, a_dims)],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT16, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    return m


def cases(rng):
    """(label, model, A dims, K, scale of the products)"""
    def w(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float16)
    out = []
    for K, N in ((300, 100), (768, 1000), (5, 17)):
        for a_dims in ([1, K], [3, K], [2, 7, K], [64, K]):
            out.append(('MatMul A%s B[%d,%d]' % (a_dims, K, N),
                        model('mm', helper.make_node('MatMul', ['A', 'w'], ['Y']), {'w': w(K, N)},
                              a_dims), a_dims, K))
    K, N, M = 300, 100, 9
    out.append(('Gemm transB alpha beta C[N]',
                model('g1', helper.make_node('Gemm', ['A', 'w', 'c'], ['Y'], transB=1, alpha=0.5,
                                             beta=2.0), {'w': w(N, K), 'c': w(N)}, [M, K]),
                [M, K], K))
    out.append(('Gemm transA C[M,N]',
                model('g2', helper.make_node('Gemm', ['A', 'w', 'c'], ['Y'], transA=1, beta=-1.0),
                      {'w': w(K, N), 'c': w(M, N)}, [K, M]), [K, M], K))
    out.append(('Gemm one row, no C',
                model('g3', helper.make_node('Gemm', ['A', 'w'], ['Y'], transB=1), {'w': w(N, K)},
                      [1, K]), [1, K], K))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    onnxc = sys.argv[1]
    modules = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, '..', '..', 'build',
                                                                  'ort-oracle', 'node_modules')
    env = dict(os.environ, NODE_PATH=os.path.abspath(modules))
    probe = subprocess.run(['node', '-e', "require('onnxruntime-node')"], env=env,
                           capture_output=True)
    if probe.returncode:
        print('onnxruntime-node not available in %s' % modules)
        return SKIP
    rng = np.random.default_rng(16)
    ok = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, m, a_dims, K) in enumerate(cases(rng)):
            path = os.path.join(tmp, 'm%d.onnx' % i)
            onnx.save(m, path)
            a = (rng.standard_normal(a_dims) * 0.5).astype(np.float16)
            raw, pb = os.path.join(tmp, 'a%d.bin' % i), os.path.join(tmp, 'a%d.pb' % i)
            a.tofile(raw)
            with open(pb, 'wb') as f:
                f.write(numpy_helper.from_array(a, 'A').SerializeToString())
            want_file = os.path.join(tmp, 'y%d.bin' % i)
            r = subprocess.run(['node', '-e', ORT_RUN, path, raw, str(a_dims), want_file], env=env,
                               capture_output=True, text=True)
            if r.returncode:
                print('%s: onnxruntime failed: %s' % (label, r.stderr.strip()[-200:]))
                bad += 1
                continue
            want = np.fromfile(want_file, np.float16)
            # |product| summed, for the float32 rounding allowance
            wts = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
            for threads in (1, 2):
                out = os.path.join(tmp, 'o%d_%d' % (i, threads))
                r = subprocess.run([onnxc, 'run', path, '-i', 'A=' + pb, '-o', out, '--threads',
                                    str(threads)], capture_output=True, text=True)
                if r.returncode:
                    print('%s threads %d: onnxc failed: %s' % (label, threads, r.stderr.strip()))
                    bad += 1
                    continue
                got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, 'output_0.pb')))
                got = got.astype(np.float64).ravel()
                ref = want.astype(np.float64)
                node = m.graph.node[0]
                attrs = {x.name: helper.get_attribute_value(x) for x in node.attribute}
                A = a.astype(np.float64)
                A = A.T if attrs.get('transA') else A.reshape(-1, K)
                W = wts['w'].T if attrs.get('transB') else wts['w']
                mag = abs(attrs.get('alpha', 1.0)) * (np.abs(A) @ np.abs(W))
                if 'c' in wts:
                    mag = mag + np.abs(attrs.get('beta', 1.0) * wts['c'])
                ulp = np.spacing(np.abs(want)).astype(np.float64)
                tol = ulp + 4.0 * (K + 2) * 2.0 ** -24 * mag.ravel()
                d = np.abs(got - ref) if got.shape == ref.shape else np.array([np.inf])
                good = bool(np.all(d <= tol))
                same = float(np.mean(d == 0)) if good else 0.0
                print('%-32s threads %d: %s, max |diff| %.3g, %.1f%% identical' %
                      (label, threads, 'ok' if good else 'FAIL', float(d.max()), 100 * same))
                ok += good
                bad += not good
    print('%d passed, %d failed' % (ok, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
