#!/usr/bin/python3
"""REST against gRPC on one model: `onnxc serve` under load on 127.0.0.1.

    bench/serve_rest_grpc.py MODEL.onnx|MODEL.onnxtxt [--build DIR] [--seconds S]
        [--threads N] [--clients 1,8,64] [--repeat R] [--batch ROWS]
        [--onnxc BIN] [--client BIN]

Starts `onnxc serve --grpc-port 0` (BUILD/onnxc, or --onnxc) on MODEL (a
text model is converted first) in a repository of that one model,
with no access log and no per-client connection limit, makes one request of random
inputs from the model's metadata (dynamic dims: --batch for the first, 1 for
the others), and at each number of clients measures
  REST: wrk (Debian's; scripts/setup.sh installs it), that many connections,
        JSON body (the binary extension both ways when the inputs exceed 16384
        values);
  gRPC: BUILD/tests/grpc_client (or --client) --bench, that many calls in flight on one
        channel (one HTTP/2 connection, as a gRPC client library keeps),
        raw_input_contents;
then prints requests per second, p50 and p99 latency and errors per point.
With --repeat R each point runs R times and the median of each column is
printed, with the range of req/s: on a shared machine the load generator
competes with the server for the cores, so compare rows of one run.

Needs only Python's standard library. Not part of `make test`, except a smoke
run (1 client, 1 s: tests/serve.cmake's serve_load_smoke). Exit 77 when wrk
or grpc_client is missing (the smoke test is then skipped).
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# protocol datatype -> struct format of one element (little-endian raw bytes).
# No numpy: importing it takes seconds on a loaded machine, and the smoke
# test must stay short.
FORMATS = {'BOOL': '?', 'UINT8': 'B', 'UINT16': 'H', 'UINT32': 'I', 'UINT64': 'Q', 'INT8': 'b',
           'INT16': 'h', 'INT32': 'i', 'INT64': 'q', 'FP16': 'e', 'FP32': 'f', 'FP64': 'd'}


class Tensor:
    """random values of a datatype and shape, as a list and as raw bytes"""

    def __init__(self, rng, dt, shape):
        self.shape, n = shape, math.prod(shape)
        if dt == 'BOOL':
            self.values = [rng.random() < 0.5 for _ in range(n)]
        elif dt.startswith('FP'):
            self.values = [round(rng.gauss(0, 3), 3) for _ in range(n)]
        else:  # small integers fit every integer type
            self.values = [rng.randrange(0, 4) for _ in range(n)]
        self.raw = struct.pack('<%d%s' % (n, FORMATS[dt]), *self.values)

# ---------------------------------------------------------------- protobuf
# A ModelInferRequest (src/serve/grpc_service.proto) in the protobuf wire
# format, written here so that the script needs no protoc: field 1
# model_name, 5 inputs (InferInputTensor: 1 name, 2 datatype, 3 shape,
# packed), 7 raw_input_contents.


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def infer_request_pb(model, feeds):
    msg = field_bytes(1, model.encode())
    for name, dt, t in feeds:
        shape = b''.join(varint(d) for d in t.shape)
        msg += field_bytes(5, field_bytes(1, name.encode()) + field_bytes(2, dt.encode()) +
                           field_bytes(3, shape))
    for _, _, t in feeds:
        msg += field_bytes(7, t.raw)
    return msg


# ---------------------------------------------------------------- the server


def start_server(onnxc, repo, threads, work):
    log = open(os.path.join(work, 'server.log'), 'w+')
    proc = subprocess.Popen([onnxc, 'serve', '--model-repository', repo, '--host', '127.0.0.1',
                             '--port', '0', '--grpc-port', '0', '--threads', str(threads),
                             '--no-access-log', '--max-connections-per-client', '0'],
                            stdout=log, stderr=subprocess.STDOUT)
    end = time.time() + 120
    while time.time() < end and proc.poll() is None:
        text = open(log.name).read()
        port = re.search(r'listening on 127\.0\.0\.1:(\d+)', text)
        gport = re.search(r'GRPCInferenceService\) on 127\.0\.0\.1:(\d+)', text)
        if port and gport:
            return proc, int(port.group(1)), int(gport.group(1))
        time.sleep(0.05)
    proc.kill()
    sys.exit('the server did not start:\n' + open(log.name).read())


def get_json(port, path):
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path), timeout=30) as r:
        return json.loads(r.read())


def wait_idle(port):
    """requests left over from a point (the server still runs what it had
    queued) must not slow the next one"""
    end = time.time() + 120
    while time.time() < end:
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=10) as r:
            m = re.search(r'^onnxc_http_requests_in_flight (\d+)', r.read().decode(), re.M)
        if m and int(m.group(1)) <= 1:
            return
        time.sleep(0.2)


# ---------------------------------------------------------------- the loads

WRK_SCRIPT = os.path.join(ROOT, 'bench', 'serve_post.lua')


def ms(text):
    """wrk's latency ('812.00us', '1.20ms', '2.01s') in milliseconds"""
    m = re.match(r'([\d.]+)(us|ms|s|m)$', text)
    if not m:
        return float('nan')
    return float(m.group(1)) * {'us': 1e-3, 'ms': 1.0, 's': 1e3, 'm': 6e4}[m.group(2)]


