"""onnxc.generate: token ids from a decoder-only language model, over the
library's generation loop (onnxc_generate* in onnxc.h): the layouts without
a cache, Hugging Face Optimum's decoder-with-past and onnxruntime-genai's
shared past/present buffer (genai_config.json beside the model). Tokenizers
stay outside: ids in, ids out."""

import operator
import os
from typing import Any, Iterator, List, Optional, Sequence, Union

from . import _onnxc
from ._inference import InferenceSession
from ._tools import as_model


class Generation:
    """An iterator of new token ids, one model run each (the GIL is released
    while the model runs). layout names the decoder's layout; stats() gives
    the time to the first token and of the decode after it."""

    def __init__(self, gen: Any, session: Any) -> None:
        self._gen = gen
        self._session = session  # kept alive while the generation runs

    def __iter__(self) -> "Generation":
        return self

    def __next__(self) -> int:
        return next(self._gen)

    @property
    def layout(self) -> str:
        return self._gen.layout

    def stats(self) -> dict:
        return self._gen.stats()


def _session_of(model_or_session: Any, threads: int) -> Any:
    """(the _onnxc.Session, the folder of the model's file or None)"""
    if isinstance(model_or_session, InferenceSession):
        s = model_or_session._session
    elif isinstance(model_or_session, _onnxc.Session):
        s = model_or_session
    else:
        s = _onnxc.Session(as_model(model_or_session), threads=threads)
    base = getattr(s.model, "base_dir", None)
    return s, base if base and os.path.isdir(base) else None


def generate(
    model_or_session: Union[str, os.PathLike, bytes, Any],
    ids: Sequence[int],
    max_new_tokens: int = 32,
    *,
    do_sample: bool = False,
    top_k: int = 0,
    top_p: float = 0.0,
    temperature: float = 0.0,
    seed: int = 0,
    eos: Optional[Sequence[int]] = None,
    context_length: int = 0,
    config_dir: Optional[str] = None,
    threads: int = 0,
    stream: bool = False,
) -> Union[List[int], Generation]:
    """Generates up to max_new_tokens token ids after the prompt `ids`.

    model_or_session: a path, bytes, onnxc.Model, onnx.ModelProto or an
    onnxc.InferenceSession. Greedy by default (the first index of the
    largest logit, as numpy's argmax); do_sample=True draws after
    temperature, top_k and top_p (nucleus) cuts, seeded by seed
    (splitmix64: the same seed gives the same tokens). eos: ids that end
    generation (the EOS is returned last); default genai_config.json's
    eos_token_id, read from config_dir (default: the model file's folder).
    context_length: the most tokens, prompt included (default: the
    config's); asking for more is onnxc.InvalidArgument. threads: per run
    (0: the session's). Returns the new ids as a list, or with stream=True
    an iterator that yields each as soon as it is known. ids and eos take
    ints (numpy integers too); anything else is a TypeError."""
    if max_new_tokens is None or max_new_tokens < 0:
        raise _onnxc.InvalidArgument(f"max_new_tokens is {max_new_tokens}")
    session, base = _session_of(model_or_session, threads)
    gen = _onnxc.Generator(
        session, [operator.index(t) for t in ids], max_new_tokens=int(max_new_tokens),
        do_sample=bool(do_sample), top_k=int(top_k), top_p=float(top_p),
        temperature=float(temperature), seed=int(seed),
        eos=None if eos is None else [operator.index(t) for t in eos],
        context_length=int(context_length), config_dir=config_dir or base,
        threads=int(threads))
    it = Generation(gen, session)
    return it if stream else list(it)
