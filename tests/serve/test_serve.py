#!/usr/bin/python3
"""Functional test of `onnxc serve` over real HTTP (http.client) on 127.0.0.1.

    test_serve.py ONNXC WORKDIR [--soak N] [--shared DIR]

Builds a model repository in WORKDIR (small models in the ONNX text format,
converted with `onnxc convert`), starts the server on a free port, and checks
every endpoint, every protocol datatype (JSON and binary), the error cases,
outputs bit-identical to `onnxc run`, 32 concurrent clients, dynamic batching
against unbatched results, the repository extension, /metrics, the access log,
then a soak of mixed good and bad requests and a graceful SIGTERM (exit 0, no
sanitizer report: the server may be an ASan+UBSan build). Every step is
bounded in time; nothing leaves 127.0.0.1.
"""
import http.client
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np

ONNXC = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
SOAK = int(sys.argv[sys.argv.index('--soak') + 1]) if '--soak' in sys.argv else 500
SHARED = os.path.abspath(sys.argv[sys.argv.index('--shared') + 1]) if '--shared' in sys.argv else None
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEADLINE = time.time() + float(os.environ.get("SERVE_TEST_SECONDS", "240"))  # the whole test, whatever happens

failures = []
checks = [0]


def check(cond, what):
    checks[0] += 1
    if not cond:
        failures.append(what)
        print('FAIL:', what, flush=True)
    return cond


# ---------------------------------------------------------------- the repository

DTYPES = {  # protocol name: (onnx text type, numpy dtype)
    'BOOL': ('bool', np.bool_), 'UINT8': ('uint8', np.uint8), 'UINT16': ('uint16', np.uint16),
    'UINT32': ('uint32', np.uint32), 'UINT64': ('uint64', np.uint64), 'INT8': ('int8', np.int8),
    'INT16': ('int16', np.int16), 'INT32': ('int32', np.int32), 'INT64': ('int64', np.int64),
    'FP16': ('float16', np.float16), 'FP32': ('float', np.float32), 'FP64': ('double', np.float64),
    'BYTES': ('string', object),
}


def model(folder, text, version=1, config=None):
    d = os.path.join(WORK, 'repo', folder, str(version))
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, 'model.onnxtxt')
    with open(src, 'w') as f:
        f.write(text)
    subprocess.run([ONNXC, 'convert', src, os.path.join(d, 'model.onnx')], check=True, timeout=60)
    os.remove(src)
    if config is not None:
        with open(os.path.join(WORK, 'repo', folder, 'config.json'), 'w') as f:
            json.dump(config, f)


def make_repo():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    head = '<ir_version: 8, opset_import: ["" : 17]>\n'
    for name, (t, _) in DTYPES.items():
        model('id_' + name.lower(), head + f'G ({t}[N, M] x) => ({t}[N, M] y) {{ y = Identity(x) }}\n')
    with open(os.path.join(ROOT, 'examples', 'perceptron.onnxtxt')) as f:
        perceptron = f.read()
    model('perceptron', perceptron)
    model('perceptron_batched', perceptron,
          config={'max_batch_size': 16, 'max_queue_delay_microseconds': 20000})
    # a slow batch for the shutdown test: one request waits 4 s for others
    # (time for it to arrive before SIGTERM even on a loaded machine)
    model('perceptron_slow', perceptron,
          config={'max_batch_size': 64, 'max_queue_delay_microseconds': 4000000})
    model('two_out', head + 'G (float[N] x) => (float[N] a, float[N] b) { a = Identity(x)\n b = Neg(x) }\n')
    model('versions', head + 'G (float[N] x) => (float[N] y) { y = Identity(x) }\n', version=1)
    model('versions', head + 'G (float[N] x) => (float[N] y) { y = Neg(x) }\n', version=3)
    # fails at run time for any x that does not have 5 elements
    model('reshape5', head + 'G (float[N] x) => (float[5] y) <int64[1] s = {5}> { y = Reshape(x, s) }\n')
    os.makedirs(os.path.join(WORK, 'repo', 'broken', '1'))
    with open(os.path.join(WORK, 'repo', 'broken', '1', 'model.onnx'), 'wb') as f:
        f.write(b'\x08\x07\x12\xff\xff\xff\xff\x0fgarbage')
    mel = SHARED and os.path.join(SHARED, 'models', 'melspectrogram.onnx')
    if mel and os.path.exists(mel):
        os.makedirs(os.path.join(WORK, 'repo', 'mel', '1'))
        os.symlink(mel, os.path.join(WORK, 'repo', 'mel', '1', 'model.onnx'))
        return True
    return False


# ---------------------------------------------------------------- the server and a client

