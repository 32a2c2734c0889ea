"""onnxc: ONNX in C, from Python.

Inference as onnxruntime's Python API::

    import numpy as np, onnxc
    sess = onnxc.InferenceSession("model.onnx")
    print(sess.get_inputs()[0].name, sess.get_inputs()[0].shape)
    y, = sess.run(None, {"X": np.ones((2, 3), np.float32)})

Generation with a decoder-only language model (ids in, ids out)::

    new_ids = onnxc.generate("model.onnx", [1, 2, 3], max_new_tokens=32)
    for t in onnxc.generate(sess, [1, 2, 3], stream=True): print(t)

Tooling as the onnx package's: load, save, check_model, infer_shapes,
convert_version, to_text, parse_model. Models cross as onnxc.Model, bytes, or
onnx.ModelProto.

Element types: numpy arrays of float32/64, float16, int8..int64,
uint8..uint64, bool, complex64/128, and object arrays of str for strings.
Types numpy lacks cross as bit patterns: bfloat16 in uint16; float8
(e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0) and float4e2m1 in uint8; uint4 and
uint2 one value per uint8; int4 and int2 one value per int8. An input
declared with such a type takes an array of that carrier dtype. Sequences
are lists, maps are dicts, optionals are None or their value.

Errors raise onnxc.Error subclasses (InvalidArgument, OutOfMemory,
FileError, ParseError, InvalidModel, Unsupported, RuntimeFailure, Cancelled)
with the library's message.

The C layer is onnxc._onnxc, over libonnxc's public API (onnxc.h); the onnx
backend is onnxc.backend.
"""

from ._onnxc import (
    Cancelled,
    Error,
    FileError,
    InvalidArgument,
    InvalidModel,
    Model,
    OutOfMemory,
    ParseError,
    RuntimeFailure,
    Unsupported,
    library_version,
)
from ._inference import (
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    ModelMetadata,
    NodeArg,
    PassInfo,
    RunOptions,
    SessionOptions,
    get_available_providers,
    get_device,
    passes,
)
from ._generation import Generation, generate
from ._tools import (
    as_model,
    check_model,
    convert_version,
    infer_shapes,
    load,
    load_from_string,
    load_model_from_string,
    parse_model,
    save,
    save_model,
    to_onnx,
    to_text,
)

__version__ = library_version

# onnx.checker's name for a failed check
ValidationError = InvalidModel

__all__ = [
    "Cancelled",
    "Error",
    "FileError",
    "Generation",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "InvalidArgument",
    "InvalidModel",
    "Model",
    "ModelMetadata",
    "NodeArg",
    "OutOfMemory",
    "ParseError",
    "PassInfo",
    "RunOptions",
    "RuntimeFailure",
    "SessionOptions",
    "Unsupported",
    "ValidationError",
    "as_model",
    "check_model",
    "convert_version",
    "get_available_providers",
    "generate",
    "get_device",
    "infer_shapes",
    "load",
    "load_from_string",
    "load_model_from_string",
    "parse_model",
    "passes",
    "save",
    "save_model",
    "to_onnx",
    "to_text",
]
