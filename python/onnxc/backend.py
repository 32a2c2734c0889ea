"""onnxc as an ONNX backend (onnx.backend.base), so that onnx's backend test
harness (onnx.backend.test.BackendTest) runs its node and model cases on
onnxc::

    import onnx.backend.test, onnxc.backend
    globals().update(onnx.backend.test.BackendTest(onnxc.backend, __name__).test_cases)

Needs the onnx package. Runs on the CPU only. Inputs and outputs follow the
package's conventions (numpy arrays, lists, dicts, None; bfloat16, float8,
float4 and 4-/2-bit integers as bit patterns, see onnxc's documentation).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
import onnx.helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from ._inference import InferenceSession


class OnnxcBackendRep(BackendRep):
    """A prepared model: run(inputs) takes a list (bound to the graph inputs in
    order, those with an initializer included, as onnx's test data are) or a
    dict by name, and returns a namedtuple of the outputs."""

    def __init__(self, session: InferenceSession, input_names: Sequence[str]) -> None:
        self.session = session
        self.input_names = list(input_names)
        self.output_names = [o.name for o in session.get_outputs()]

    def run(self, inputs: Any, **kwargs: Any) -> Tuple[Any, ...]:
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            if len(inputs) > len(self.input_names):
                raise ValueError(f"{len(inputs)} inputs for a model of {len(self.input_names)}")
            feeds = dict(zip(self.input_names, inputs))
        outputs = self.session.run(None, feeds)
        return namedtupledict("Outputs", self.output_names)(*outputs)  # type: ignore


def _elem_type(dtype: np.dtype) -> int:
    """TensorProto.DataType of a numpy dtype, in onnx 1.12 and later."""
    convert = getattr(onnx.helper, "np_dtype_to_tensor_dtype", None)
    if convert is not None:
        return int(convert(dtype))
    return int(onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)])


def _check_device(device: str) -> None:
    if Device(device).type != DeviceType.CPU:
        raise RuntimeError(f"onnxc runs on the CPU only, not on {device}")


class OnnxcBackend(Backend):
    """Backend.prepare/run_model/run_node over onnxc.InferenceSession. Keyword
    arguments of prepare (threads, optimization_level) go to the session."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> OnnxcBackendRep:
        _check_device(device)
        session = InferenceSession(model, **kwargs)
        if isinstance(model, onnx.ModelProto):
            names: List[str] = [i.name for i in model.graph.input]
        else:
            names = [i.name for i in session.get_inputs()]
        return OnnxcBackendRep(session, names)

    @classmethod
    def run_model(
        cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> Tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Optional[Sequence[Tuple[Any, Tuple[int, ...]]]] = None,
        **kwargs: Any,
    ) -> Tuple[Any, ...]:
        """Runs one node on numpy arrays: a one-node model typed from the
        inputs (given in the order of node.input, empty names skipped), at
        kwargs["opset_version"] or onnx's current opset."""
        _check_device(device)
        names = [n for n in node.input if n]
        if isinstance(inputs, dict):
            arrays = [inputs[n] for n in names]
        else:
            arrays = list(inputs)
        graph_inputs = []
        for name, value in zip(names, arrays):
            a = np.asarray(value)
            elem = _elem_type(a.dtype)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, elem, a.shape))
        graph_outputs = []
        for i, name in enumerate(n for n in node.output if n):
            if outputs_info and i < len(outputs_info):
                dtype, shape = outputs_info[i]
                elem = _elem_type(np.dtype(dtype))
                graph_outputs.append(onnx.helper.make_tensor_value_info(name, elem, shape))
            else:
                graph_outputs.append(onnx.helper.make_empty_tensor_value_info(name))
        graph = onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        opset = kwargs.pop("opset_version", None) or onnx.defs.onnx_opset_version()
        imports = [onnx.helper.make_opsetid("", opset)]
        if node.domain not in ("", "ai.onnx"):
            imports.append(onnx.helper.make_opsetid(node.domain, 1))
        model = onnx.helper.make_model(graph, opset_imports=imports)
        feeds: Dict[str, Any] = dict(zip(names, arrays))
        return cls.prepare(model, device, **kwargs).run(feeds)


prepare = OnnxcBackend.prepare
run_model = OnnxcBackend.run_model
run_node = OnnxcBackend.run_node
supports_device = OnnxcBackend.supports_device
is_compatible = OnnxcBackend.is_compatible