class Server:
    started = 0  # each server its own log

    def __init__(self, *args):
        Server.started += 1
        name = 'server.log' if Server.started == 1 else 'server%d.log' % Server.started
        self.log = open(os.path.join(WORK, name), 'w+')
        self.proc = subprocess.Popen([ONNXC, 'serve', '--model-repository', os.path.join(WORK, 'repo'),
                                      '--host', '127.0.0.1', '--port', '0', *args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.port = None
        end = time.time() + 60
        while time.time() < end and self.proc.poll() is None:
            m = re.search(r'listening on 127\.0\.0\.1:(\d+)', self.text())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        if not self.port:
            print(self.text())
            raise SystemExit('the server did not start')

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=60):
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return 'timeout'


def stopped(server):
    """SIGTERM must stop the server with status 0; killed if it does not"""
    try:
        check(server.stop() == 0, 'server exits 0 on SIGTERM')
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def run_steps(steps, kind, *args):
    """runs the test functions, then checks the servers' logs for sanitizer
    reports; the exit status"""
    for step in steps:
        t0 = time.time()
        step(*args)
        print('%-18s %.1f s' % (step.__name__, time.time() - t0), flush=True)
    logs = ''.join(open(os.path.join(WORK, f)).read() for f in os.listdir(WORK) if f.endswith('.log'))
    for word in ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'ThreadSanitizer'):
        check(word not in logs, 'no sanitizer report (%s)' % word)
    if failures:
        print('%d of %d checks failed' % (len(failures), checks[0]))
        return 1
    print('all %d %s checks passed' % (checks[0], kind))
    return 0


def request(port, method, path, body=None, headers=None, timeout=30):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data
    finally:
        c.close()


def jreq(port, method, path, body=None, headers=None):
    status, hdrs, data = request(port, method, path, body, headers)
    try:
        return status, json.loads(data) if data else None
    except ValueError:
        return status, data


def binary_request(inputs, outputs=None, binary_out=False, extra=None):
    """inputs: [(name, datatype, shape, raw bytes)] -> (body, headers)"""
    head = {'inputs': [{'name': n, 'datatype': dt, 'shape': list(s),
                        'parameters': {'binary_data_size': len(raw)}} for n, dt, s, raw in inputs]}
    if outputs is not None:
        head['outputs'] = outputs
    if binary_out:
        head['parameters'] = {'binary_data_output': True}
    if extra:
        head.update(extra)
    j = json.dumps(head).encode()
    return j + b''.join(raw for _, _, _, raw in inputs), {'Inference-Header-Content-Length': str(len(j))}


def split_binary(hdrs, data):
    """(json header, {output name: raw bytes}) of a binary response"""
    n = int(hdrs['inference-header-content-length'])
    head = json.loads(data[:n])
    out, at = {}, n
    for o in head['outputs']:
        size = o.get('parameters', {}).get('binary_data_size')
        if size is not None:
            out[o['name']] = data[at:at + size]
            at += size
    check(at == len(data), 'binary response length adds up')
    return head, out


def to_raw(arr, dt):
    if dt == 'BYTES':
        return b''.join(struct.pack('<I', len(s)) + s for s in arr.reshape(-1))
    return arr.astype(DTYPES[dt][1]).tobytes()


def sample(dt, shape, rng):
    n = int(np.prod(shape))
    if dt == 'BOOL':
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dt == 'BYTES':
        return np.array([('s%d-%s' % (i, '\u00e9\t"\\' if i % 3 == 0 else 'x')).encode()
                         for i in range(n)], dtype=object).reshape(shape)
    if dt in ('FP16', 'FP32', 'FP64'):
        return (rng.standard_normal(n) * 100).astype(DTYPES[dt][1]).reshape(shape)
    info = np.iinfo(DTYPES[dt][1])
    lo = max(info.min, -2 ** 62)
    hi = min(info.max, 2 ** 63 - 1)  # jansson's integers are int64: UINT64 in JSON up to 2^63-1
    vals = [lo, hi, 0] + [int(rng.integers(lo, hi, dtype=np.int64 if hi > 2 ** 31 else np.int64))
                          for _ in range(n - 3)]
    return np.array(vals[:n], dtype=DTYPES[dt][1]).reshape(shape)


def json_data(arr, dt, nested):
    if dt == 'BYTES':
        flat = [s.decode() for s in arr.reshape(-1)]
    elif dt == 'BOOL':
        flat = [bool(v) for v in arr.reshape(-1)]
    elif dt.startswith('FP'):
        flat = [float(v) for v in arr.reshape(-1)]
    else:
        flat = [int(v) for v in arr.reshape(-1)]
    if not nested:
        return flat
    cols = arr.shape[1]
    return [flat[i:i + cols] for i in range(0, len(flat), cols)]


def from_json(data, dt, shape):
    if dt == 'BYTES':
        return np.array([s.encode() for s in data], dtype=object).reshape(shape)
    return np.array(data, dtype=DTYPES[dt][1]).reshape(shape)


def same(a, b):
    if a.dtype == object or b.dtype == object:
        return a.shape == b.shape and list(a.reshape(-1)) == list(b.reshape(-1))
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------- the checks

