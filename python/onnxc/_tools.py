"""Tooling over models, shaped like the onnx package's functions.

A model crosses as an onnxc.Model, as serialized bytes, or as an
onnx.ModelProto when the onnx package is importable. A function that returns
a model returns it in the kind it was given (ModelProto in, ModelProto out;
bytes in, bytes out; a Model or a path in, a Model out).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from . import _onnxc
from ._onnxc import Model

ModelLike = Union[Model, bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]


def _is_proto(obj: Any) -> bool:
    return hasattr(obj, "SerializeToString") and hasattr(obj, "graph")


def _base_dir(path: Any) -> str:
    return os.path.dirname(os.path.abspath(os.fsdecode(path)))


def load(
    path: Union[str, "os.PathLike[str]"],
    load_external_data: bool = True,
    verify_checksums: bool = True,
) -> Model:
    """Loads a model file: binary (.onnx) or ONNX text (.onnxtxt, .txt, or text
    content). The file is mapped, not read; external data are mapped too.

    load_external_data=False leaves tensors stored in external files
    unresolved (as onnx.load(..., load_external_data=False))."""
    return _onnxc.load(
        path,
        base_dir=_base_dir(path),
        load_external_data=load_external_data,
        verify_checksums=verify_checksums,
    )


def load_from_string(
    data: Union[bytes, bytearray, memoryview], base_dir: Optional[str] = None
) -> Model:
    """Decodes a binary model from bytes. base_dir resolves external data."""
    return _onnxc.load_bytes(data, base_dir=base_dir)


load_model_from_string = load_from_string


def as_model(model: ModelLike) -> Model:
    """An onnxc.Model from a Model, bytes, an onnx.ModelProto or a path."""
    if isinstance(model, Model):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _onnxc.load_bytes(model)
    if isinstance(model, (str, os.PathLike)):
        return load(model)
    if _is_proto(model):
        return _onnxc.load_bytes(model.SerializeToString())
    raise TypeError(
        f"expected an onnxc.Model, bytes, a path or an onnx.ModelProto, not {type(model).__name__}"
    )


def _like(original: ModelLike, result: Model) -> Any:
    """result in the kind of model the caller gave."""
    if isinstance(original, (bytes, bytearray, memoryview)):
        return result.encode()
    if _is_proto(original):
        return type(original).FromString(result.encode())
    return result


def to_onnx(model: ModelLike) -> Any:
    """The model as an onnx.ModelProto (needs the onnx package)."""
    import onnx  # only here: the rest of onnxc does not need it

    return onnx.ModelProto.FromString(as_model(model).encode())


def save(
    model: ModelLike,
    path: Union[str, "os.PathLike[str]"],
    external_data: Union[None, bool, str] = None,
    size_threshold: int = 1024,
    align: int = 0,
    all_inline: bool = False,
    *,
    save_as_external_data: bool = False,
    location: Optional[str] = None,
) -> None:
    """Writes a model: binary, or ONNX text when path ends in .onnxtxt/.onnxtext/.txt.

    external_data: a file name (relative to the model's folder) that receives
    every tensor of at least size_threshold bytes (each aligned to `align`
    bytes, default 4096); True names it after the model file (model.onnx.data).
    all_inline=True brings tensors stored externally back into the file.
    save_as_external_data/location are onnx.save_model's spelling of the same."""
    if save_as_external_data and external_data is None:
        external_data = location or True
    if external_data is True:
        external_data = os.path.basename(os.fsdecode(path)) + ".data"
    elif external_data is False:
        external_data = None
    as_model(model).save(
        path,
        external_data=external_data,
        size_threshold=size_threshold,
        align=align,
        all_inline=all_inline,
    )


save_model = save


def check_model(model: ModelLike, full_check: bool = False, strict: bool = False) -> None:
    """Checks a model against the ONNX rules (and, with full_check, strict shape
    inference). Raises onnxc.InvalidModel whose message lists every error, one
    per line, each with its path in the model."""
    as_model(model).check(full=full_check, strict=strict)


def infer_shapes(model: ModelLike, strict_mode: bool = False, check_type: bool = False) -> Any:
    """A copy of the model with value_info filled by shape inference (symbolic
    dims, data propagation, subgraphs, functions). strict_mode raises on
    inference errors instead of leaving those values untyped."""
    inferred, _warnings = as_model(model).infer_shapes(strict=strict_mode or check_type)
    return _like(model, inferred)


def convert_version(model: ModelLike, target_version: int) -> Any:
    """A copy of the model converted to import ai.onnx at opset target_version,
    one opset step at a time. Raises onnxc.Unsupported naming the node when a
    step cannot keep the model's meaning."""
    return _like(model, as_model(model).convert_opset(int(target_version)))


def to_text(model: ModelLike) -> str:
    """The model in the ONNX textual syntax (onnx.printer.to_text)."""
    return as_model(model).to_text()


def parse_model(text: Union[str, bytes], name: str = "<text>") -> Model:
    """A model from the ONNX textual syntax (onnx.parser.parse_model); use
    to_onnx() for an onnx.ModelProto."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return _onnxc.parse_text(text, name=name)
