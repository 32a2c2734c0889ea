#!/usr/bin/python3
"""`onnxc serve` made safe to deploy, over real HTTP on loopback.

    test_serve_secure.py ONNXC WORKDIR

Bearer tokens (401, WWW-Authenticate, open probes, SIGHUP reload),
--metrics-auth, the limits (431, 413, the connection limits, 503 with
Retry-After when the queue is full, a slow-loris client that must not keep a
normal one waiting), the rejection counters of /metrics, and TLS with a
self-signed certificate made here by the openssl command (skipped, saying so,
without it). Each part starts its
own server on a free port of 127.0.0.1 and is bounded in time. The helpers
(Server, request, model) are test_serve.py's.
"""
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
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
    # a run long enough (16 products of 512 x 512 matrices) for requests to queue behind it
    matmul_chain('slow', 16)


def matmul_chain(name, n):
    chain = ''.join('m%d = MatMul(m%d, a)\n' % (i + 1, i) for i in range(n))
    ts.model(name, HEAD + 'G (float[1] x) => (float[1, 1] y) <int64[2] s = {512, 512}> {\n'
             'm0 = Expand(x, s)\na = Expand(x, s)\n' + chain + 'y = ReduceSum(m%d)\n}\n' % n)


SLOW_RUN = [0.1]  # seconds the 16 products take here, measured by test_queue_full


stopped = ts.stopped


def rejections(port, reason, headers=None):
    # under a connection limit the previous request's connection may still be
    # closing on the server (slow under sanitizers or a loaded machine): a new
    # one is refused until then, by a hang-up or by a 503 naming the limit
    end = time.time() + 10
    while True:
        try:
            s, _, data = request(port, 'GET', '/metrics', headers=headers)
            if s != 503 or time.time() > end:
                text = data.decode()
                break
        except (OSError, ts.http.client.HTTPException):
            if time.time() > end:
                raise
        time.sleep(0.1)
    m = re.search(r'^onnxc_http_rejections_total\{reason="%s"\} (\d+)$' % reason, text, re.M)
    return int(m.group(1)) if m else None


def raw_answer(port, data, timeout=5, whole=False):
    """sends bytes as they are; what comes back: its first line, or all until
    the server closes (whole)"""
    with socket.create_connection(('127.0.0.1', port), timeout=timeout) as c:
        c.sendall(data)
        got = b''
        try:
            while whole or b'\r\n' not in got:
                chunk = c.recv(4096)
                if not chunk:
                    break
                got += chunk
        except OSError:
            pass
    return got


def raw_status(port, data, timeout=5):
    """sends bytes as they are; the status code of the answer, or None"""
    got = raw_answer(port, data, timeout)
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


# ---------------------------------------------------------------- limits


def test_sizes_and_connections():
    server = ts.Server('--threads', '1', '--max-header', '4K', '--max-body', '1K',
                       '--max-connections', '3', '--max-connections-per-client', '0')
    port = server.port
    try:
        s, h, data = request(port, 'GET', '/v2/health/live', headers={'X-Big': 'a' * 6000})
        check(s == 431 and b'--max-header' in data and h.get('content-type') == 'application/json',
              'headers over --max-header: 431 naming it (%d %r)' % (s, data[:200]))
        s, h, data = request(port, 'GET', '/v2/health/live', headers={'X-A': 'a' * 1000, 'X-B': 'b' * 3500})
        check(s == 431, 'several headers together over --max-header: 431 (got %d)' % s)
        check(request(port, 'GET', '/v2/health/live', headers={'X-A': 'a' * 3000})[0] == 200,
              'headers within --max-header: 200')
        # far over: libmicrohttpd answers (431) or hangs up itself; the server lives on
        try:
            s = raw_status(port, b'GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Huge: ' +
                           b'h' * 300000 + b'\r\n\r\n')
        except OSError:
            s = None
        check(s in (431, None), 'headers far over the limit: 431 or closed (got %s)' % s)
        s, h, data = request(port, 'POST', '/v2/models/perceptron/infer', b'x' * 2048)
        check(s == 413 and b'limit' in data, 'body over --max-body: 413 (got %d)' % s)
        # three kept-alive connections take every place (the ones of the requests
        # above may take a moment to close: until then a new one is refused)
        idle, end = [], time.time() + 5
        while len(idle) < 3 and time.time() < end:
            c = ts.http.client.HTTPConnection('127.0.0.1', port, timeout=5)
            try:
                c.request('GET', '/v2/health/live')
                r = c.getresponse()
                r.read()
                idle.append(c)
            except (OSError, ts.http.client.HTTPException):
                c.close()
                time.sleep(0.1)
        check(len(idle) == 3, 'three connections open')
        # a fourth is told so (503, Retry-After), then closed
        try:
            s, h, data = request(port, 'GET', '/v2/health/live', timeout=5)
        except (OSError, ts.http.client.HTTPException) as e:
            s, h, data = None, {}, str(e).encode()
        check(s == 503 and h.get('retry-after') == '1' and b'--max-connections' in data and
              h.get('connection') == 'close',
              'a connection over --max-connections: 503, Retry-After, naming the option (%s %r)' % (s, data[:200]))
        for c in idle:
            c.close()
        end, s = time.time() + 5, None
        while time.time() < end and s != 200:
            try:
                s = request(port, 'GET', '/v2/health/live', timeout=5)[0]
            except (OSError, ts.http.client.HTTPException):
                time.sleep(0.1)
        check(s == 200, 'served again once connections closed')
        for reason, least in (('header_size', 2), ('body_size', 1), ('connections', 1)):
            n = rejections(port, reason)
            check((n or 0) >= least, 'rejections{reason="%s"} %s >= %d' % (reason, n, least))
    finally:
        stopped(server)