def test_endpoints(port):
    s, j = jreq(port, 'GET', '/v2')
    check(s == 200 and j['name'] == 'onnxc' and 'binary_tensor_data' in j['extensions']
          and 'model_repository' in j['extensions'], 'server metadata')
    check(jreq(port, 'GET', '/v2/health/live') == (200, {'live': True}), 'live')
    check(jreq(port, 'GET', '/v2/health/ready') == (200, {'ready': True}), 'ready')
    s, j = jreq(port, 'GET', '/v2/models/perceptron')
    check(s == 200 and j['name'] == 'perceptron' and j['versions'] == ['1'] and
          j['inputs'] == [{'name': 'X', 'datatype': 'FP32', 'shape': [-1, 3]}] and
          j['outputs'] == [{'name': 'Out', 'datatype': 'FP32', 'shape': [-1, 2]}], 'model metadata: %s' % j)
    s, j = jreq(port, 'GET', '/v2/models/perceptron/versions/1')
    check(s == 200 and j['name'] == 'perceptron', 'versioned metadata')
    check(jreq(port, 'GET', '/v2/models/perceptron/ready') == (200, {'name': 'perceptron', 'ready': True}),
          'model ready')
    check(jreq(port, 'GET', '/v2/models/perceptron/versions/1/ready')[0] == 200, 'version ready')
    s, j = jreq(port, 'GET', '/v2/models/versions')
    check(s == 200 and j['versions'] == ['3'], 'highest version served: %s' % j)
    s, j = jreq(port, 'POST', '/v2/models/versions/infer',
                {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [2], 'data': [1, -2]}]})
    check(s == 200 and j['outputs'][0]['data'] == [-1, 2] and j['model_version'] == '3',
          'version 3 (Neg) answers: %s' % j)
    s, j = jreq(port, 'GET', '/v2/models/versions/versions/1')
    check(s == 404 and 'version 1' in j['error'], 'a version not served is 404: %s' % j)
    s, j = jreq(port, 'GET', '/v2/models/mel')
    if s == 200:
        check(j['inputs'][0]['datatype'] == 'FP32', 'mel metadata')
    s, j = jreq(port, 'GET', '/metrics')
    check(s == 200, 'metrics')


def test_datatypes(port, rng):
    for dt in DTYPES:
        name = 'id_' + dt.lower()
        s, j = jreq(port, 'GET', '/v2/models/' + name)
        check(s == 200 and j['inputs'][0]['datatype'] == dt and j['inputs'][0]['shape'] == [-1, -1],
              '%s metadata: %s' % (dt, j))
        arr = sample(dt, (3, 4), rng)
        for nested in (False, True):  # JSON in, JSON out
            s, j = jreq(port, 'POST', '/v2/models/%s/infer' % name,
                        {'id': 'r-%s' % dt, 'inputs': [{'name': 'x', 'datatype': dt, 'shape': [3, 4],
                                                        'data': json_data(arr, dt, nested)}]})
            ok = s == 200 and j['id'] == 'r-%s' % dt and j['outputs'][0]['datatype'] == dt and \
                j['outputs'][0]['shape'] == [3, 4]
            check(ok and same(from_json(j['outputs'][0]['data'], dt, (3, 4)), arr),
                  '%s JSON round trip (nested %s): %s' % (dt, nested, j if not ok else ''))
        # binary in, binary out
        body, hdrs = binary_request([('x', dt, (3, 4), to_raw(arr, dt))],
                                    outputs=[{'name': 'y', 'parameters': {'binary_data': True}}])
        s, h, data = request(port, 'POST', '/v2/models/%s/infer' % name, body, hdrs)
        if check(s == 200 and 'inference-header-content-length' in h, '%s binary status %d %s' % (dt, s, data[:200])):
            head, raw = split_binary(h, data)
            check(raw.get('y') == to_raw(arr, dt) and head['outputs'][0]['shape'] == [3, 4],
                  '%s binary round trip' % dt)
        # binary in, JSON out
        body, hdrs = binary_request([('x', dt, (3, 4), to_raw(arr, dt))])
        s, h, data = request(port, 'POST', '/v2/models/%s/infer' % name, body, hdrs)
        check(s == 200 and 'inference-header-content-length' not in h and
              same(from_json(json.loads(data)['outputs'][0]['data'], dt, (3, 4)), arr),
              '%s binary in, JSON out' % dt)
        # JSON in, binary out (request-level parameter)
        s, h, data = request(port, 'POST', '/v2/models/%s/infer' % name,
                             {'parameters': {'binary_data_output': True},
                              'inputs': [{'name': 'x', 'datatype': dt, 'shape': [3, 4],
                                          'data': json_data(arr, dt, False)}]})
        check(s == 200 and split_binary(h, data)[1].get('y') == to_raw(arr, dt), '%s JSON in, binary out' % dt)
    # the full unsigned range only fits the binary form
    big = np.array([[0, 2 ** 64 - 1]], dtype=np.uint64)
    body, hdrs = binary_request([('x', 'UINT64', (1, 2), big.tobytes())], binary_out=True)
    s, h, data = request(port, 'POST', '/v2/models/id_uint64/infer', body, hdrs)
    check(s == 200 and split_binary(h, data)[1]['y'] == big.tobytes(), 'UINT64 2^64-1 in binary')
    # JSON output of the same prints it exactly
    body, hdrs = binary_request([('x', 'UINT64', (1, 2), big.tobytes())])
    s, h, data = request(port, 'POST', '/v2/models/id_uint64/infer', body, hdrs)
    check(s == 200 and json.loads(data)['outputs'][0]['data'] == [0, 2 ** 64 - 1], 'UINT64 JSON output exact')
    # non-finite floats: binary exact, JSON as "NaN"/"Inf"/"-Inf"
    nf = np.array([[np.nan, np.inf, -np.inf, -0.0]], dtype=np.float32)
    s, j = jreq(port, 'POST', '/v2/models/id_fp32/infer',
                {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [1, 4], 'data': ['NaN', 'Inf', '-Inf', -0.0]}]})
    check(s == 200 and j['outputs'][0]['data'][:3] == ['NaN', 'Inf', '-Inf'], 'non-finite JSON: %s' % j)
    # empty tensors
    s, j = jreq(port, 'POST', '/v2/models/id_fp32/infer',
                {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [0, 4], 'data': []}]})
    check(s == 200 and j['outputs'][0]['shape'] == [0, 4] and j['outputs'][0]['data'] == [], 'empty tensor')


