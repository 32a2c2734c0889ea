"""Reading ONNX test data (.pb files of TensorProto, SequenceProto, MapProto,
OptionalProto) into the values onnxc's Python package takes and returns.

onnx 1.12's numpy_helper predates the float8, 4-bit and 2-bit types and
turns bfloat16 into float32; here those become the package's bit patterns
(bfloat16 in uint16, float8/float4 in uint8, uint4/uint2 one per uint8,
int4/int2 one per int8, sign-extended). Everything else goes through
numpy_helper, the onnx package's own conversion."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

BFLOAT16 = 16
BYTE_TYPES = {17, 18, 19, 20, 24}  # float8 kinds: one byte each
SUBBYTE = {21: (4, False), 22: (4, True), 23: (4, False), 25: (2, False), 26: (2, True)}


def tensor_to_array(t: onnx.TensorProto) -> np.ndarray:
    dt = t.data_type
    if dt != BFLOAT16 and dt not in BYTE_TYPES and dt not in SUBBYTE:
        return numpy_helper.to_array(t)
    dims = tuple(t.dims)
    n = int(np.prod(dims, dtype=np.int64))
    if dt == BFLOAT16:
        if t.raw_data:
            flat = np.frombuffer(t.raw_data, dtype="<u2").astype(np.uint16)
        else:
            flat = np.asarray(t.int32_data, dtype=np.int64).astype(np.uint16)
        return flat[:n].reshape(dims)
    if t.raw_data:
        data = np.frombuffer(t.raw_data, dtype=np.uint8)
    else:
        data = (np.asarray(t.int32_data, dtype=np.int64) & 0xFF).astype(np.uint8)
    if dt in BYTE_TYPES:
        return data[:n].copy().reshape(dims)
    bits, signed = SUBBYTE[dt]
    per_byte = 8 // bits
    mask = (1 << bits) - 1
    # element k of a byte sits in bits [k*bits, (k+1)*bits): low first
    parts = [(data >> (bits * k)) & mask for k in range(per_byte)]
    flat = np.stack(parts, axis=-1).reshape(-1)[:n].astype(np.int16)
    if signed:
        half = 1 << (bits - 1)
        flat = ((flat ^ half) - half).astype(np.int8)
    else:
        flat = flat.astype(np.uint8)
    return flat.reshape(dims)


def sequence_to_list(s: onnx.SequenceProto) -> list:
    kinds = onnx.SequenceProto
    if s.elem_type == kinds.TENSOR:
        return [tensor_to_array(t) for t in s.tensor_values]
    if s.elem_type == kinds.SEQUENCE:
        return [sequence_to_list(x) for x in s.sequence_values]
    if s.elem_type == kinds.MAP:
        return [map_to_dict(x) for x in s.map_values]
    if s.elem_type == kinds.OPTIONAL:
        return [optional_to_value(x) for x in s.optional_values]
    return []


def map_to_dict(m: onnx.MapProto) -> dict:
    keys: list = list(m.string_keys) if m.key_type == onnx.TensorProto.STRING else list(m.keys)
    keys = [k.decode("utf-8") if isinstance(k, bytes) else k for k in keys]
    return dict(zip(keys, sequence_to_list(m.values)))


def optional_to_value(o: onnx.OptionalProto) -> Any:
    kinds = onnx.OptionalProto
    if o.elem_type == kinds.TENSOR:
        return tensor_to_array(o.tensor_value)
    if o.elem_type == kinds.SEQUENCE:
        return sequence_to_list(o.sequence_value)
    if o.elem_type == kinds.MAP:
        return map_to_dict(o.map_value)
    if o.elem_type == kinds.OPTIONAL:
        return optional_to_value(o.optional_value)
    return None


def read_value(path: str, declared: onnx.TypeProto) -> Any:
    """The value in file path, whose message is chosen by the declared type."""
    with open(path, "rb") as f:
        data = f.read()
    kind = declared.WhichOneof("value")
    if kind == "sequence_type":
        return sequence_to_list(onnx.SequenceProto.FromString(data))
    if kind == "map_type":
        return map_to_dict(onnx.MapProto.FromString(data))
    if kind == "optional_type":
        return optional_to_value(onnx.OptionalProto.FromString(data))
    return tensor_to_array(onnx.TensorProto.FromString(data))


def assert_similar(ref: Any, out: Any, rtol: float, atol: float) -> None:
    """onnxc test's comparison: exact kind, shape and element type; floats
    within rtol/atol with NaN equal to NaN; everything else exactly."""
    if ref is None:
        assert out is None, f"expected None, got {type(out).__name__}"
    elif isinstance(ref, dict):
        assert isinstance(out, dict), f"expected a dict, got {type(out).__name__}"
        assert sorted(ref) == sorted(out), f"map keys {sorted(out)} != {sorted(ref)}"
        for k in ref:  # the package gives map values as Python scalars
            np.testing.assert_allclose(np.asarray(out[k]), np.asarray(ref[k]), rtol, atol)
    elif isinstance(ref, list):
        assert isinstance(out, list), f"expected a list, got {type(out).__name__}"
        assert len(out) == len(ref), f"sequence of {len(out)} items, expected {len(ref)}"
        for r, o in zip(ref, out):
            assert_similar(r, o, rtol, atol)
    else:
        assert isinstance(out, np.ndarray), f"expected an array, got {type(out).__name__}"
        assert out.dtype == ref.dtype, f"dtype {out.dtype}, expected {ref.dtype}"
        assert out.shape == ref.shape, f"shape {out.shape}, expected {ref.shape}"
        if ref.dtype.kind in "fc":
            np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(out, ref)
