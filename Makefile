# The two commands a new user needs:
#   make run   - set up, build (release), then describe, check and run the bundled perceptron
#                (examples/perceptron.onnxtxt, the ONNX introduction's example) on a 2x3 input
#   make test  - set up, build, and run every test (release, then ASan+UBSan with fuzzers)
# and to use onnxc as a library:
#   make install PREFIX=/opt/onnxc - build, then install libonnxc.so/.a, onnxc.h, the onnxc
#                tool, onnxc.pc and the CMake package under PREFIX (default /usr/local)
# and for the web (emscripten, js/):
#   make wasm    - libonnxc as WebAssembly (build-wasm: SIMD128, one thread; WASM_SIMD=OFF for
#                  engines without SIMD) into js/dist/, for the JavaScript package in js/
#   make wasm-threads - the same with pthreads (build-wasm-threads -> js/dist/threads/;
#                  the js package takes it for sessions of threads > 1)
# and from Python:
#   make python  - build, then a wheel of the Python package (python/) in build/dist,
#                  linked against build/libonnxc.a; install it with pip
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
PYTHON ?= /usr/bin/python3
# bash for pipefail in make test's lanes
SHELL := /bin/bash
# cmake --build and ctest without make's own flags: under make test's -j 2 they
# carry a jobserver that the Makefiles cmake generates (and the projects some
# tests build) would join or warn about; they get their -j from JOBS instead
NOJS := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL

.PHONY: run test setup build build-asan build-tsan install python clean wasm wasm-threads wasm-if-emcc \
        test-lane-release test-lane-sanitizers test-steps-release test-steps-sanitizers

run: build
	./build/onnxc info examples/perceptron.onnxtxt
	./build/onnxc check examples/perceptron.onnxtxt
	./build/onnxc run examples/perceptron.onnxtxt -i X=examples/perceptron_input.npy

setup:
	@bash scripts/setup.sh

# The builds' commands, shared by their targets and make test's lanes. The
# sanitizer builds keep line tables only, not full debug info: their reports
# still name function, file and line (inlined frames too), and the compiles
# take ~4% less CPU and the objects ~20% less space, which every link copies.
SAN_CFLAGS := -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG"
define build_release
@cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
@$(NOJS) cmake --build build -j $(JOBS)
endef
define build_asan
@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DONNXC_SANITIZE=ON -DONNXC_FUZZ=ON $(SAN_CFLAGS) $(CMAKE_FLAGS) >/dev/null
@$(NOJS) cmake --build build-asan -j $(JOBS)
endef
# ThreadSanitizer: only what the concurrency tests need (label `concurrency`)
define build_tsan
@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DONNXC_TSAN=ON $(SAN_CFLAGS) $(CMAKE_FLAGS) >/dev/null
@$(NOJS) cmake --build build-tsan -j $(JOBS) --target concurrency_tests
endef

build: setup
	$(build_release)

build-asan: setup
	$(build_asan)

build-tsan: setup
	$(build_tsan)

# make test: the Debian packages, then two lanes side by side (make -j 2),
# each running its steps in order with -j $(JOBS) inside:
#   release:    the node packages (network), the release build, the wasm
#               module, the release suite, its kernel tests again at the lower
#               CPU levels (ONNXC_ISA=avx2, =portable: tests/isa.cmake)
#   sanitizers: the ASan+UBSan build (with fuzzers), the TSan build, the
#               ASan+UBSan suite, the TSan suite (last, as before: the lane
#               runs longer, so its servers under TSan, ~10x slower, mostly
#               run once the release lane is done, far from their time limits)
# Run one after the other, each step left a core idle while it waited
# (downloads, cmake's configure, links, a suite's last long test, tests that
# sleep or poll); side by side the other lane's work fills those gaps. The
# two lanes share no files (build/ and js/dist/ vs build-asan/ and
# build-tsan/; tests write in their own build folder or a mkdtemp folder and
# listen on port 0). Each line says its lane; a failure in one lane lets the
# other finish, then make test fails.
test:
	@bash scripts/setup.sh --packages
	@$(MAKE) --no-print-directory -j 2 test-lane-release test-lane-sanitizers