def test_outputs(port):
    body = {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [3], 'data': [1, 2, 3]}]}
    s, j = jreq(port, 'POST', '/v2/models/two_out/infer', body)
    check(s == 200 and [o['name'] for o in j['outputs']] == ['a', 'b'], 'all outputs by default')
    s, j = jreq(port, 'POST', '/v2/models/two_out/infer', dict(body, outputs=[{'name': 'b'}]))
    check(s == 200 and len(j['outputs']) == 1 and j['outputs'][0]['data'] == [-1, -2, -3], 'requested output b')
    s, h, data = request(port, 'POST', '/v2/models/two_out/infer',
                         dict(body, outputs=[{'name': 'b', 'parameters': {'binary_data': True}}, {'name': 'a'}]))
    head, raw = split_binary(h, data)
    check(s == 200 and raw['b'] == np.array([-1, -2, -3], np.float32).tobytes() and
          head['outputs'][1]['data'] == [1, 2, 3], 'one output binary, one JSON')


def expect_error(port, method, path, body, status, words, headers=None, what=''):
    s, h, data = request(port, method, path, body, headers)
    try:
        j = json.loads(data)
    except ValueError:
        j = {}
    msg = j.get('error', '') if isinstance(j, dict) else ''
    ok = s == status and h.get('content-type') == 'application/json' and all(w in msg for w in words)
    check(ok, '%s: want %d with %s, got %d %r' % (what or path, status, words, s, data[:300]))


