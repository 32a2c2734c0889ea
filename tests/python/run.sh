#!/bin/sh
# The Python package (python/): builds the extension with setup.py against
# this build's libonnxc.a into BUILD/python, then runs its pytest suite
# (inference, tooling, onnx's backend harness) from there.
# usage: run.sh PYTHON SOURCE_DIR BUILD_DIR SHARED_TESTDATA
# Exit 77 (skipped) only when Python's headers, setuptools, numpy or pytest
# are missing.
set -u
py=$1 src=$2 build=$3 testdata=$4
if ! "$py" - <<'PYEOF'
import os, sys, sysconfig
missing = []
for mod in ("numpy", "setuptools", "pytest"):
    try:
        __import__(mod)
    except ImportError:
        missing.append(mod)
if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
    missing.append("Python.h (python3-dev)")
if missing:
    print("skipped: missing " + ", ".join(missing))
    sys.exit(1)
PYEOF
then
  exit 77
fi
cd "$src/python" || exit 1
ONNXC_BUILD_DIR=$build "$py" setup.py -q build --build-lib "$build/python" \
  --build-temp "$build/python-temp" || exit 1
cd "$src/python/tests" || exit 1
PYTHONPATH=$build/python PYTHONDONTWRITEBYTECODE=1 ONNXC_TESTDATA=$testdata \
  exec "$py" -m pytest -q -p no:cacheprovider -rfE .
