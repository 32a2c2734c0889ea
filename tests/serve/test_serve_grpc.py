#!/usr/bin/python3
"""`onnxc serve --grpc-port`: the KServe v2 gRPC API over real HTTP/2 on loopback.

    test_serve_grpc.py ONNXC WORKDIR GRPC_CLIENT PROTOC

The messages are made and read here with Python's protobuf, from
src/serve/grpc_service.proto compiled by protoc; tests/serve/grpc_client.c
(gRPC's C core) only carries their bytes. So the server's own wire code
(src/serve/grpc_msg.c) is checked against an independent codec, and the
outputs against `onnxc run`. Covered: health, metadata, readiness, inference
with raw and with typed contents for every datatype, requested outputs, 32
calls at once (batched), bearer tokens in the `authorization` metadata,
model control, bad messages answered with a status that names the field,
TLS (with SIGHUP reload), callers that open calls and never finish sending
their message (none of it, or half: raw HTTP/2 connections made here), and a
clean SIGTERM.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serve as ts  # noqa: E402  (reads ONNXC and WORKDIR from the same argv)

from test_serve import check, np  # noqa: E402

WORK = ts.WORK
CLIENT, PROTOC = os.path.abspath(sys.argv[3]), sys.argv[4]
SERVICE = '/inference.GRPCInferenceService/'
HEAD = '<ir_version: 8, opset_import: ["" : 17]>\n'
OK, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, PERMISSION_DENIED = 0, 3, 4, 5, 7
UNIMPLEMENTED, UNAVAILABLE, UNAUTHENTICATED = 12, 14, 16

# protocol datatype: (onnx text type, numpy dtype, InferTensorContents field or None)
TYPES = {
    'BOOL': ('bool', np.bool_, 'bool_contents'), 'UINT8': ('uint8', np.uint8, 'uint_contents'),
    'UINT16': ('uint16', np.uint16, 'uint_contents'), 'UINT32': ('uint32', np.uint32, 'uint_contents'),
    'UINT64': ('uint64', np.uint64, 'uint64_contents'), 'INT8': ('int8', np.int8, 'int_contents'),
    'INT16': ('int16', np.int16, 'int_contents'), 'INT32': ('int32', np.int32, 'int_contents'),
    'INT64': ('int64', np.int64, 'int64_contents'), 'FP16': ('float16', np.float16, None),
    'FP32': ('float', np.float32, 'fp32_contents'), 'FP64': ('double', np.float64, 'fp64_contents'),
    'BYTES': ('string', object, 'bytes_contents'),
}


def load_pb():
    out = os.path.join(WORK, 'pb')
    os.makedirs(out, exist_ok=True)
    proto_dir = os.path.join(ts.ROOT, 'src', 'serve')
    subprocess.run([PROTOC, '--python_out=' + out, '-I', proto_dir,
                    os.path.join(proto_dir, 'grpc_service.proto')], check=True, timeout=60)
    sys.path.insert(0, out)
    import grpc_service_pb2
    return grpc_service_pb2


def make_repo():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    with open(os.path.join(ts.ROOT, 'examples', 'perceptron.onnxtxt')) as f:
        ts.model('perceptron', f.read())
    ts.model('batched', open(os.path.join(ts.ROOT, 'examples', 'perceptron.onnxtxt')).read(),
             config={'max_batch_size': 8, 'max_queue_delay_microseconds': 20000})
    ins = ', '.join('%s[N, 2] in_%s' % (t[0], d) for d, t in TYPES.items())
    outs = ', '.join('%s[N, 2] out_%s' % (t[0], d) for d, t in TYPES.items())
    body = ''.join('out_%s = Identity(in_%s)\n' % (d, d) for d in TYPES)
    ts.model('alltypes', HEAD + 'G (%s) => (%s) {\n%s}\n' % (ins, outs, body))
    typed = [d for d in TYPES if d != 'FP16']
    ins = ', '.join('%s[N, 2] in_%s' % (TYPES[d][0], d) for d in typed)
    outs = ', '.join('%s[N, 2] out_%s' % (TYPES[d][0], d) for d in typed)
    body = ''.join('out_%s = Identity(in_%s)\n' % (d, d) for d in typed)
    ts.model('typed', HEAD + 'G (%s) => (%s) {\n%s}\n' % (ins, outs, body))
    # a run long enough (16 products of 512 x 512 matrices) for calls to queue behind it
    chain = ''.join('m%d = MatMul(m%d, a)\n' % (i + 1, i) for i in range(16))
    ts.model('slow', HEAD + 'G (float[1] x) => (float[1, 1] y) <int64[2] s = {512, 512}> {\n'
             'm0 = Expand(x, s)\na = Expand(x, s)\n' + chain + 'y = ReduceSum(m16)\n}\n')


class Grpc:
    """calls through grpc_client; each answer is (status, message, response bytes)"""

    def __init__(self, port, token=None, ca=None):
        self.port, self.token, self.ca, self.n = port, token, ca, 0

    def call(self, method, request, calls=1, token=None, timeout=60):
        self.n += 1
        req = os.path.join(WORK, 'req%d.bin' % self.n)
        out = os.path.join(WORK, 'resp%d' % self.n)
        with open(req, 'wb') as f:
            f.write(request if isinstance(request, bytes) else request.SerializeToString())
        args = [CLIENT, '127.0.0.1:%d' % self.port, SERVICE + method if '/' not in method else method,
                req, out, '--calls', str(calls)]
        token = token if token is not None else self.token
        if token:
            args += ['--token', token]
        if self.ca:
            args += ['--ca', self.ca]
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 30)
        answers = []
        for line in p.stdout.splitlines():
            i, status, msg = (line.split(' ', 2) + [''])[:3]
            data = None
            if os.path.exists('%s.%s' % (out, i)):
                with open('%s.%s' % (out, i), 'rb') as f:
                    data = f.read()
            answers.append((int(status), msg, data))
        check(p.returncode == 0 and len(answers) == calls,
              '%s: the client finished %d call(s) (rc %d, %s)' % (method, calls, p.returncode, p.stderr[-300:]))
        return answers if calls > 1 else (answers[0] if answers else (None, '', None))


# ---------------------------------------------------------------- raw HTTP/2

H2_DATA, H2_HEADERS, H2_RST_STREAM, H2_SETTINGS, H2_PING = 0, 1, 3, 4, 6
H2_END_STREAM, H2_ACK, H2_END_HEADERS = 1, 1, 4


def h2_frame(kind, flags, stream, payload=b''):
    """an HTTP/2 frame (RFC 7540 section 4.1)"""
    return len(payload).to_bytes(3, 'big') + bytes([kind, flags]) + stream.to_bytes(4, 'big') + payload


def hpack_literal(name, value):
    """a header as an HPACK literal without indexing, new name, no Huffman
    coding (RFC 7541 section 6.2.2); the names and values here are short"""
    assert len(name) < 127 and len(value) < 127
    return b'\x00' + bytes([len(name)]) + name + bytes([len(value)]) + value


class Stalled:
    """one HTTP/2 connection whose gRPC calls (streams) open and send the
    first `part` of their length-prefixed message (0: none, 0.5: half), then
    nothing more, the socket kept open. Records when the server ends each
    stream (its trailers, or RST_STREAM) and the trailers' bytes."""

    def __init__(self, port, streams, message, part):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=60)
        self.ended, self.trailers, self.gone = {}, {}, False
        head = b''.join(hpack_literal(n, v) for n, v in (
            (b':method', b'POST'), (b':scheme', b'http'),
            (b':path', (SERVICE + 'ModelInfer').encode()),
            (b':authority', b'127.0.0.1:%d' % port),
            (b'content-type', b'application/grpc'), (b'te', b'trailers')))
        body = b'\x00' + len(message).to_bytes(4, 'big') + message
        out = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + h2_frame(H2_SETTINGS, 0, 0)
        self.streams = [1 + 2 * k for k in range(streams)]
        for sid in self.streams:
            out += h2_frame(H2_HEADERS, H2_END_HEADERS, sid, head)
            if part:
                out += h2_frame(H2_DATA, 0, sid, body[:int(len(body) * part)])
        self.t0 = time.time()
        self.sock.sendall(out)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        buf = b''
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b''
            if not data:
                self.gone = True  # the server closed the connection
                return
            buf += data
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], 'big'):
                n = int.from_bytes(buf[:3], 'big')
                kind, flags, sid = buf[3], buf[4], int.from_bytes(buf[5:9], 'big') & 0x7fffffff
                payload, buf = buf[9:9 + n], buf[9 + n:]
                try:
                    if kind == H2_SETTINGS and not flags & H2_ACK:
                        self.sock.sendall(h2_frame(H2_SETTINGS, H2_ACK, 0))
                    elif kind == H2_PING and not flags & H2_ACK:
                        self.sock.sendall(h2_frame(H2_PING, H2_ACK, 0, payload))
                except OSError:
                    return
                if sid and (kind == H2_RST_STREAM or (kind == H2_HEADERS and flags & H2_END_STREAM)):
                    self.ended.setdefault(sid, time.time() - self.t0)
                    if kind == H2_HEADERS:
                        self.trailers[sid] = payload

    def wait(self, timeout):
        end = time.time() + timeout
        while time.time() < end and len(self.ended) < len(self.streams) and not self.gone:
            time.sleep(0.05)
        return self.ended

    def close(self):
        self.sock.close()