def test_errors(port):
    good = {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [1, 3], 'data': [1, 2, 3]}]}
    p = '/v2/models/perceptron/infer'
    expect_error(port, 'POST', p, b'{"inputs": [', 400, ['malformed JSON'], what='malformed JSON')
    expect_error(port, 'POST', p, b'[1, 2]', 400, ['object'], what='not an object')
    expect_error(port, 'POST', p, {'inputs': []}, 400, ['inputs'], what='no inputs')
    expect_error(port, 'POST', '/v2/models/nope/infer', good, 404, ['nope'], what='unknown model')
    expect_error(port, 'GET', '/v2/models/nope', None, 404, ['nope'], what='unknown model metadata')
    expect_error(port, 'GET', '/v2/models/nope/ready', None, 404, ['nope'], what='unknown model ready')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], name='Y')]}, 400, ["'Y'"], what='wrong name')
    expect_error(port, 'POST', p, {'inputs': [good['inputs'][0], good['inputs'][0]]}, 400, ['twice'], what='twice')
    expect_error(port, 'POST', '/v2/models/two_out/infer', {'inputs': [dict(good['inputs'][0], name='q')]},
                 400, ["'q'"], what='wrong name 2')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], shape=[1, 4], data=[1, 2, 3, 4])]},
                 400, ["'X'", 'shape'], what='wrong shape')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], shape=[3])]}, 400, ["'X'", 'shape'],
                 what='wrong rank')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], datatype='FP64')]}, 400, ["'X'", 'FP64', 'FP32'],
                 what='wrong datatype')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], datatype='FLOAT')]}, 400, ['FLOAT'],
                 what='unknown datatype')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], data=[1, 2])]}, 400, ["'X'", '3', '2'],
                 what='element count')
    expect_error(port, 'POST', p, {'inputs': [dict(good['inputs'][0], data=[1, 'a', 3])]}, 400, ["'X'", 'FP32'],
                 what='bad element')
    expect_error(port, 'POST', '/v2/models/id_int8/infer',
                 {'inputs': [{'name': 'x', 'datatype': 'INT8', 'shape': [1, 1], 'data': [300]}]}, 400,
                 ['out of range'], what='int8 range')
    expect_error(port, 'POST', p, {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [1, 3]}]}, 400,
                 ['data'], what='no data')
    expect_error(port, 'POST', p, dict(good, outputs=[{'name': 'nope'}]), 400, ["'nope'"], what='unknown output')
    body, hdrs = binary_request([('X', 'FP32', (1, 3), b'\0' * 11)])
    expect_error(port, 'POST', p, body, 400, ["'X'", '12', '11'], hdrs, what='binary byte count')
    body, hdrs = binary_request([('X', 'FP32', (1, 3), b'\0' * 12)])
    expect_error(port, 'POST', p, body + b'xx', 400, ['binary'], hdrs, what='binary trailing bytes')
    expect_error(port, 'POST', p, body, 400, ['Inference-Header-Content-Length'],
                 {'Inference-Header-Content-Length': str(len(body) + 5)}, what='header length past body')
    expect_error(port, 'POST', p, body, 400, ['Inference-Header-Content-Length'],
                 {'Inference-Header-Content-Length': 'x1'}, what='bad header length')
    body, hdrs = binary_request([('x', 'BYTES', (1, 1), struct.pack('<I', 100) + b'abc')])
    expect_error(port, 'POST', '/v2/models/id_bytes/infer', body, 400, ['BYTES'], hdrs, what='BYTES length')
    body, hdrs = binary_request([('x', 'BOOL', (1, 1), b'\x07')])
    expect_error(port, 'POST', '/v2/models/id_bool/infer', body, 400, ['BOOL'], hdrs, what='BOOL byte')
    expect_error(port, 'POST', p, b'x' * (1100 * 1024), 413, ['limit'], what='body over --max-body')
    expect_error(port, 'GET', p, None, 405, ['POST'], what='GET infer')
    expect_error(port, 'POST', '/v2/health/live', b'', 405, ['GET'], what='POST live')
    expect_error(port, 'GET', '/v3/x', None, 404, ['/v3/x'], what='unknown path')
    expect_error(port, 'GET', '/v2/models/perceptron/versions/x', None, 400, ['version'], what='bad version')
    expect_error(port, 'POST', '/v2/repository/models/nope/load', b'', 404, ['nope'], what='load unknown')
    # a model that fails at run time answers with an error and the server lives on
    expect_error(port, 'POST', '/v2/models/reshape5/infer',
                 {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [3], 'data': [1, 2, 3]}]}, 500,
                 ['reshape5'], what='run-time failure')
    s, j = jreq(port, 'POST', '/v2/models/reshape5/infer',
                {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [5], 'data': [1, 2, 3, 4, 5]}]})
    check(s == 200, 'the failing model still serves good input')
    check(jreq(port, 'GET', '/v2/health/live')[0] == 200, 'alive after errors')


def run_onnxc(model_path, feeds, outdir):
    """feeds: {name: array} -> list of output arrays, through `onnxc run`"""
    import onnx
    from onnx import numpy_helper
    os.makedirs(outdir, exist_ok=True)
    args = [ONNXC, 'run', model_path, '-o', outdir]
    for k, (name, arr) in enumerate(feeds.items()):
        p = os.path.join(outdir, 'in_%d.npy' % k)
        np.save(p, arr)
        args += ['-i', '%s=%s' % (name, p)]
    subprocess.run(args, check=True, timeout=60, stdout=subprocess.DEVNULL)
    outs = []
    k = 0
    while os.path.exists(os.path.join(outdir, 'output_%d.pb' % k)):
        t = onnx.TensorProto()
        with open(os.path.join(outdir, 'output_%d.pb' % k), 'rb') as f:
            t.ParseFromString(f.read())
        outs.append(numpy_helper.to_array(t))
        k += 1
    return outs


def infer_fp32(port, name, feeds, binary=True):
    """feeds {input: float32 array} -> first output as float32 array (binary or JSON)"""
    if binary:
        body, hdrs = binary_request([(n, 'FP32', a.shape, a.tobytes()) for n, a in feeds.items()], binary_out=True)
        s, h, data = request(port, 'POST', '/v2/models/%s/infer' % name, body, hdrs)
        if s != 200:
            return None
        head, raw = split_binary(h, data)
        o = head['outputs'][0]
        return np.frombuffer(raw[o['name']], np.float32).reshape(o['shape'])
    s, j = jreq(port, 'POST', '/v2/models/%s/infer' % name,
                {'inputs': [{'name': n, 'datatype': 'FP32', 'shape': list(a.shape),
                             'data': [float(v) for v in a.reshape(-1)]} for n, a in feeds.items()]})
    if s != 200:
        return None
    o = j['outputs'][0]
    return np.array(o['data'], dtype=np.float32).reshape(o['shape'])


