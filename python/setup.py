"""Builds the onnxc Python package: the extension onnxc._onnxc over libonnxc.

libonnxc is linked statically into the extension, so the installed package
needs nothing of this tree. The library comes from:

- the CMake build folder named by the ONNXC_BUILD_DIR environment variable
  (libonnxc.a and onnxc.pc already built there: what `make python` and the
  ctest run use), or else
- a CMake build of the `onnxc` target of this source tree (the folder above
  this one) in setuptools' temporary folder: what
  `pip install --no-build-isolation ./python` does, offline.
"""

import os
import re
import shlex
import subprocess
import sys

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def project_version():
    """The version of project(onnxc VERSION x.y.z) in the top CMakeLists.txt."""
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"project\(onnxc\s+VERSION\s+([0-9.]+)", f.read())
        return m.group(1) if m else "0.0.0"
    except OSError:
        return "0.0.0"


def private_libs(build_dir):
    """The -l flags a static link of libonnxc needs (Libs.private of onnxc.pc):
    libm, pthreads and the optional libraries CMake found (PCRE2, libjpeg...)."""
    with open(os.path.join(build_dir, "onnxc.pc"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("Libs.private:"):
                flags = shlex.split(line.split(":", 1)[1])
                return [x[2:] for x in flags if x.startswith("-l")]
    return ["m", "pthread"]


class BuildExt(build_ext):
    """build_ext that first makes sure libonnxc.a exists, then links it in."""

    def run(self):
        build_dir = os.environ.get("ONNXC_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
        else:
            build_dir = os.path.join(os.path.abspath(self.build_temp), "libonnxc")
            self.build_library(build_dir)
        lib = os.path.join(build_dir, "libonnxc.a")
        if not os.path.exists(lib):
            sys.exit(f"onnxc: {lib} not found (build the `onnxc` target there first)")
        for ext in self.extensions:
            ext.extra_objects.append(lib)
            ext.depends.append(lib)  # relink when the library changes
            ext.libraries.extend(private_libs(build_dir))
        super().run()

    def build_library(self, build_dir):
        if not os.path.exists(os.path.join(ROOT, "include", "onnxc.h")):
            sys.exit(f"onnxc: no source tree at {ROOT}: build from a clone of onnxc")
        jobs = os.environ.get("ONNXC_JOBS") or str(os.cpu_count() or 2)
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"]
        build = ["cmake", "--build", build_dir, "--target", "onnxc", "-j", jobs]
        for cmd in (configure, build):
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)


onnxc_ext = Extension(
    "onnxc._onnxc",
    sources=["onnxc/_module.c", "onnxc/_session.c", "onnxc/_generate.c"],
    depends=["onnxc/_onnxc.h", os.path.join(ROOT, "include", "onnxc.h")],
    include_dirs=[os.path.join(ROOT, "include"), numpy.get_include()],
    # only PyInit__onnxc is exported
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wextra",
                        "-Wno-missing-field-initializers"],
    # the library's own onnxc_* symbols stay inside the extension
    extra_link_args=["-Wl,--exclude-libs,ALL"],
)

setup(
    name="onnxc",
    version=project_version(),
    description="ONNX in C: onnxruntime-style inference and onnx-style tooling on libonnxc",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    install_requires=["numpy"],
    packages=["onnxc"],
    package_data={"onnxc": ["py.typed", "*.pyi"]},
    ext_modules=[onnxc_ext],
    cmdclass={"build_ext": BuildExt},
    zip_safe=False,
)