def test_queue_full():
    server = ts.Server('--threads', '1', '--max-queue', '1')
    port = server.port
    body = {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [1], 'data': [0.001]}]}
    try:
        results = []

        def client():
            try:
                results.append(request(port, 'POST', '/v2/models/slow/infer', body))
            except (OSError, ts.http.client.HTTPException) as e:
                results.append((str(e), {}, b''))
        clients = [threading.Thread(target=client) for _ in range(8)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(60)
        codes = sorted(r[0] for r in results)
        full = [r for r in results if r[0] == 503]
        check(len(results) == 8 and set(codes) <= {200, 503} and 200 in codes and full,
              '8 at once, --max-queue 1: some 200, the rest 503 (%s)' % codes)
        check(all(r[1].get('retry-after') == '1' and b'--max-queue' in r[2] for r in full),
              '503 with Retry-After and a message naming --max-queue')
        t0 = time.time()
        check(request(port, 'POST', '/v2/models/slow/infer', body)[0] == 200, 'served again after the burst')
        SLOW_RUN[0] = time.time() - t0
        check((rejections(port, 'queue_full') or 0) == len(full), 'rejections{reason="queue_full"}')
    finally:
        stopped(server)


def test_slow_loris():
    """clients sending a byte a second on many connections (from 127.0.0.2, another
    address of the loopback) must not keep a normal client (127.0.0.1) waiting"""
    server = ts.Server('--threads', '1', '--max-connections-per-client', '8', '--request-timeout', '2',
                       '--idle-timeout', '5')
    port = server.port
    slow, closed = [], []
    try:
        for _ in range(24):
            c = socket.socket()
            c.settimeout(2)
            try:
                c.bind(('127.0.0.2', 0))
                c.connect(('127.0.0.1', port))
            except OSError as e:
                print('slow-loris skipped: cannot connect from 127.0.0.2 (%s)' % e)
                c.close()
                for c in slow:
                    c.close()
                return
            slow.append(c)
        stop = threading.Event()
        line = b'GET /v2/models/perceptron HTTP/1.1\r\nHost: x\r\nX-Pad: ' + b'p' * 100

        def loris():
            i = 0
            while not stop.is_set() and i < len(line):
                for c in slow:
                    if c in closed:
                        continue
                    try:
                        c.sendall(line[i:i + 1])
                    except OSError:
                        closed.append(c)
                i += 1
                stop.wait(1.0)
        lt = threading.Thread(target=loris)
        lt.start()
        worst, served, t_end = 0.0, 0, time.time() + 5
        while time.time() < t_end:
            t0 = time.time()
            try:
                s = request(port, 'GET', '/v2/models/perceptron', timeout=5)[0]
            except (OSError, ts.http.client.HTTPException):
                s = None
            worst = max(worst, time.time() - t0)
            served += s == 200
            check(s == 200, 'a normal client during the slow-loris: 200 (got %s)' % s)
            time.sleep(0.2)
        check(worst < 1.0, 'a normal client served within a second during the slow-loris (worst %.2f s)' % worst)
        # by now (5 s > --request-timeout 2) every slow connection was closed by the server
        for c in slow:
            if c in closed:
                continue
            try:
                c.setblocking(False)
                got = c.recv(4096)
                if got == b'' or got:
                    closed.append(c)
            except BlockingIOError:
                pass
            except OSError:
                closed.append(c)
        stop.set()
        lt.join(5)
        check(len(set(closed)) == len(slow), 'every slow connection closed by the server: %d of %d' %
              (len(set(closed)), len(slow)))
        # a request not whole by --request-timeout: answered 408, then closed
        t0 = time.time()
        got = raw_answer(port, b'GET /v2/health/live HTTP/1.1\r\nHost: x\r\n', timeout=6, whole=True)
        check(got.startswith(b'HTTP/1.1 408 ') and b'--request-timeout' in got and 1.5 < time.time() - t0 < 4,
              'a request not whole after --request-timeout 2: 408 naming it, in %.1f s (%r)' %
              (time.time() - t0, got[:120]))
        n_client, n_time = rejections(port, 'client_connections'), rejections(port, 'request_timeout')
        check((n_client or 0) >= 16, 'rejections{reason="client_connections"} %s >= 16' % n_client)
        check((n_time or 0) >= 9, 'rejections{reason="request_timeout"} %s >= 8' % n_time)
        print('slow-loris: %d normal requests, worst %.3f s' % (served, worst))
    finally:
        for c in slow:
            c.close()
        stopped(server)


def test_slow_run_outlives_idle_timeout():
    """a request served for longer than --idle-timeout still gets its answer"""
    # a chain of products that takes about 3 s on this machine
    n = max(16, min(4000, int(16 * 3 / max(SLOW_RUN[0], 0.001))))
    matmul_chain('slower', n)
    server = ts.Server('--threads', '1', '--idle-timeout', '1')
    try:
        body = {'inputs': [{'name': 'x', 'datatype': 'FP32', 'shape': [1], 'data': [0.001]}]}
        conn = ts.http.client.HTTPConnection('127.0.0.1', server.port, timeout=30)
        codes = []
        t0 = time.time()
        conn.request('POST', '/v2/models/slower/infer', body=ts.json.dumps(body))
        r = conn.getresponse()
        r.read()
        codes.append(r.status)
        took = time.time() - t0
        conn.request('GET', '/v2/health/live')  # the same keep-alive connection goes on
        r = conn.getresponse()
        r.read()
        codes.append(r.status)
        conn.close()
        check(codes == [200, 200], 'a run of %.1f s with --idle-timeout 1: answered (%s)' % (took, codes))
        if took < 1.2:  # timing on a shared machine: then the case was not shown, not failed
            print('note: the run took %.1f s, not longer than the idle timeout' % took)
        c = socket.create_connection(('127.0.0.1', server.port), timeout=5)
        t0 = time.time()
        try:
            c.settimeout(5)
            got = c.recv(10)
        except OSError:
            got = b''  # a reset is a close too
        finally:
            c.close()
        check(got == b'' and time.time() - t0 < 4, 'an idle connection is closed after --idle-timeout')
    finally:
        stopped(server)


# ---------------------------------------------------------------- TLS


def test_tls():
    openssl = shutil.which('openssl')
    if not openssl:
        print('TLS test skipped: no openssl command to make a self-signed certificate')
        return
    cert, key = os.path.join(WORK, 'cert.pem'), os.path.join(WORK, 'key.pem')
    p = subprocess.run([openssl, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                        '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1',
                        '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        print('TLS test skipped: openssl could not make a certificate: %s' % p.stderr[-300:])
        return
    tokens = os.path.join(WORK, 'tls-tokens')
    write_tokens(tokens, 'tokT\n')
    server = ts.Server('--threads', '1', '--tls-cert', cert, '--tls-key', key, '--auth-token-file', tokens)
    port = server.port
    try:
        check('TLS 1.2+' in server.text(), 'the start line says TLS')
        ctx = ssl.create_default_context(cafile=cert)

        def https(method, path, body=None, headers=None, context=ctx):
            c = ts.http.client.HTTPSConnection('127.0.0.1', port, timeout=10, context=context)
            try:
                c.connect()
                version = c.sock.version()
                c.request(method, path, body=ts.json.dumps(body) if isinstance(body, dict) else body,
                          headers=headers or {})
                r = c.getresponse()
                return r.status, r.read(), version
            finally:
                c.close()
        s, data, version = https('GET', '/v2/health/ready')
        check(s == 200 and version in ('TLSv1.2', 'TLSv1.3'), 'HTTPS probe: %d over %s' % (s, version))
        s, data, _ = https('POST', '/v2/models/perceptron/infer', INFER, {'Authorization': 'Bearer tokT'})
        check(s == 200 and b'outputs' in data, 'HTTPS inference with a token: %d' % s)
        check(https('GET', '/v2/models/perceptron')[0] == 401, 'HTTPS without a token: 401')
        # TLS 1.2 alone still works; 1.1 and older are refused
        ctx12 = ssl.create_default_context(cafile=cert)
        ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
        s, _, version = https('GET', '/v2/health/live', context=ctx12)
        check(s == 200 and version == 'TLSv1.2', 'a TLS 1.2 client is served (%s)' % version)
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(cert)
        try:
            old.minimum_version = ssl.TLSVersion.TLSv1
            old.maximum_version = ssl.TLSVersion.TLSv1_1
            old.set_ciphers('ALL:@SECLEVEL=0')
            https('GET', '/v2/health/live', context=old)
            check(False, 'a TLS 1.1 client is refused')
        except (ssl.SSLError, OSError, ValueError):
            pass
        # the same from the openssl command, whose TLS 1.1 surely is offered (python's
        # may refuse on its own): the server ends the handshake
        for flag, want in (('-tls1_1', False), ('-tls1_2', True)):
            out = subprocess.run([openssl, 's_client', '-connect', '127.0.0.1:%d' % port, flag,
                                  '-cipher', 'DEFAULT@SECLEVEL=0'], input='', capture_output=True,
                                 text=True, timeout=20).stdout
            got = 'New, TLSv1.%s' % flag[-1] in out
            check(got == want, 'openssl s_client %s: handshake %s' % (flag, 'done' if want else 'refused'))
        # a client that does not trust the certificate fails its handshake
        try:
            https('GET', '/v2/health/live', context=ssl.create_default_context())
            check(False, 'an untrusted certificate fails verification')
        except ssl.SSLCertVerificationError:
            pass
        # plain HTTP on the TLS port gets no HTTP answer
        check(raw_status(port, b'GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n') is None,
              'plain HTTP on the TLS port: no HTTP answer')
        check(https('GET', '/v2/health/live')[0] == 200, 'HTTPS still served after the bad clients')
        # SIGHUP re-reads the certificate and key: a renewed pair (a new key, another
        # name) serves the next handshakes; a broken one leaves the previous pair in force
        cert2, key2 = os.path.join(WORK, 'cert2.pem'), os.path.join(WORK, 'key2.pem')
        p = subprocess.run([openssl, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                            '-nodes', '-keyout', key2, '-out', cert2, '-days', '2', '-subj', '/CN=renewed',
                            '-addext', 'subjectAltName=IP:127.0.0.1'], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, 'a second certificate made')
        old_cert = open(cert).read()
        shutil.copy(key2, key)  # the key first: until the certificate follows, the pair does not match
        server.proc.send_signal(signal.SIGHUP)
        end = time.time() + 10
        while 'previous certificate stays' not in server.text() and time.time() < end:
            time.sleep(0.05)
        check('does not go with the certificate' in server.text(), 'SIGHUP with a key of another '
              'certificate: says so, the previous pair stays')
        check(https('GET', '/v2/health/live')[0] == 200, 'HTTPS with the previous certificate after the bad SIGHUP')
        shutil.copy(cert2, cert)
        server.proc.send_signal(signal.SIGHUP)
        end = time.time() + 10
        while 're-read from' not in server.text() and time.time() < end:
            time.sleep(0.05)
        ctx2 = ssl.create_default_context(cafile=cert2)
        s, _, _ = https('GET', '/v2/health/live', context=ctx2)
        check(s == 200, 'SIGHUP: the renewed certificate serves new connections')
        with open(os.path.join(WORK, 'old-cert.pem'), 'w') as f:
            f.write(old_cert)
        try:
            https('GET', '/v2/health/live', context=ssl.create_default_context(cafile=os.path.join(WORK, 'old-cert.pem')))
            check(False, 'after SIGHUP the old certificate is no longer served')
        except ssl.SSLCertVerificationError:
            pass
        check(server.proc.poll() is None, 'alive after the TLS SIGHUPs')
    finally:
        stopped(server)
    # a key that does not go with the certificate, or a missing half, stops the start
    with open(os.path.join(WORK, 'bad.pem'), 'w') as f:
        f.write('-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n')
    for args, rc, words in (([cert, os.path.join(WORK, 'bad.pem')], 1, ['--tls-key']),
                            ([cert, os.path.join(WORK, 'none.pem')], 1, ['--tls-key', 'none.pem'])):
        p = subprocess.run([ts.ONNXC, 'serve', '--model-repository', os.path.join(WORK, 'repo'), '--port', '0',
                            '--tls-cert', args[0], '--tls-key', args[1]], capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == rc and all(w in p.stderr for w in words),
              'bad TLS files: exit %d naming %s (%d %r)' % (rc, words, p.returncode, p.stderr))
    p = subprocess.run([ts.ONNXC, 'serve', '--model-repository', os.path.join(WORK, 'repo'), '--tls-cert', cert],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and '--tls-key' in p.stderr, '--tls-cert alone: exit 2 naming --tls-key')


def main():
    make_repo()
    return ts.run_steps((test_auth, test_sizes_and_connections, test_queue_full, test_slow_loris,
                         test_slow_run_outlives_idle_timeout, test_tls), 'secure serve')


if __name__ == '__main__':
    sys.exit(main())