def test_identical(port, have_mel, rng):
    cases = [('perceptron', {'X': rng.standard_normal((4, 3)).astype(np.float32)})]
    if have_mel:
        cases.append(('mel', {'input': rng.standard_normal((1, 1280)).astype(np.float32)}))
    expected = {}
    for name, feeds in cases:
        ref = run_onnxc(os.path.join(WORK, 'repo', name, '1', 'model.onnx'), feeds, os.path.join(WORK, 'run_' + name))[0]
        for binary in (True, False):
            got = infer_fp32(port, name, feeds, binary)
            check(got is not None and got.shape == ref.shape and got.tobytes() == ref.astype(np.float32).tobytes(),
                  '%s bit-identical to onnxc run (%s)' % (name, 'binary' if binary else 'JSON'))
        expected[name] = (feeds, ref)
    # 32 concurrent clients, each on its own inputs, against serial answers
    work = []
    for i in range(96):
        name = cases[i % len(cases)][0]
        feeds = {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in cases[i % len(cases)][1].items()}
        work.append((name, feeds, infer_fp32(port, name, feeds)))
    bad = []

    def client(k):
        for i in range(k, len(work), 32):
            name, feeds, want = work[i]
            got = infer_fp32(port, name, feeds, binary=(i % 2 == 0))
            if got is None or want is None or got.tobytes() != want.tobytes():
                bad.append(i)
    ts = [threading.Thread(target=client, args=(k,)) for k in range(32)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    check(not bad and all(w[2] is not None for w in work), '32 concurrent clients identical to serial (%d bad)' % len(bad))


def metric(text, name, model):
    m = re.search(r'^%s\{model="%s"\} (\S+)$' % (re.escape(name), re.escape(model)), text, re.M)
    return float(m.group(1)) if m else None


def test_batching(port, rng):
    inputs = [rng.standard_normal((1 + i % 3, 3)).astype(np.float32) for i in range(64)]
    want = [infer_fp32(port, 'perceptron', {'X': x}) for x in inputs]

    def burst():
        """64 requests from 32 clients released together -> (results, runs, requests) of this burst"""
        got = [None] * len(inputs)
        start = threading.Barrier(32)

        def client(k):
            try:
                start.wait(30)
            except threading.BrokenBarrierError:
                pass
            for i in range(k, len(inputs), 32):
                got[i] = infer_fp32(port, 'perceptron_batched', {'X': inputs[i]}, binary=(i % 2 == 1))
        text = request(port, 'GET', '/metrics')[2].decode()
        runs0 = metric(text, 'onnxc_inference_batch_size_count', 'perceptron_batched') or 0
        reqs0 = metric(text, 'onnxc_inference_batch_size_sum', 'perceptron_batched') or 0
        ts = [threading.Thread(target=client, args=(k,)) for k in range(32)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        text = request(port, 'GET', '/metrics')[2].decode()
        runs = metric(text, 'onnxc_inference_batch_size_count', 'perceptron_batched')
        reqs = metric(text, 'onnxc_inference_batch_size_sum', 'perceptron_batched')
        return got, (None if runs is None else runs - runs0), (None if reqs is None else reqs - reqs0)

    # The server batches only requests that are queued or being parsed together (a lone
    # client pays no delay), so on a loaded machine a burst may reach it one request at a
    # time. Up to three bursts are sent; every burst's results are checked, and at least one
    # must have been batched.
    for attempt in range(3):
        got, runs, reqs = burst()
        check(all(g is not None for g in got), 'batched requests answered')
        # A row's value may differ in the last bit with its place in a run (the runtime's
        # GEMM handles row blocks and leftover rows with different instruction
        # sequences), so batched results are checked to within a few ulps; the count of
        # bit-identical ones is printed.
        far = [i for i, (g, w) in enumerate(zip(got, want))
               if g is None or w is None or g.shape != w.shape or not np.allclose(g, w, rtol=1e-6, atol=1e-7)]
        check(not far, 'batched results equal to unbatched: %s' %
              [(i, inputs[i].tolist(), got[i], want[i]) for i in far[:3]])
        print('batching: %d of %d results bit-identical to unbatched' %
              (sum(1 for g, w in zip(got, want) if g is not None and w is not None and g.tobytes() == w.tobytes()),
               len(got)))
        print('batching: burst %d: %d requests in %d runs' % (attempt + 1, reqs or 0, runs or 0))
        if runs is not None and reqs == 64 and runs < reqs:
            break
    check(runs is not None and reqs == 64 and runs < reqs, 'requests were batched: %s runs for %s requests' % (runs, reqs))
    # a request whose inner dims differ from its neighbours' is not stacked with them
    s, j = jreq(port, 'POST', '/v2/models/perceptron_batched/infer',
                {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [1, 4], 'data': [1, 2, 3, 4]}]})
    check(s == 400, 'a batched model still checks shapes')


