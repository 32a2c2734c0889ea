#!/usr/bin/python3
"""Checks the scale-out files of deploy/ against the server (they cannot run here).

    check_deploy.py ROOT [ONNXC]

Every YAML parses; the Dockerfile, the Deployment, the KServe ServingRuntime
and InferenceService name options that `onnxc serve --help` lists, ports that
agree (container port = --port = probes = Service target = EXPOSE), probe paths
that are the server's health endpoints, a grace period longer than the drain,
the token file and TLS files mounted from secrets, probes and scrapes over
HTTPS when the server has TLS (and no server TLS behind KServe's queue-proxy).
With ONNXC (a build with the server), the server is started with the
Deployment's arguments (host and port moved to 127.0.0.1 and a free port; the
token file and a self-signed certificate made here, by the openssl command)
and the probe paths and /metrics are fetched without a token: all must answer 200.
"""
import http.client
import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = sys.argv[1]
ONNXC = sys.argv[2] if len(sys.argv) > 2 else None
DEPLOY = os.path.join(ROOT, 'deploy')
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def load(rel):
    with open(os.path.join(DEPLOY, rel)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def server_options():
    """options of `onnxc serve --help`: from the binary when given, else from cmd_serve.c"""
    if ONNXC:
        text = subprocess.run([ONNXC, 'serve', '--help'], capture_output=True, text=True,
                              timeout=30).stdout
    else:
        with open(os.path.join(ROOT, 'src', 'serve', 'cmd_serve.c')) as f:
            text = f.read()
    return set(re.findall(r'(--[a-z][a-z-]+)', text))


OPTIONS = server_options()
check('--model-repository' in OPTIONS and '--port' in OPTIONS, 'help lists the options: %s' % OPTIONS)
HEALTH = {'/v2/health/live', '/v2/health/ready'}


def parse_args(args, where):
    """['--port', '8000', ...] -> {'--port': '8000'}; every option known"""
    out, i = {}, 0
    flags = {'--no-access-log', '--metrics-auth'}
    while i < len(args):
        a = str(args[i])
        check(a in OPTIONS, '%s: unknown option %r' % (where, a))
        if a in flags:
            out[a] = True
            i += 1
        else:
            check(i + 1 < len(args), '%s: %s has no value' % (where, a))
            out[a] = str(args[i + 1]) if i + 1 < len(args) else None
            i += 2
    check('--model-repository' in out, '%s: --model-repository given' % where)
    return out


def check_container(c, where, port_names):
    check(c.get('command') == ['onnxc', 'serve'], '%s: command is onnxc serve' % where)
    opts = parse_args(c.get('args', []), where)
    port = int(opts.get('--port', 8000))
    check(opts.get('--host') == '0.0.0.0', '%s: listens on all addresses' % where)
    ports = c.get('ports', [])
    check(any(p.get('containerPort') == port for p in ports), '%s: containerPort %d = --port' % (where, port))
    for p in ports:
        if p.get('name'):
            port_names[p['name']] = p['containerPort']
    scheme = 'HTTPS' if '--tls-cert' in opts else 'HTTP'
    check(('--tls-cert' in opts) == ('--tls-key' in opts), '%s: --tls-cert and --tls-key together' % where)
    for probe, path in (('livenessProbe', '/v2/health/live'), ('readinessProbe', '/v2/health/ready')):
        g = c.get(probe, {}).get('httpGet', {})
        check(g.get('path') == path, '%s: %s path %s' % (where, probe, g.get('path')))
        check(g.get('scheme', 'HTTP') == scheme, '%s: %s over %s' % (where, probe, scheme))
        p = g.get('port')
        check(port_names.get(p, p) == port, '%s: %s port %s is the server port' % (where, probe, p))
    return opts, port


def check_secret_files(opts, mounts, volumes, where):
    """the token file and TLS files sit in read-only mounts of secrets"""
    vols = {v['name']: v for v in volumes}
    for opt in ('--auth-token-file', '--tls-cert', '--tls-key'):
        if opt not in opts:
            continue
        path = opts[opt]
        m = [m for m in mounts if path.startswith(m['mountPath'].rstrip('/') + '/')]
        check(m and m[0].get('readOnly') and 'secret' in vols.get(m[0]['name'], {}),
              '%s: %s %s is in a read-only secret mount' % (where, opt, path))


# ---- Dockerfile
with open(os.path.join(DEPLOY, 'Dockerfile')) as f:
    docker = f.read()
check(re.search(r'^FROM debian:', docker, re.M), 'Dockerfile: Debian base')
check('libmicrohttpd-dev' in docker and 'libjansson-dev' in docker, 'Dockerfile: builds with the server')
check('libgrpc-dev' in docker and 'libgrpc29' in docker, 'Dockerfile: builds and runs with gRPC')
entry = json.loads(re.search(r'^ENTRYPOINT (.*)$', docker, re.M).group(1))
cmd = json.loads(re.search(r'^CMD (.*)$', docker, re.M).group(1))
exposed = [int(x) for x in re.search(r'^EXPOSE ([\d ]+)$', docker, re.M).group(1).split()]
expose = exposed[0]
check(entry == ['onnxc', 'serve'], 'Dockerfile: ENTRYPOINT onnxc serve')
dopts = parse_args(cmd, 'Dockerfile CMD')
check(int(dopts.get('--port', 0)) == expose, 'Dockerfile: EXPOSE = --port')
check(dopts.get('--host') == '0.0.0.0', 'Dockerfile: --host 0.0.0.0')
check('--grpc-port' not in dopts or int(dopts['--grpc-port']) in exposed, 'Dockerfile: EXPOSE the --grpc-port')

# ---- plain Kubernetes
docs = {d['kind']: d for d in load('k8s/onnxc-serve.yaml')}
check(set(docs) == {'Deployment', 'Service', 'HorizontalPodAutoscaler'}, 'k8s kinds: %s' % set(docs))
dep, svc, hpa = docs['Deployment'], docs['Service'], docs['HorizontalPodAutoscaler']
pod = dep['spec']['template']
names = {}
kopts, kport = check_container(pod['spec']['containers'][0], 'Deployment', names)
check(pod['metadata']['labels'] == dep['spec']['selector']['matchLabels'], 'Deployment selector')
check(svc['spec']['selector'].items() <= pod['metadata']['labels'].items(), 'Service selects the pods')
tp = svc['spec']['ports'][0]['targetPort']
check(names.get(tp, tp) == kport, 'Service targetPort is the server port')
if '--grpc-port' in kopts:
    gp = int(kopts['--grpc-port'])
    check(names.get('grpc') == gp, 'Deployment: a containerPort named grpc = --grpc-port')
    check(any(names.get(p['targetPort'], p['targetPort']) == gp for p in svc['spec']['ports']),
          'Service: a port to the gRPC port')
check(pod['spec'].get('terminationGracePeriodSeconds', 30) > int(kopts.get('--drain-timeout', 30)),
      'grace period longer than --drain-timeout')
mounts = pod['spec']['containers'][0].get('volumeMounts', [])
check(any(m['mountPath'] == kopts['--model-repository'] for m in mounts), 'the repository is mounted')
ann = pod['metadata'].get('annotations', {})
check(ann.get('prometheus.io/path') == '/metrics' and int(ann.get('prometheus.io/port', 0)) == kport,
      'Prometheus annotations')
check(ann.get('prometheus.io/scheme', 'http') == ('https' if '--tls-cert' in kopts else 'http'),
      'Prometheus scrapes over HTTPS when the server has TLS')
check('--metrics-auth' not in kopts, 'the scrape has no token: no --metrics-auth')
check_secret_files(kopts, mounts, pod['spec'].get('volumes', []), 'Deployment')
ref = hpa['spec']['scaleTargetRef']
check(ref['kind'] == 'Deployment' and ref['name'] == dep['metadata']['name'], 'HPA scales the Deployment')
check(hpa['spec']['minReplicas'] <= hpa['spec']['maxReplicas'], 'HPA replica range')
check('requests' in pod['spec']['containers'][0].get('resources', {}), 'CPU requests for the HPA')

# ---- KServe
rt = load('kserve/servingruntime.yaml')[0]
isvc = load('kserve/inferenceservice.yaml')[0]
check(rt['kind'] == 'ServingRuntime' and isvc['kind'] == 'InferenceService', 'KServe kinds')
check('v2' in rt['spec']['protocolVersions'], 'runtime speaks v2')
check(any(f['name'] == 'onnx' for f in rt['spec']['supportedModelFormats']), 'runtime serves onnx')
ropts, rport = check_container(rt['spec']['containers'][0], 'ServingRuntime', {})
check(ropts['--model-repository'] == '/mnt/models', 'KServe mounts models at /mnt/models')
check(rport == 8080, 'KServe routes HTTP to 8080')
check(rt['metadata']['annotations'].get('prometheus.kserve.io/path') == '/metrics', 'KServe metrics path')
m = isvc['spec']['predictor']['model']
check(m['runtime'] == rt['metadata']['name'] and m['modelFormat']['name'] == 'onnx' and
      m['protocolVersion'] == 'v2', 'InferenceService uses the runtime')
# KServe appends the model's args to the runtime's
iargs = [str(a) for a in m.get('args', [])]
iopts = parse_args(rt['spec']['containers'][0]['args'] + iargs, 'InferenceService')
check('--auth-token-file' in iopts, 'InferenceService: bearer tokens')
check_secret_files(iopts, m.get('volumeMounts', []), isvc['spec']['predictor'].get('volumes', []),
                   'InferenceService')
# Knative's queue-proxy and KServe's probes speak plain HTTP to the container
check('--tls-cert' not in iopts, 'KServe: TLS at the ingress, not in the server')

# ---- the Deployment's arguments on the real server
if ONNXC:
    with tempfile.TemporaryDirectory() as repo:
        args = [str(a) for a in pod['spec']['containers'][0]['args']]
        args[args.index('--model-repository') + 1] = repo
        args[args.index('--host') + 1] = '127.0.0.1'
        args[args.index('--port') + 1] = '0'
        if '--grpc-port' in args:
            k = args.index('--grpc-port')
            args[k + 1] = '0'
            help_text = subprocess.run([ONNXC, 'serve', '--help'], capture_output=True, text=True,
                                       timeout=30).stdout
            if 'this build has no gRPC' in help_text:
                print('note: this onnxc has no gRPC: the server runs without --grpc-port here')
                del args[k:k + 2]
        tls = None
        if '--auth-token-file' in args:
            args[args.index('--auth-token-file') + 1] = os.path.join(repo, 'tokens')
            with open(os.path.join(repo, 'tokens'), 'w') as f:
                f.write('# made by check_deploy.py\nsecret-token\n')
        if '--tls-cert' in args:
            cert, key = os.path.join(repo, 'tls.crt'), os.path.join(repo, 'tls.key')
            made = shutil.which('openssl') and subprocess.run(
                ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
                 '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1',
                 '-addext', 'subjectAltName=IP:127.0.0.1'], capture_output=True, timeout=60).returncode == 0
            k = args.index('--tls-cert')
            if made:
                args[k + 1] = cert
                args[args.index('--tls-key') + 1] = key
                tls = ssl.create_default_context(cafile=cert)
            else:
                print('note: no openssl to make a certificate: the server runs without TLS here')
                del args[args.index('--tls-key'):args.index('--tls-key') + 2]
                del args[k:k + 2]
        log = open(os.path.join(repo, '..', os.path.basename(repo) + '.log'), 'w+')
        p = subprocess.Popen([ONNXC, 'serve'] + args, stdout=log, stderr=subprocess.STDOUT)
        port, end = None, time.time() + 30
        while time.time() < end and p.poll() is None and not port:
            log.seek(0)
            mm = re.search(r'listening on 127\.0\.0\.1:(\d+)', log.read())
            port = int(mm.group(1)) if mm else None
            time.sleep(0.05)
        check(port, 'the server starts with the Deployment arguments: %s' % shlex.join(args))
        for path in sorted(HEALTH | {'/metrics'}):
            if not port:
                break
            if tls:
                c = http.client.HTTPSConnection('127.0.0.1', port, timeout=10, context=tls)
            else:
                c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
            c.request('GET', path)
            check(c.getresponse().status == 200, 'GET %s answers 200' % path)
            c.close()
        p.terminate()
        check(p.wait(30) == 0, 'exit 0 on SIGTERM')
        log.close()
        os.remove(log.name)

if failures:
    print('%d deploy check(s) failed' % len(failures))
    sys.exit(1)
print('deploy files agree with the server')
