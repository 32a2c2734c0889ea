#!/usr/bin/python3
"""Side by side on models and geometries that ../shared/bench/bench.json does not have.

usage: bench/extra_geometries.py BUILD/onnxc [--threads=N] [--reps=R] [--rounds=K] [NAMES...]

Builds (once, into the generated-models folder sidebyside.py uses) a MobileNet-v2 in float and
in static-int8 QDQ form with the builder and quantizer of ../shared/bench/make_cnn.py (ReLU6
as Clip, 17 depthwise layers), an EfficientNet-B0 and a MobileNet-v3-small with the same
builder, then runs ../shared/bench/sidebyside.py from a temporary copy of
that folder whose bench.json lists:
  gpt2_prompt128   gpt2_step.onnx on a 128-token prompt with an empty KV cache
  minilm_b4s64     minilm_l6.onnx at batch 4, sequence 64 (and minilm8_b4s64, its int8 form)
  mobilenet_v2     the float MobileNet-v2 (and mobilenet_v2_qdq)
  efficientnet_b0  an EfficientNet-B0 in float (SiLU, squeeze-and-excitation, 5 x 5 depthwise)
  mobilenet_v3_small  a MobileNet-v3-small in float (HardSwish, HardSigmoid gates)
Needs what sidebyside.py needs (onnxruntime-node: NODE_PATH or build/ort-oracle), no network.
Figures are the caller's to note; nothing here is a test."""
import json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get('ONNXC_SHARED') or os.path.join(HERE, '..', '..', 'shared')
BENCH = os.path.join(SHARED, 'bench')
GENERATED = os.environ.get('ONNXC_BENCH_MODELS') or os.path.join(tempfile.gettempdir(), 'onnxc-bench-models')