def test_repository(port):
    s, j = jreq(port, 'POST', '/v2/repository/index', b'')
    names = {m['name']: m for m in j} if s == 200 else {}
    check(names.get('perceptron', {}).get('state') == 'READY', 'index: perceptron READY')
    check(names.get('broken', {}).get('state') == 'UNAVAILABLE' and names['broken'].get('reason'),
          'index: broken UNAVAILABLE with a reason: %s' % names.get('broken'))
    s, j = jreq(port, 'POST', '/v2/repository/index', {'ready': True})
    check(s == 200 and 'broken' not in {m['name'] for m in j}, 'index ready filter')
    check(jreq(port, 'POST', '/v2/repository/models/two_out/unload', b'')[0] == 200, 'unload')
    check(jreq(port, 'GET', '/v2/models/two_out/ready')[0] == 503, 'unloaded: not ready')
    expect_error(port, 'POST', '/v2/models/two_out/infer',
                 {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [1], 'data': [1]}]}, 404,
                 ['two_out', 'not loaded'], what='infer on an unloaded model')
    s, j = jreq(port, 'POST', '/v2/repository/index', b'')
    check(any(m['name'] == 'two_out' and m['state'] == 'UNAVAILABLE' for m in j), 'index: unloaded')
    check(jreq(port, 'POST', '/v2/repository/models/two_out/load', b'')[0] == 200, 'load')
    check(jreq(port, 'GET', '/v2/models/two_out/ready')[0] == 200, 'loaded again: ready')
    s, j = jreq(port, 'POST', '/v2/repository/models/broken/load', b'')
    check(s == 400 and 'broken' in j.get('error', ''), 'load broken: 400 naming it: %s' % j)
    # a model added after the start appears in the index and loads
    model('late', '<ir_version: 8, opset_import: ["" : 17]>\nG (float[N] x) => (float[N] y) { y = Abs(x) }\n')
    s, j = jreq(port, 'POST', '/v2/repository/index', b'')
    check(any(m['name'] == 'late' for m in j), 'index sees a new model')
    check(jreq(port, 'POST', '/v2/repository/models/late/load', b'')[0] == 200, 'load a new model')
    s, j = jreq(port, 'POST', '/v2/models/late/infer',
                {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [2], 'data': [-1.5, 2]}]})
    check(s == 200 and j['outputs'][0]['data'] == [1.5, 2], 'new model serves')


def test_model_control(port):
    """--model-control none (the default): load/unload refused, the index readable"""
    for action in ('load', 'unload'):
        expect_error(port, 'POST', '/v2/repository/models/perceptron/' + action, b'', 403,
                     ['--model-control explicit', action], what=action + ' without model control')
    s, j = jreq(port, 'POST', '/v2/repository/index', b'')
    check(s == 200 and any(m['name'] == 'perceptron' and m['state'] == 'READY' for m in j),
          'index readable without model control')
    check(jreq(port, 'GET', '/v2/models/perceptron/ready')[0] == 200, 'still served after a refused unload')


def test_metrics(port):
    text = request(port, 'GET', '/metrics')[2].decode()
    for fam in ('onnxc_inference_requests_total', 'onnxc_inference_failures_total',
                'onnxc_inference_request_duration_seconds', 'onnxc_inference_queue_duration_seconds',
                'onnxc_inference_batch_size', 'onnxc_http_responses_total'):
        check('# TYPE %s ' % fam in text, 'metrics family %s' % fam)
    check((metric(text, 'onnxc_inference_requests_total', 'perceptron') or 0) > 10, 'request count')
    check((metric(text, 'onnxc_inference_failures_total', 'perceptron') or 0) > 5, 'failure count')
    check(metric(text, 'onnxc_inference_request_duration_seconds_count', 'perceptron') ==
          metric(text, 'onnxc_inference_requests_total', 'perceptron'), 'latency histogram count')
    check(re.search(r'onnxc_inference_request_duration_seconds_bucket\{model="perceptron",le="\+Inf"\} \d+', text),
          '+Inf bucket')
    check(re.search(r'onnxc_http_responses_total\{code="413"\} [1-9]', text), '413 counted')


