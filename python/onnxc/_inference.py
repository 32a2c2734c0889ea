"""Inference shaped like onnxruntime's Python API: code written for
onnxruntime.InferenceSession switches by changing the import."""

from __future__ import annotations

import enum
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

from . import _onnxc
from ._onnxc import Model
from ._tools import ModelLike, as_model


class NodeArg:
    """A model input or output: name, type ("tensor(float)",
    "seq(tensor(int64))", "map(string,tensor(float))", "optional(...)") and
    shape (a list with an int per fixed dim, a str per symbolic dim, None per
    unknown dim; None when the rank is unknown; [] for non-tensors)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name: str, type: str, shape: Optional[List[Union[int, str, None]]]) -> None:
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """What get_modelmeta() returns (onnxruntime's ModelMetadata)."""

    def __init__(self, info: Dict[str, Any]) -> None:
        self.producer_name: str = info["producer_name"]
        self.graph_name: str = info["graph_name"]
        self.domain: str = info["domain"]
        self.description: str = info["doc_string"]
        self.graph_description: str = ""
        self.version: int = info["model_version"]
        self.custom_metadata_map: Dict[str, str] = dict(info["metadata_props"])

    def __repr__(self) -> str:
        return (
            f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, "
            f"domain={self.domain!r}, version={self.version})"
        )


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels; onnxc has one level of optimisation (constant
    folding, weight packing, fusions): every level above 0 selects it."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes: ORT_PARALLEL runs nodes that do not
    depend on each other side by side (InferenceSession's parallel_branches)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """The subset of onnxruntime.SessionOptions onnxc uses: threads, the
    optimization level, the execution mode and the graph passes to leave out
    (names of onnxc.passes()). Other attributes may be set and are ignored."""

    def __init__(self) -> None:
        self.intra_op_num_threads: int = 0
        self.execution_mode: int = ExecutionMode.ORT_SEQUENTIAL
        self.graph_optimization_level: int = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.disabled_optimizers: List[str] = []
        self._config: Dict[str, str] = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        """As onnxruntime's: "session.intra_op.allow_spinning" = "0" makes
        idle worker threads sleep at once (thread_spin_us -1); other keys
        are kept and ignored."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        return self._config[key]


class PassInfo(NamedTuple):
    """One graph pass of the table, as onnxc.passes() lists them."""

    name: str
    level: int  # runs at optimization_level >= level
    default_on: bool
    description: str


def passes() -> List[PassInfo]:
    """The graph passes a session runs, in order; any can be switched off by
    name (InferenceSession's disabled_optimizers)."""
    return [PassInfo(*p) for p in _onnxc.passes()]


class RunOptions:
    """The subset of onnxruntime.RunOptions onnxc uses: run_log_tag names the
    run in error messages."""

    def __init__(self) -> None:
        self.run_log_tag: str = ""


def get_available_providers() -> List[str]:
    """onnxc runs on the CPU only."""
    return ["CPUExecutionProvider"]


def get_device() -> str:
    return "CPU"


class InferenceSession:
    """A model prepared for running.

    path_or_bytes: a model file (binary or text; mapped, not read), its bytes,
    an onnxc.Model, or an onnx.ModelProto. threads: the session's thread pool
    (0: one per core). optimization_level: 0 runs the graph as it is; 1 (the
    default) folds constants, packs weights and fuses operators. max_memory:
    the most tensor storage a run may hold (bytes, 0: no limit).
    no_quant_fusion: run quantized (QDQ) units as the float arithmetic the
    model writes. low_bit_int8: one- and two-row products by weight-only
    quantized (8/4/2-bit) matrices quantize the activations to int8 per block,
    as onnxruntime does by default (faster decode; float otherwise).
    thread_spin_us: how long idle worker threads watch for work before they
    sleep (microseconds; 0: the default, 200; negative: at once; also
    sess_options' "session.intra_op.allow_spinning" = "0"). pin_threads:
    each worker runs on one core only (physical cores first).
    parallel_branches: nodes that do not depend on each other run side by
    side, one thread each, where that measures faster than node by node (as
    onnxruntime's ExecutionMode.ORT_PARALLEL, which sess_options'
    execution_mode also selects).
    disabled_optimizers: graph passes to leave out, by name (onnxc.passes()
    lists them; as onnxruntime's argument of that name; also read from
    sess_options.disabled_optimizers); an unknown name raises InvalidArgument.
    sess_options/providers/provider_options are accepted as onnxruntime's:
    sess_options.intra_op_num_threads and graph_optimization_level are used,
    providers other than the CPU are ignored.

    run() may be called from several threads at once; the GIL is released
    while the model runs."""

    def __init__(
        self,
        path_or_bytes: ModelLike,
        sess_options: Optional[Any] = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Any]] = None,
        *,
        threads: Optional[int] = None,
        optimization_level: Optional[int] = None,
        max_memory: int = 0,
        no_quant_fusion: bool = False,
        low_bit_int8: bool = False,
        disabled_optimizers: Optional[Sequence[str]] = None,
        thread_spin_us: Optional[int] = None,
        pin_threads: bool = False,
        parallel_branches: Optional[bool] = None,
        **kwargs: Any,
    ) -> None:
        if threads is None:
            threads = int(getattr(sess_options, "intra_op_num_threads", 0) or 0)
        if optimization_level is None:
            level = getattr(sess_options, "graph_optimization_level", 1)
            optimization_level = 1 if int(level) > 0 else 0
        self._options = dict(
            threads=threads,
            optimization_level=optimization_level,
            max_memory=max_memory,
            no_quant_fusion=bool(no_quant_fusion),
            low_bit_int8=bool(low_bit_int8),
        )
        if thread_spin_us is None:
            config = getattr(sess_options, "_config", {})
            spinning = config.get("session.intra_op.allow_spinning", "1")
            thread_spin_us = -1 if spinning == "0" else 0
        if thread_spin_us or pin_threads:
            self._options["thread_spin_us"] = int(thread_spin_us)
            self._options["pin_threads"] = bool(pin_threads)
        if parallel_branches is None:
            mode = getattr(sess_options, "execution_mode", ExecutionMode.ORT_SEQUENTIAL)
            parallel_branches = int(mode) == ExecutionMode.ORT_PARALLEL
        if parallel_branches:
            self._options["parallel_branches"] = True
        if disabled_optimizers is None:
            disabled_optimizers = getattr(sess_options, "disabled_optimizers", None)
        if disabled_optimizers is not None:
            if isinstance(disabled_optimizers, str):
                disabled_optimizers = [disabled_optimizers]
            self._options["disabled_passes"] = list(disabled_optimizers)
        self._sess_options = sess_options
        self._start(as_model(path_or_bytes))

    def _start(self, model: Model) -> None:
        self._model = model
        self._session = _onnxc.Session(model, **self._options)
        self._inputs = [NodeArg(*a) for a in self._session.inputs()]
        self._outputs = [NodeArg(*a) for a in self._session.outputs()]

    def __getstate__(self) -> Dict[str, Any]:
        # pickled as the model and the options, prepared again where it lands
        # (Ray, Spark or Dask workers)
        return {"model": self._model, "options": self._options}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._options = state["options"]
        self._sess_options = None
        self._start(state["model"])

    def get_inputs(self) -> List[NodeArg]:
        """The inputs a run is fed (graph inputs without an initializer)."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The graph outputs."""
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Not reported by onnxc's API: always []. Graph inputs with an
        initializer may still be fed by name."""
        return []

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(self._model.info())

    def get_providers(self) -> List[str]:
        return get_available_providers()

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {"CPUExecutionProvider": {}}

    def get_session_options(self) -> Any:
        return self._sess_options

    @property
    def model(self) -> Model:
        """The onnxc.Model this session runs."""
        return self._model

    def run(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Mapping[str, Any],
        run_options: Optional[Any] = None,
        *,
        threads: int = 0,
    ) -> List[Any]:
        """Runs the model and returns the outputs named (all, in order, when
        output_names is None or empty).

        input_feed maps input names to numpy arrays (tensors), lists
        (sequences), dicts (maps) or None (an empty optional). Arrays are not
        copied when their dtype matches and they are C-contiguous. Tensor
        outputs are new numpy arrays. Element types numpy lacks cross as bit
        patterns (see the package documentation). threads: 1 runs on the
        calling thread only; 0 uses the session's pool."""
        if not output_names:
            output_names = None
        tag = getattr(run_options, "run_log_tag", None) or None
        feeds = input_feed if type(input_feed) is dict else dict(input_feed)
        return self._session.run(output_names, feeds, threads=threads, tag=tag)