def rest_point(url, clients, secs, work, hlen):
    args = ['wrk', '-t%d' % min(2, clients), '-c%d' % clients, '-d%ds' % secs, '--timeout', '10s',
            '--latency', '-s', WRK_SCRIPT, url, '--', os.path.join(work, 'rest.body')]
    if hlen:
        args.append(str(hlen))
    out = subprocess.run(args, capture_output=True, text=True, timeout=secs + 60).stdout
    rps = re.search(r'^Requests/sec:\s+([\d.]+)', out, re.M)
    p50 = re.search(r'^\s+50%\s+(\S+)', out, re.M)
    p99 = re.search(r'^\s+99%\s+(\S+)', out, re.M)
    errors = sum(int(n) for n in re.findall(r'Non-2xx or 3xx responses: (\d+)', out))
    errors += sum(int(n) for n in re.findall(r'(?:connect|read|write|timeout) (\d+)', out))
    if not rps:
        return None
    return float(rps.group(1)), ms(p50.group(1)) if p50 else float('nan'), \
        ms(p99.group(1)) if p99 else float('nan'), errors


def grpc_point(client, gport, clients, secs, work):
    out = subprocess.run([client, '127.0.0.1:%d' % gport, '/inference.GRPCInferenceService/ModelInfer',
                          os.path.join(work, 'grpc.body'), os.path.join(work, 'grpc.out'),
                          '--calls', str(clients), '--bench', str(secs)],
                         capture_output=True, text=True, timeout=secs + 60).stdout
    m = re.search(r'([\d.]+) calls/s, p50 ([\d.]+) ms, p99 ([\d.]+) ms, (\d+) failed', out)
    if not m:
        return None
    return float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('model')
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--seconds', type=int, default=5)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--clients', default='1,8,64')
    ap.add_argument('--repeat', type=int, default=1)
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--onnxc')
    ap.add_argument('--client')
    a = ap.parse_args()
    onnxc = a.onnxc or os.path.join(a.build, 'onnxc')
    client = a.client or os.path.join(a.build, 'tests', 'grpc_client')
    if not shutil.which('wrk'):
        print('wrk not found (scripts/setup.sh installs it): nothing measured')
        return 77
    if not os.access(client, os.X_OK):
        print('%s not found (built with libgrpc-dev and protoc): nothing measured' % client)
        return 77
    if not os.access(onnxc, os.X_OK):
        sys.exit('missing %s: build first' % onnxc)
    clients = [int(c) for c in a.clients.split(',')]
    work = tempfile.mkdtemp(prefix='onnxc-serve-load-')
    proc = None
    try:
        os.makedirs(os.path.join(work, 'repo', 'm', '1'))
        dest = os.path.join(work, 'repo', 'm', '1', 'model.onnx')
        if a.model.endswith('.onnxtxt'):
            subprocess.run([onnxc, 'convert', a.model, dest], check=True, timeout=300,
                           stdout=subprocess.DEVNULL)
        else:
            os.symlink(os.path.abspath(a.model), dest)
        proc, port, gport = start_server(onnxc, os.path.join(work, 'repo'), a.threads, work)
        meta = get_json(port, '/v2/models/m')
        rng = random.Random(1)
        feeds = []
        for t in meta['inputs']:
            if t['datatype'] not in FORMATS:
                sys.exit('input %s: datatype %s is not benchmarked here' % (t['name'], t['datatype']))
            shape = [d if d >= 0 else (a.batch if i == 0 else 1) for i, d in enumerate(t['shape'])]
            feeds.append((t['name'], t['datatype'], Tensor(rng, t['datatype'], shape)))
        with open(os.path.join(work, 'grpc.body'), 'wb') as f:
            f.write(infer_request_pb('m', feeds))
        hlen = None
        if sum(len(t.values) for _, _, t in feeds) <= 16384:
            body = json.dumps({'inputs': [{'name': n, 'datatype': dt, 'shape': t.shape, 'data': t.values}
                                          for n, dt, t in feeds]}).encode()
        else:
            # outputs in binary too, as gRPC's come raw
            head = json.dumps({'inputs': [{'name': n, 'datatype': dt, 'shape': t.shape,
                                           'parameters': {'binary_data_size': len(t.raw)}}
                                          for n, dt, t in feeds],
                               'parameters': {'binary_data_output': True}}).encode()
            hlen = len(head)
            body = head + b''.join(t.raw for _, _, t in feeds)
        with open(os.path.join(work, 'rest.body'), 'wb') as f:
            f.write(body)
        url = 'http://127.0.0.1:%d/v2/models/m/infer' % port
        print('onnxc serve load: %s, server --threads %d, %d cores, %d s per point, %d repeat(s), %s'
              % (os.path.basename(a.model), a.threads, os.cpu_count(), a.seconds, a.repeat,
                 time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())), flush=True)
        print('REST body: %s, %d bytes; gRPC message: %d bytes' % (
            'binary extension' if hlen else 'JSON', len(body), os.path.getsize(os.path.join(work, 'grpc.body'))))
        print('%-5s %7s %10s %17s %10s %10s %7s' % ('proto', 'clients', 'req/s', '(range)', 'p50 ms', 'p99 ms', 'errors'))
        # a short warm-up of each protocol, not measured (not in a smoke run)
        if a.seconds >= 3:
            rest_point(url, 1, 1, work, hlen)
            grpc_point(client, gport, 1, 1, work)
        failed = False
        for proto in ('REST', 'gRPC'):
            for c in clients:
                runs = []
                for _ in range(a.repeat):
                    wait_idle(port)
                    r = rest_point(url, c, a.seconds, work, hlen) if proto == 'REST' else \
                        grpc_point(client, gport, c, a.seconds, work)
                    if r:
                        runs.append(r)
                if not runs:
                    print('%-5s %7d   no result' % (proto, c))
                    failed = True
                    continue
                rps = [r[0] for r in runs]
                print('%-5s %7d %10.0f %17s %10.3f %10.3f %7d' % (
                    proto, c, statistics.median(rps), '%.0f..%.0f' % (min(rps), max(rps)),
                    statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs),
                    sum(r[3] for r in runs)), flush=True)
                failed |= any(r[3] for r in runs)
        return 1 if failed else 0
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