def start(*args):
    server = ts.Server('--grpc-port', '0', *args)
    end, port = time.time() + 10, None
    while time.time() < end and not port:
        m = re.search(r'gRPC \(inference\.GRPCInferenceService\) on 127\.0\.0\.1:(\d+)', server.text())
        port = int(m.group(1)) if m else None
        time.sleep(0.02)
    if not port:
        print(server.text())
        raise SystemExit('no gRPC port in the start lines')
    return server, port


stopped = ts.stopped


def tensor_array(pb_out, raw, dtype, shape):
    """one output of a ModelInferResponse as a numpy array"""
    if raw is not None:
        if dtype == 'BYTES':
            vals, at = [], 0
            while at < len(raw):
                n = int.from_bytes(raw[at:at + 4], 'little')
                vals.append(raw[at + 4:at + 4 + n])
                at += 4 + n
            return np.array(vals, dtype=object).reshape(shape)
        return np.frombuffer(raw, dtype=TYPES[dtype][1]).reshape(shape)
    field = TYPES[dtype][2]
    vals = list(getattr(pb_out.contents, field))
    return np.array(vals, dtype=TYPES[dtype][1] if dtype != 'BYTES' else object).reshape(shape)


def outputs_of(pb, data):
    r = pb.ModelInferResponse()
    r.ParseFromString(data)
    got = {}
    for i, o in enumerate(r.outputs):
        raw = r.raw_output_contents[i] if r.raw_output_contents else None
        got[o.name] = (o.datatype, list(o.shape), tensor_array(o, raw, o.datatype, list(o.shape)))
    return r, got