def soak(port, n, rng):
    """n mixed requests from 8 threads: every one gets its expected status"""
    x = rng.standard_normal((2, 3)).astype(np.float32)
    good_bin, good_hdr = binary_request([('X', 'FP32', (2, 3), x.tobytes())], binary_out=True)
    kinds = [
        ('POST', '/v2/models/perceptron/infer', {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [2, 3],
                                                            'data': [float(v) for v in x.reshape(-1)]}]}, None, 200),
        ('POST', '/v2/models/perceptron_batched/infer', good_bin, good_hdr, 200),
        ('POST', '/v2/models/id_bytes/infer', {'inputs': [{'name': 'x', 'datatype': 'BYTES', 'shape': [1, 2],
                                                          'data': ['a', 'bc']}]}, None, 200),
        ('POST', '/v2/models/perceptron/infer', b'{"inputs": [{"name": "X", "datatype"', None, 400),
        ('POST', '/v2/models/perceptron/infer', {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [2, 3],
                                                            'data': [1]}]}, None, 400),
        ('POST', '/v2/models/perceptron/infer', good_bin[:-4], good_hdr, 400),
        ('POST', '/v2/models/nope/infer', b'{}', None, 404),
        ('POST', '/v2/models/reshape5/infer', {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [2],
                                                          'data': [1, 2]}]}, None, 500),
        ('GET', '/v2/models/perceptron', None, None, 200),
        ('GET', '/v2/health/ready', None, None, 200),
        ('GET', '/metrics', None, None, 200),
        ('POST', '/v2/models/id_fp16/infer', {'inputs': [{'name': 'x', 'datatype': 'FP16', 'shape': [1, 2],
                                                         'data': [0.5, 65504]}]}, None, 200),
        ('POST', '/v2/models/id_int64/infer', {'inputs': [{'name': 'x', 'datatype': 'INT64', 'shape': [1, 1],
                                                          'data': [[[1]]]}]}, None, 200),
    ]
    bad = []
    done = [0]

    def client(k):
        conn = http.client.HTTPConnection('127.0.0.1', port, timeout=30)  # keep-alive
        r = random.Random(k)
        for i in range(k, n, 8):
            if time.time() > DEADLINE - 30:
                break
            method, path, body, hdrs, want = kinds[r.randrange(len(kinds))]
            if isinstance(body, dict):
                body = json.dumps(body).encode()
            try:
                conn.request(method, path, body=body, headers=hdrs or {})
                resp = conn.getresponse()
                resp.read()
                if resp.status != want:
                    bad.append((path, resp.status, want))
            except (OSError, http.client.HTTPException) as e:
                bad.append((path, str(e)))
                conn.close()
                conn = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
            done[0] += 1
        conn.close()
    ts = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    print('soak: %d requests in %.1f s' % (done[0], time.time() - t0))
    check(not bad and done[0] >= n * 0.9, 'soak: %d unexpected answers %s' % (len(bad), bad[:5]))


def test_shutdown(server):
    """SIGTERM while a request waits in a slow batch: it is answered, then exit 0"""
    port = server.port
    result = {}

    def slow():
        result['r'] = jreq(port, 'POST', '/v2/models/perceptron_slow/infer',
                           {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [1, 3], 'data': [1, 2, 3]}]})
    t = threading.Thread(target=slow)
    t.start()
    time.sleep(1.5)
    rc = server.stop(signal.SIGTERM)
    t.join(30)
    check(result.get('r', (0,))[0] == 200, 'in-flight request answered during shutdown: %s' % result)
    check(rc == 0, 'exit status 0 after SIGTERM (got %s)' % rc)
    try:
        request(port, 'GET', '/v2/health/live', timeout=2)
        check(False, 'port closed after shutdown')
    except OSError:
        pass


def main():
    rng = np.random.default_rng(7)
    have_mel = make_repo()
    server = Server('--threads', '2', '--max-body', '1M', '--model-control', 'explicit')
    try:
        port = server.port
        print('server on port', port, flush=True)
        for step in (test_endpoints, test_datatypes, test_outputs, test_errors, test_identical,
                     test_batching, test_repository, test_metrics, soak):
            if time.time() > DEADLINE:
                check(False, 'time is up before ' + step.__name__)
                break
            t0 = time.time()
            if step in (test_endpoints, test_outputs, test_errors, test_repository, test_metrics):
                step(port)
            elif step is test_identical:
                step(port, have_mel, rng)
            elif step is soak:
                step(port, SOAK, rng)
            else:
                step(port, rng)
            print('%-16s %.1f s' % (step.__name__, time.time() - t0), flush=True)
        test_shutdown(server)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    plain = Server('--threads', '1')  # the default --model-control none
    try:
        test_model_control(plain.port)
        check(plain.stop() == 0, 'second server exits 0')
    finally:
        if plain.proc.poll() is None:
            plain.proc.kill()
            plain.proc.wait()
    log = server.text()
    check(re.search(r'"POST /v2/models/perceptron/infer" 200 \d+ [\d.]+ms', log), 'access log lines')
    check(re.search(r'"POST /v2/models/perceptron/infer" 400 ', log), 'access log: errors too')
    check('model \'broken\' not loaded' in log, 'the broken model is reported at start')
    for word in ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'UndefinedBehaviorSanitizer',
                 'ThreadSanitizer'):
        check(word not in log, 'no sanitizer report (%s)' % word)
    if failures:
        tail = [l for l in log.splitlines() if not l.startswith('20')][-40:]
        print('\n'.join(tail))
        print('%d of %d checks failed' % (len(failures), checks[0]))
        return 1
    print('all %d serve checks passed' % checks[0])
    return 0


if __name__ == '__main__':
    sys.exit(main())