def mobilenet_v2(mc, seed=4):
    """Inverted residual blocks (t, c, n, s) of MobileNet-v2 at 224 x 224."""
    from onnx import helper
    t = mc.Net(seed)
    x, cin = t.conv('input', 3, 32, 3, 2, 'relu6'), 32
    for expand, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                            (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride, hidden = s if i == 0 else 1, cin * expand
            y = t.conv(x, cin, hidden, 1, 1, 'relu6') if expand != 1 else x
            y = t.conv(y, hidden, hidden, 3, stride, 'relu6', group=hidden)
            y = t.conv(y, hidden, c, 1, 1, None)
            if stride == 1 and cin == c:
                a = t.nm('add')
                t.nodes.append(helper.make_node('Add', [y, x], [a], name=t.nm('Add')))
                y = a
            x, cin = y, c
    return t.model('mobilenet_v2', t.conv(x, 320, 1280, 1, 1, 'relu6'), 1280)


def efficientnet_b0(mc, seed=5):
    """EfficientNet-B0's MBConv blocks (t, k, c, n, s) at 224 x 224: SiLU as Sigmoid and Mul,
    squeeze-and-excitation (GlobalAveragePool, 1 x 1 reduce to a quarter of the block's input
    channels, SiLU, 1 x 1 expand, Sigmoid, Mul), 3 x 3 and 5 x 5 depthwise layers."""
    from onnx import helper
    t = mc.Net(seed)

    def op(kind, ins, **attrs):
        y = t.nm(kind.lower())
        t.nodes.append(helper.make_node(kind, ins, [y], name=t.nm(kind), **attrs))
        return y

    def silu(x):
        return op('Mul', [x, op('Sigmoid', [x])])

    x, cin = silu(t.conv('input', 3, 32, 3, 2, None)), 32
    for expand, k, c, n, s in ((1, 3, 16, 1, 1), (6, 3, 24, 2, 2), (6, 5, 40, 2, 2), (6, 3, 80, 3, 2),
                               (6, 5, 112, 3, 1), (6, 5, 192, 4, 2), (6, 3, 320, 1, 1)):
        for i in range(n):
            stride, hidden = s if i == 0 else 1, cin * expand
            y = silu(t.conv(x, cin, hidden, 1, 1, None)) if expand != 1 else x
            y = silu(t.conv(y, hidden, hidden, k, stride, None, group=hidden))
            se = silu(t.conv(op('GlobalAveragePool', [y]), hidden, max(1, cin // 4), 1, 1, None))
            y = op('Mul', [y, op('Sigmoid', [t.conv(se, max(1, cin // 4), hidden, 1, 1, None)])])
            y = t.conv(y, hidden, c, 1, 1, None)
            if stride == 1 and cin == c:
                y = op('Add', [y, x])
            x, cin = y, c
    return t.model('efficientnet_b0', silu(t.conv(x, 320, 1280, 1, 1, None)), 1280)


def mobilenet_v3_small(mc, seed=7):
    """MobileNet-v3-small's blocks (k, expansion, c, SE, activation, s) at 224 x 224: HardSwish,
    squeeze-and-excitation with Relu and HardSigmoid (1/6, 1/2), 3 x 3 and 5 x 5 depthwise."""
    from onnx import helper
    t = mc.Net(seed)

    def op(kind, ins, **attrs):
        y = t.nm(kind.lower())
        t.nodes.append(helper.make_node(kind, ins, [y], name=t.nm(kind), **attrs))
        return y

    def act(x, a):
        return op('HardSwish', [x]) if a == 'hs' else op('Relu', [x])

    x, cin = act(t.conv('input', 3, 16, 3, 2, None), 'hs'), 16
    for k, e, c, se, a, s in ((3, 16, 16, True, 're', 2), (3, 72, 24, False, 're', 2),
                              (3, 88, 24, False, 're', 1), (5, 96, 40, True, 'hs', 2),
                              (5, 240, 40, True, 'hs', 1), (5, 240, 40, True, 'hs', 1),
                              (5, 120, 48, True, 'hs', 1), (5, 144, 48, True, 'hs', 1),
                              (5, 288, 96, True, 'hs', 2), (5, 576, 96, True, 'hs', 1),
                              (5, 576, 96, True, 'hs', 1)):
        y = act(t.conv(x, cin, e, 1, 1, None), a) if e != cin else x
        y = act(t.conv(y, e, e, k, s, None, group=e), a)
        if se:
            r = max(8, e // 4)
            g = op('Relu', [t.conv(op('GlobalAveragePool', [y]), e, r, 1, 1, None)])
            g = op('HardSigmoid', [t.conv(g, r, e, 1, 1, None)], alpha=1.0 / 6, beta=0.5)
            y = op('Mul', [y, g])
        y = t.conv(y, e, c, 1, 1, None)
        if s == 1 and cin == c:
            y = op('Add', [y, x])
        x, cin = y, c
    m = t.model('mobilenet_v3_small', act(t.conv(x, 96, 576, 1, 1, None), 'hs'), 576)
    m.opset_import[0].version = 14  # HardSwish
    return m


def ensure_mobilenet():
    names = ('mobilenet_v2.onnx', 'mobilenet_v2_qdq.onnx', 'efficientnet_b0.onnx',
             'mobilenet_v3_small.onnx')
    if all(os.path.exists(os.path.join(GENERATED, n)) for n in names):
        return
    import onnx
    sys.path.insert(0, BENCH)
    import make_cnn as mc
    os.makedirs(GENERATED, exist_ok=True)
    m = mobilenet_v2(mc)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(GENERATED, 'mobilenet_v2.onnx'))
    q = mc.qdq(m)
    onnx.checker.check_model(q)
    onnx.save(q, os.path.join(GENERATED, 'mobilenet_v2_qdq.onnx'))
    for name, build in (('efficientnet_b0', efficientnet_b0), ('mobilenet_v3_small', mobilenet_v3_small)):
        e = build(mc)
        onnx.checker.check_model(e)
        onnx.save(e, os.path.join(GENERATED, name + '.onnx'))


def spec():
    base = json.load(open(os.path.join(BENCH, 'bench.json')))
    out = {}
    g = json.loads(json.dumps(base['gpt2_step']))
    for k, v in g['inputs'].items():
        if k in ('input_ids', 'position_ids', 'attention_mask'):
            v[1] = [1, 128]
        if k == 'position_ids':
            v[2] = 'arange'
        if k.startswith('past_'):
            v[1] = [v[1][0], v[1][1], 0, v[1][3]]
    out['gpt2_prompt128'] = g
    for src, name in (('minilm_l6', 'minilm_b4s64'), ('minilm_l6_int8', 'minilm8_b4s64')):
        e = json.loads(json.dumps(base[src]))
        for v in e['inputs'].values():
            v[1] = [4, 64]
        out[name] = e
    for name in ('mobilenet_v2', 'mobilenet_v2_qdq', 'efficientnet_b0', 'mobilenet_v3_small'):
        e = json.loads(json.dumps(base['resnet50_qdq' if name == 'mobilenet_v2_qdq' else 'resnet50']))
        e['file'], e['root'] = name + '.onnx', 'generated'
        out[name] = e
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ensure_mobilenet()
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'bench')
        shutil.copytree(BENCH, copy)
        json.dump(spec(), open(os.path.join(copy, 'bench.json'), 'w'), indent=1)
        sys.exit(subprocess.run([sys.executable, os.path.join(copy, 'sidebyside.py')] + sys.argv[1:]).returncode)


if __name__ == '__main__':
    main()