def infer_request(pb, model, feeds, raw, outputs=()):
    """feeds: [(name, datatype, array)]"""
    q = pb.ModelInferRequest(model_name=model, id='req-1')
    for name, dt, arr in feeds:
        t = q.inputs.add(name=name, datatype=dt, shape=list(arr.shape))
        if raw:
            if dt == 'BYTES':
                q.raw_input_contents.append(b''.join(len(v).to_bytes(4, 'little') + v for v in arr.flat))
            else:
                q.raw_input_contents.append(np.ascontiguousarray(arr).tobytes())
        else:
            field = TYPES[dt][2]
            getattr(t.contents, field).extend(list(arr.flat) if dt != 'BOOL' else [bool(v) for v in arr.flat])
    for o in outputs:
        q.outputs.add(name=o)
    return q


# ---------------------------------------------------------------- the checks


def test_service(pb):
    tokens = os.path.join(WORK, 'tokens')
    with open(tokens, 'w') as f:
        f.write('tokG\n')
    server, port = start('--threads', '2', '--auth-token-file', tokens)
    g = Grpc(port, token='tokG')
    try:
        # health stays open, as the REST probes do
        s, msg, data = g.call('ServerLive', pb.ServerLiveRequest(), token='')
        r = pb.ServerLiveResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.live, 'ServerLive without a token: live (%s %s)' % (s, msg))
        s, msg, data = g.call('ServerReady', pb.ServerReadyRequest(), token='')
        r = pb.ServerReadyResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.ready, 'ServerReady: ready')
        s, msg, data = g.call('ModelReady', pb.ModelReadyRequest(name='perceptron'), token='')
        r = pb.ModelReadyResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.ready, 'ModelReady perceptron: ready')
        s, msg, _ = g.call('ModelReady', pb.ModelReadyRequest(name='nosuch'))
        check(s == NOT_FOUND and 'nosuch' in msg, 'ModelReady of an unknown model: NOT_FOUND (%s %s)' % (s, msg))
        # everything else needs the token
        s, msg, _ = g.call('ServerMetadata', pb.ServerMetadataRequest(), token='')
        check(s == UNAUTHENTICATED and 'authorization' in msg, 'no token: UNAUTHENTICATED (%s %s)' % (s, msg))
        s, msg, _ = g.call('ModelInfer', infer_request(pb, 'perceptron', [], True), token='wrong')
        check(s == UNAUTHENTICATED, 'a wrong token: UNAUTHENTICATED (%s %s)' % (s, msg))
        s, msg, data = g.call('ServerMetadata', pb.ServerMetadataRequest())
        r = pb.ServerMetadataResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.name == 'onnxc' and r.version and 'model_repository' in r.extensions,
              'ServerMetadata: %s %s %s' % (s, r.name, list(r.extensions)))
        s, msg, data = g.call('ModelMetadata', pb.ModelMetadataRequest(name='perceptron'))
        r = pb.ModelMetadataResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.name == 'perceptron' and list(r.versions) == ['1'] and
              [(t.name, t.datatype, list(t.shape)) for t in r.inputs] == [('X', 'FP32', [-1, 3])] and
              [(t.name, t.datatype, list(t.shape)) for t in r.outputs] == [('Out', 'FP32', [-1, 2])],
              'ModelMetadata perceptron: %s' % str(r).replace('\n', ' '))

        # inference, raw and typed, against `onnxc run`
        rng = np.random.default_rng(7)
        x = rng.standard_normal((5, 3)).astype(np.float32)
        want = ts.run_onnxc(os.path.join(WORK, 'repo', 'perceptron', '1', 'model.onnx'), {'X': x},
                            os.path.join(WORK, 'run_perceptron'))[0]
        for raw in (True, False):
            s, msg, data = g.call('ModelInfer', infer_request(pb, 'perceptron', [('X', 'FP32', x)], raw))
            if check(s == OK, 'ModelInfer perceptron (%s): OK (%s %s)' % ('raw' if raw else 'typed', s, msg)):
                r, got = outputs_of(pb, data)
                check(r.model_name == 'perceptron' and r.model_version == '1' and r.id == 'req-1',
                      'the response names the model, version and id')
                check(bool(r.raw_output_contents) == raw, 'outputs come %s, as the inputs did' %
                      ('raw' if raw else 'typed'))
                dt, shape, y = got['Out']
                check(dt == 'FP32' and shape == [5, 2] and np.array_equal(y, want),
                      'ModelInfer perceptron (%s) equals onnxc run' % ('raw' if raw else 'typed'))

        # every datatype both ways through the identity model
        feeds = []
        for d, (_, npt, _) in TYPES.items():
            if d == 'BYTES':
                arr = np.array([[b'a', b''], [b'\xc3\xa9t\xc3\xa9', b'x' * 300]], dtype=object)
            elif d == 'BOOL':
                arr = np.array([[True, False], [False, True]])
            elif npt in (np.float16, np.float32, np.float64):
                arr = np.array([[1.5, -2.25], [np.inf, 3e-3]], dtype=npt)
            else:
                info = np.iinfo(npt)
                arr = np.array([[info.min, info.max], [0, 1]], dtype=npt)
            feeds.append(('in_' + d, d, arr))
        s, msg, data = g.call('ModelInfer', infer_request(pb, 'alltypes', feeds, True))
        if check(s == OK, 'alltypes raw: OK (%s %s)' % (s, msg)):
            _, got = outputs_of(pb, data)
            for name, d, arr in feeds:
                o = got.get('out_' + d)
                check(o is not None and o[0] == d and o[1] == [2, 2] and
                      (list(o[2].flat) == list(arr.flat) if d == 'BYTES' else np.array_equal(o[2], arr)),
                      'alltypes raw %s round trip (%s)' % (d, o and o[2].tolist()))
        # typed: every datatype with a field (the model without FP16)
        typed = [f for f in feeds if f[1] != 'FP16']
        s, msg, data = g.call('ModelInfer', infer_request(pb, 'typed', typed, False))
        if check(s == OK, 'typed contents of every datatype: OK (%s %s)' % (s, msg)):
            r, got = outputs_of(pb, data)
            check(not r.raw_output_contents, 'typed inputs: typed outputs')
            for name, d, arr in typed:
                o = got.get('out_' + d)
                check(o is not None and o[0] == d and o[1] == [2, 2] and
                      (list(o[2].flat) == list(arr.flat) if d == 'BYTES' else np.array_equal(o[2], arr)),
                      'typed %s round trip (%s)' % (d, o and o[2].tolist()))
        # FP16 has no typed field: a typed request cannot carry it
        q = infer_request(pb, 'alltypes', typed, False)
        q.inputs.add(name='in_FP16', datatype='FP16', shape=[2, 2])
        s, msg, _ = g.call('ModelInfer', q)
        check(s == INVALID_ARGUMENT and 'FP16' in msg and 'raw_input_contents' in msg,
              'FP16 in a typed request: INVALID_ARGUMENT saying it goes raw (%s)' % msg)
        s, msg, data = g.call('ModelInfer', infer_request(pb, 'alltypes', typed, False))
        check(s == INVALID_ARGUMENT and "missing input 'in_FP16'" in msg, 'a missing input is named (%s)' % msg)

        # requested outputs: the order asked, only those
        s, msg, data = g.call('ModelInfer', infer_request(pb, 'alltypes', feeds, True,
                                                          outputs=['out_INT8', 'out_FP32']))
        if check(s == OK, 'requested outputs: OK (%s)' % msg):
            r, got = outputs_of(pb, data)
            check([o.name for o in r.outputs] == ['out_INT8', 'out_FP32'] and len(r.raw_output_contents) == 2,
                  'requested outputs: those, in that order')

        # 32 calls at once, batched by the model's config, each equal to onnxc run
        xs = rng.standard_normal((1, 3)).astype(np.float32)
        want1 = ts.run_onnxc(os.path.join(WORK, 'repo', 'batched', '1', 'model.onnx'), {'X': xs},
                             os.path.join(WORK, 'run_batched'))[0]
        answers = g.call('ModelInfer', infer_request(pb, 'batched', [('X', 'FP32', xs)], True), calls=32)
        good = 0
        for s, msg, data in answers:
            if s == OK:
                _, got = outputs_of(pb, data)
                good += np.allclose(got['Out'][2], want1, rtol=1e-6, atol=1e-6)
            else:
                print('call: %s %s' % (s, msg))
        check(good == 32, '32 concurrent ModelInfer calls: %d of 32 equal onnxc run' % good)
        text = ts.request(server.port, 'GET', '/metrics', headers={'Authorization': 'Bearer tokG'})[2].decode()
        runs = re.search(r'^onnxc_inference_batch_size_count\{model="batched"\} (\d+)', text, re.M)
        runs = int(runs.group(1)) if runs else None
        # how many calls meet in a batch depends on their timing (a lone call is not
        # held back): the count is shown, not required
        check(runs is not None and runs <= 32, 'the 32 calls took at most 32 runs: %s' % runs)
        print('32 concurrent gRPC calls: %s model runs' % runs)

        # bad messages: a status that names the field
        x3 = np.zeros((1, 3), np.float32)
        bad = [
            (b'\xff\xff\xff', 'ModelInferRequest', 'garbage bytes'),
            (pb.ModelInferRequest(), 'model_name', 'no model_name'),
            (infer_request(pb, 'nosuch', [('X', 'FP32', x3)], True), 'nosuch', 'an unknown model'),
        ]
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], True)
        q.inputs[0].datatype = 'FP99'
        bad.append((q, 'inputs[0].datatype', 'an unknown datatype'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], True)
        q.raw_input_contents[0] = b'\0' * 8
        bad.append((q, 'raw_input_contents[0]', 'raw bytes of the wrong size'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], True)
        q.raw_input_contents.append(b'')
        bad.append((q, 'raw_input_contents has 2 entries', 'more raw entries than inputs'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], False)
        q.inputs[0].contents.int64_contents.append(1)
        bad.append((q, 'inputs[0].contents.int64_contents', 'the wrong typed field'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], False)
        q.inputs[0].contents.fp32_contents.append(1.0)
        bad.append((q, 'inputs[0].contents.fp32_contents', 'too many values'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', np.zeros((1, 4), np.float32))], True)
        bad.append((q, "input 'X'", 'a shape the model does not take'))
        q = infer_request(pb, 'perceptron', [('Z', 'FP32', x3)], True)
        bad.append((q, 'inputs[0].name', 'an unknown input'))
        q = infer_request(pb, 'perceptron', [('X', 'FP32', x3)], True, outputs=['nope'])
        bad.append((q, 'outputs[0].name', 'an unknown output'))
        q = infer_request(pb, 'alltypes', [('in_INT8', 'INT8', np.zeros((1, 2), np.int8))], False)
        q.inputs[0].contents.int_contents[:] = [5, 300]
        bad.append((q, 'int_contents[1] is 300', 'a value out of range for INT8'))
        for req, words, what in bad:
            s, msg, _ = g.call('ModelInfer', req)
            want_s = NOT_FOUND if what == 'an unknown model' else INVALID_ARGUMENT
            check(s == want_s and words in msg, '%s: status %s naming %r (%s %s)' % (what, want_s, words, s, msg))
        s, msg, _ = g.call('ModelMetadata', b'\x0a\x05ab')
        check(s == INVALID_ARGUMENT and 'malformed' in msg, 'a truncated ModelMetadataRequest: INVALID_ARGUMENT (%s)' % msg)
        s, msg, _ = g.call('/inference.GRPCInferenceService/ModelStreamInfer', b'')
        check(s == UNIMPLEMENTED, 'a method not served: UNIMPLEMENTED (%s %s)' % (s, msg))
        s, msg, _ = g.call('/other.Service/Call', b'')
        check(s == UNIMPLEMENTED, 'another service: UNIMPLEMENTED (%s)' % s)

        # the repository: readable, but load and unload refused under --model-control none
        s, msg, data = g.call('RepositoryIndex', pb.RepositoryIndexRequest())
        r = pb.RepositoryIndexResponse()
        r.ParseFromString(data or b'')
        check(s == OK and sorted(m.name for m in r.models) == ['alltypes', 'batched', 'perceptron', 'slow', 'typed'] and
              all(m.state == 'READY' and m.version == '1' for m in r.models), 'RepositoryIndex: %s' % str(r).replace('\n', ' '))
        s, msg, _ = g.call('RepositoryModelUnload', pb.RepositoryModelUnloadRequest(model_name='perceptron'))
        check(s == PERMISSION_DENIED and '--model-control' in msg, 'unload under model control none: PERMISSION_DENIED (%s)' % msg)
        # the REST side is served as before by the same process
        check(ts.request(server.port, 'GET', '/v2/health/ready')[0] == 200, 'REST served beside gRPC')
    finally:
        stopped(server)


def test_model_control(pb):
    server, port = start('--threads', '1', '--model-control', 'explicit', '--no-access-log',
                         '--max-body', '4K', '--max-queue', '1')
    g = Grpc(port)
    try:
        # a message over --max-body is refused by gRPC itself
        big = infer_request(pb, 'perceptron', [('X', 'FP32', np.zeros((400, 3), np.float32))], True)
        s, msg, _ = g.call('ModelInfer', big)
        check(s == 8, 'a request message over --max-body: RESOURCE_EXHAUSTED (%s %s)' % (s, msg))
        # a full queue: UNAVAILABLE naming --max-queue, the rest served
        answers = g.call('ModelInfer', infer_request(pb, 'slow', [('x', 'FP32', np.array([1e-3], np.float32))],
                                                     True), calls=8)
        codes = sorted(a[0] for a in answers)
        check(OK in codes and UNAVAILABLE in codes and set(codes) <= {OK, UNAVAILABLE} and
              all('--max-queue' in a[1] for a in answers if a[0] == UNAVAILABLE),
              '8 calls at once with --max-queue 1: some OK, the rest UNAVAILABLE naming it (%s)' % codes)
        s, msg, _ = g.call('RepositoryModelUnload', pb.RepositoryModelUnloadRequest(model_name='perceptron'))
        check(s == OK, 'explicit: unload OK (%s %s)' % (s, msg))
        s, msg, data = g.call('ModelReady', pb.ModelReadyRequest(name='perceptron'))
        r = pb.ModelReadyResponse()
        r.ParseFromString(data or b'')
        check(s == OK and not r.ready, 'after unload: not ready')
        s, msg, _ = g.call('ModelInfer', infer_request(pb, 'perceptron', [('X', 'FP32', np.zeros((1, 3), np.float32))], True))
        check(s == NOT_FOUND and 'not loaded' in msg, 'inference after unload: NOT_FOUND (%s)' % msg)
        s, msg, _ = g.call('RepositoryModelLoad', pb.RepositoryModelLoadRequest(model_name='perceptron'))
        check(s == OK, 'explicit: load OK (%s %s)' % (s, msg))
        s, msg, _ = g.call('RepositoryModelLoad', pb.RepositoryModelLoadRequest(model_name='nosuch'))
        check(s == NOT_FOUND, 'load of an unknown model: NOT_FOUND (%s %s)' % (s, msg))
        s, msg, data = g.call('ModelReady', pb.ModelReadyRequest(name='perceptron', version='1'))
        r = pb.ModelReadyResponse()
        r.ParseFromString(data or b'')
        check(s == OK and r.ready, 'after load: ready')
    finally:
        stopped(server)


def test_tls(pb):
    openssl = shutil.which('openssl')
    if not openssl:
        print('gRPC TLS test skipped: no openssl command')
        return
    cert, key = os.path.join(WORK, 'cert.pem'), os.path.join(WORK, 'key.pem')
    cert2, key2 = os.path.join(WORK, 'cert2.pem'), os.path.join(WORK, 'key2.pem')
    for c, k, cn in ((cert, key, 'first'), (cert2, key2, 'second')):
        p = subprocess.run([openssl, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                            '-nodes', '-keyout', k, '-out', c, '-days', '2', '-subj', '/CN=' + cn,
                            '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
                           capture_output=True, text=True, timeout=60)
        if p.returncode:
            print('gRPC TLS test skipped: openssl: %s' % p.stderr[-300:])
            return
    live = os.path.join(WORK, 'live-cert.pem'), os.path.join(WORK, 'live-key.pem')
    shutil.copy(cert, live[0])
    shutil.copy(key, live[1])
    server, port = start('--threads', '1', '--tls-cert', live[0], '--tls-key', live[1])
    try:
        s, msg, data = Grpc(port, ca=cert).call('ServerLive', pb.ServerLiveRequest())
        check(s == OK, 'gRPC over TLS with the certificate trusted: OK (%s %s)' % (s, msg))
        s, msg, _ = Grpc(port).call('ServerLive', pb.ServerLiveRequest(), timeout=5)
        check(s != OK, 'plain gRPC on the TLS port: refused (%s)' % s)
        s, msg, _ = Grpc(port, ca=cert2).call('ServerLive', pb.ServerLiveRequest(), timeout=5)
        check(s == UNAVAILABLE, 'a client trusting another certificate: UNAVAILABLE (%s)' % s)
        shutil.copy(key2, live[1])
        shutil.copy(cert2, live[0])
        server.proc.send_signal(signal.SIGHUP)
        end = time.time() + 10
        while 're-read from' not in server.text() and time.time() < end:
            time.sleep(0.05)
        s, msg, _ = Grpc(port, ca=cert2).call('ServerLive', pb.ServerLiveRequest())
        check(s == OK, 'after SIGHUP, the renewed certificate serves gRPC (%s %s)' % (s, msg))
    finally:
        stopped(server)


def test_stalled(pb):
    """callers that open calls and never finish sending their message hold no
    thread of the server: others are served meanwhile, and each stalled call
    is ended at the request deadline (--request-timeout) with
    DEADLINE_EXCEEDED, counted in /metrics, and freed (the ASan build's
    LeakSanitizer checks the server's exit)"""
    server, port = start('--threads', '2', '--request-timeout', '4')
    addr = '127.0.0.1:%d' % port
    x = np.array([[1, 2, 3]], np.float32)
    want = ts.run_onnxc(os.path.join(WORK, 'repo', 'perceptron', '1', 'model.onnx'), {'X': x},
                        os.path.join(WORK, 'run_stall'))[0]
    request = infer_request(pb, 'perceptron', [('X', 'FP32', x)], raw=True).SerializeToString()
    req = os.path.join(WORK, 'stall_req.bin')
    with open(req, 'wb') as f:
        f.write(request)
    conns = []
    try:
        # more calls without their message than the server has threads of any
        # kind (no message on two connections, half of one on a third)
        conns = [Stalled(port, 40, request, 0), Stalled(port, 40, request, 0),
                 Stalled(port, 4, request, 0.5)]
        time.sleep(0.5)
        t = time.time()
        s, msg, data = Grpc(port).call('ModelInfer', request, timeout=10)
        took = time.time() - t
        # answered while the stalled calls were still open (none ended yet): a
        # server whose threads they held would answer only once they are ended
        early = not any(c.ended or c.gone for c in conns)
        good = s == OK and np.array_equal(outputs_of(pb, data)[1]['Out'][2], want)
        check(good and early, 'ModelInfer with 84 stalled calls open: answered in %.2f s, %s (%s %s)'
              % (took, 'before any of them ended' if early else 'only after some ended', s, msg))
        st, _, _ = ts.request(server.port, 'GET', '/v2/health/ready', timeout=5)
        check(st == 200, 'REST meanwhile: ready (%s)' % st)
        for c, what in zip(conns, ('no message', 'no message', 'half a message')):
            ended = sorted(c.wait(15).values())
            n = len(c.streams)
            check(len(ended) == n and 3.5 <= ended[0] and ended[-1] < 12,
                  'calls with %s: %d of %d ended by the server at the 4 s request deadline (%s s)'
                  % (what, len(ended), n, ' '.join('%.2f' % v for v in ended[:1] + ended[-1:])))
            # gRPC writes these trailers as HPACK literals: the code '4' after its
            # name, the message after grpc-message
            check(len(c.trailers) == n and all(b'grpc-status\x014' in t and b'--request-timeout' in t
                                               for t in c.trailers.values()),
                  'their trailers: grpc-status 4 (DEADLINE_EXCEEDED), a message naming --request-timeout')
            c.close()
        # the server frees each call when its cancelled receive comes back
        # from gRPC's queue, a moment after the client saw its status
        end = time.time() + 15
        while True:
            text = ts.request(server.port, 'GET', '/metrics')[2].decode()
            flight = re.search(r'^onnxc_http_requests_in_flight (\d+)$', text, re.M)
            if (flight and int(flight.group(1)) <= 1) or time.time() > end:
                break
            time.sleep(0.1)
        n = re.search(r'^onnxc_http_rejections_total\{reason="request_timeout"\} (\d+)$', text, re.M)
        check(n and int(n.group(1)) == 84, 'rejections{reason="request_timeout"} %s == 84'
              % (n.group(1) if n else None))
        check(flight and int(flight.group(1)) <= 1, 'in flight afterwards: %s (the /metrics request)'
              % (flight.group(1) if flight else None))
        # a caller that goes away in the middle of its message, and stalled
        # calls still open when the server stops: cut off, and it exits 0
        Stalled(port, 3, request, 0.5).close()
        conns = [Stalled(port, 3, request, 0), Stalled(port, 2, request, 0.5)]
        time.sleep(0.3)
    finally:
        stopped(server)
    for c in conns:
        check(len(c.wait(10)) == len(c.streams) or c.gone,
              'stalled calls at shutdown: ended, or their connection closed')
        c.close()


def main():
    make_repo()
    return ts.run_steps((test_service, test_model_control, test_tls, test_stalled), 'gRPC serve', load_pb())


if __name__ == '__main__':
    sys.exit(main())
