#!/usr/bin/python3
"""`onnxc serve` made safe to deploy, over real HTTP on loopback.

    test_serve_secure.py ONNXC WORKDIR

Bearer tokens (401, WWW-Authenticate, open probes, SIGHUP reload),
--metrics-auth, and the rejection counters of /metrics. Each part starts its
own server on a free port of 127.0.0.1 and is bounded in time. The helpers
(Server, request, model) are test_serve.py's.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serve as ts  # noqa: E402  (reads ONNXC and WORKDIR from the same argv)

from test_serve import check, jreq, request  # noqa: E402

WORK = ts.WORK
HEAD = '<ir_version: 8, opset_import: ["" : 17]>\n'


def make_repo():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    with open(os.path.join(ts.ROOT, 'examples', 'perceptron.onnxtxt')) as f:
        ts.model('perceptron', f.read())


def stopped(server):
    try:
        check(server.stop() == 0, 'server exits 0 on SIGTERM')
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def rejections(port, reason, headers=None):
    text = request(port, 'GET', '/metrics', headers=headers)[2].decode()
    m = re.search(r'^onnxc_http_rejections_total\{reason="%s"\} (\d+)$' % reason, text, re.M)
    return int(m.group(1)) if m else None


def raw_status(port, data, timeout=5):
    """sends bytes as they are; the status code of the answer, or None"""
    with socket.create_connection(('127.0.0.1', port), timeout=timeout) as c:
        c.sendall(data)
        got = b''
        try:
            while b'\r\n' not in got:
                chunk = c.recv(4096)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
    m = re.match(rb'HTTP/1\.[01] (\d+)', got)
    return int(m.group(1)) if m else None


INFER = {'inputs': [{'name': 'X', 'datatype': 'FP32', 'shape': [1, 3], 'data': [1, 2, 3]}]}


# ---------------------------------------------------------------- tokens


def write_tokens(path, text):
    # a new file renamed over the old, as a Kubernetes secret update does
    with open(path + '.new', 'w') as f:
        f.write(text)
    os.replace(path + '.new', path)


def test_auth():
    tokens = os.path.join(WORK, 'tokens')
    write_tokens(tokens, '# rotated 2026-11\n\n   tokA  \ntokB\r\n')
    server = ts.Server('--auth-token-file', tokens, '--model-control', 'explicit', '--threads', '1')
    port = server.port
    try:
        for path in ('/v2/health/live', '/v2/health/ready', '/v2/models/perceptron/ready',
                     '/v2/models/perceptron/versions/1/ready', '/metrics', '//v2//health/live'):
            check(request(port, 'GET', path)[0] == 200, 'open without a token: ' + path)
        for method, path, body in (('GET', '/v2', None), ('GET', '/v2/models/perceptron', None),
                                   ('POST', '/v2/models/perceptron/infer', INFER),
                                   ('POST', '/v2/repository/index', b''),
                                   ('POST', '/v2/repository/models/perceptron/unload', b''),
                                   ('GET', '/v2/models/perceptron/ready/x', None),
                                   ('GET', '/v2/health/ready2', None), ('GET', '/nope', None)):
            s, h, data = request(port, method, path, body)
            check(s == 401 and h.get('www-authenticate', '').startswith('Bearer') and
                  b'Authorization' in data and h.get('content-type') == 'application/json',
                  'no token: 401 with WWW-Authenticate on %s %s: %d %r %r' % (method, path, s, h, data))
        s, h, data = request(port, 'GET', '/v2/models/perceptron', headers={'Authorization': 'Bearer nope'})
        check(s == 401 and 'invalid_token' in h.get('www-authenticate', ''), 'a wrong token: 401 invalid_token')
        for value in ('Basic dG9rQQ==', 'Bearer', 'Bearer tokA tokB', 'Bearer tok', 'Bearer tokAA', 'tokA'):
            s = request(port, 'GET', '/v2', headers={'Authorization': value})[0]
            check(s == 401, 'Authorization %r: 401 (got %d)' % (value, s))
        for value in ('Bearer tokA', 'bearer tokB', 'Bearer   tokA  '):
            s = request(port, 'GET', '/v2/models/perceptron', headers={'Authorization': value})[0]
            check(s == 200, 'Authorization %r: 200 (got %d)' % (value, s))
        s, j = jreq(port, 'POST', '/v2/models/perceptron/infer', INFER, {'Authorization': 'Bearer tokB'})
        check(s == 200 and j['outputs'], 'infer with a token')
        # a large body without a token is turned away before it is read: the
        # answer comes with none of the declared body sent
        s = raw_status(port, b'POST /v2/models/perceptron/infer HTTP/1.1\r\nHost: x\r\n'
                             b'Content-Length: 4000000\r\n\r\n')
        check(s == 401, 'a declared large body without a token: 401 before the body (got %s)' % s)
        check((rejections(port, 'unauthorized') or 0) >= 10, 'rejections counted as unauthorized')

        # SIGHUP re-reads the file: tokA out, tokC in
        write_tokens(tokens, 'tokB\ntokC\n')
        server.proc.send_signal(signal.SIGHUP)
        end, ok = time.time() + 5, False
        while time.time() < end and not ok:
            ok = (request(port, 'GET', '/v2', headers={'Authorization': 'Bearer tokA'})[0] == 401 and
                  request(port, 'GET', '/v2', headers={'Authorization': 'Bearer tokC'})[0] == 200)
            time.sleep(0.05)
        check(ok, 'SIGHUP: the new tokens in force, the removed one refused')
        # a file that holds no token (an update caught half-way) keeps the old ones
        write_tokens(tokens, '# nothing yet\n')
        server.proc.send_signal(signal.SIGHUP)
        end = time.time() + 5
        while time.time() < end and 'previous tokens stay' not in server.text():
            time.sleep(0.05)
        check('previous tokens stay' in server.text(), 'SIGHUP with no token: says the old ones stay')
        check(request(port, 'GET', '/v2', headers={'Authorization': 'Bearer tokC'})[0] == 200,
              'SIGHUP with no token: the old tokens still work')
        check(server.proc.poll() is None, 'alive after SIGHUPs')
    finally:
        stopped(server)

    # --metrics-auth protects /metrics, the probes stay open
    write_tokens(tokens, 'tokM\n')
    server = ts.Server('--auth-token-file', tokens, '--metrics-auth', '--threads', '1')
    try:
        check(request(server.port, 'GET', '/metrics')[0] == 401, '--metrics-auth: /metrics needs a token')
        check(request(server.port, 'GET', '/metrics', headers={'Authorization': 'Bearer tokM'})[0] == 200,
              '--metrics-auth: /metrics with the token')
        check(request(server.port, 'GET', '/v2/health/ready')[0] == 200, '--metrics-auth: probes open')
    finally:
        stopped(server)

    # a missing or empty token file stops the start
    for text in (None, '\n# none\n'):
        path = os.path.join(WORK, 'missing' if text is None else 'empty')
        if text is not None:
            write_tokens(path, text)
        p = subprocess.run([ts.ONNXC, 'serve', '--model-repository', os.path.join(WORK, 'repo'),
                            '--port', '0', '--auth-token-file', path], capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 1 and '--auth-token-file' in p.stderr and path in p.stderr,
              'bad token file %s: exit 1 naming it (%d %r)' % (path, p.returncode, p.stderr))


def main():
    make_repo()
    for step in (test_auth,):
        t0 = time.time()
        step()
        print('%-16s %.1f s' % (step.__name__, time.time() - t0), flush=True)
    logs = ''.join(open(os.path.join(WORK, f)).read() for f in os.listdir(WORK) if f.endswith('.log'))
    for word in ('AddressSanitizer', 'LeakSanitizer', 'runtime error:', 'ThreadSanitizer'):
        check(word not in logs, 'no sanitizer report (%s)' % word)
    if ts.failures:
        print('%d of %d checks failed' % (len(ts.failures), ts.checks[0]))
        return 1
    print('all %d secure serve checks passed' % ts.checks[0])
    return 0


if __name__ == '__main__':
    sys.exit(main())