test-lane-release:
	@set -o pipefail; $(MAKE) --no-print-directory test-steps-release 2>&1 | sed -u 's/^/[release] /'

test-lane-sanitizers:
	@set -o pipefail; $(MAKE) --no-print-directory test-steps-sanitizers 2>&1 | sed -u 's/^/[sanitizers] /'

test-steps-release:
	@bash scripts/setup.sh --node
	$(build_release)
	@$(MAKE) --no-print-directory wasm-if-emcc SETUP_DONE=1
	cd build && $(NOJS) ctest --output-on-failure -j $(JOBS) --timeout 1500 -LE asan-only
	cd build && ONNXC_ISA=avx2 $(NOJS) ctest --output-on-failure -j $(JOBS) --timeout 1500 -L isa-levels
	cd build && ONNXC_ISA=portable $(NOJS) ctest --output-on-failure -j $(JOBS) --timeout 1500 -L isa-levels

test-steps-sanitizers:
	$(build_asan)
	$(build_tsan)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(NOJS) ctest --output-on-failure -j $(JOBS) --timeout 2400 -LE release-only
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  $(NOJS) ctest --output-on-failure -j $(JOBS) --timeout 2400 -L concurrency

WASM_SIMD ?= ON
# (SETUP_DONE=1: make test's release lane, which ran the set-up already)
wasm: $(if $(SETUP_DONE),,setup)
	@command -v emcmake >/dev/null 2>&1 || { echo "make wasm: emscripten's emcmake not found (scripts/setup.sh installs it)" >&2; exit 1; }
	@emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release -DONNXC_WASM_SIMD=$(WASM_SIMD) \
	  -DONNXC_WASM_THREADS=OFF $(CMAKE_FLAGS) >/dev/null
	@NODE_PATH=/usr/share/nodejs $(NOJS) cmake --build build-wasm -j $(JOBS) --target onnxc_wasm
	@mkdir -p js/dist && cp build-wasm/libonnxc.mjs build-wasm/libonnxc.wasm js/dist/

wasm-threads: setup
	@command -v emcmake >/dev/null 2>&1 || { echo "make wasm-threads: emscripten's emcmake not found" >&2; exit 1; }
	@emcmake cmake -S . -B build-wasm-threads -DCMAKE_BUILD_TYPE=Release -DONNXC_WASM_SIMD=$(WASM_SIMD) \
	  -DONNXC_WASM_THREADS=ON $(CMAKE_FLAGS) >/dev/null
	@NODE_PATH=/usr/share/nodejs cmake --build build-wasm-threads -j $(JOBS) --target onnxc_wasm
	@mkdir -p js/dist/threads && cp build-wasm-threads/libonnxc.mjs build-wasm-threads/libonnxc.wasm \
	  build-wasm-threads/libonnxc.worker.js js/dist/threads/
	@# the worker file is CommonJS (require, __filename), but js/package.json says
	@# "type": "module": node would load it as an ES module and fail
	@echo '{ "type": "commonjs" }' > js/dist/threads/package.json

# make test builds the wasm module when emscripten is there (the wasm_js test
# then runs js/test/ in node); without it that test says it is skipped
wasm-if-emcc:
	@if command -v emcmake >/dev/null 2>&1; then $(MAKE) --no-print-directory wasm; \
	else echo "make test: emscripten not found: the WebAssembly tests (wasm_js) will be skipped"; fi

install: build
	cmake --install build --prefix "$(PREFIX)"

python: build
	ONNXC_BUILD_DIR=$(CURDIR)/build $(PYTHON) -m pip wheel --no-build-isolation --no-deps \
	  --no-index -w build/dist ./python
	@echo "install with: $(PYTHON) -m pip install build/dist/onnxc-*.whl (in a venv on Debian 12)"

clean:
	rm -rf build build-asan build-tsan build-wasm build-wasm-threads js/dist
