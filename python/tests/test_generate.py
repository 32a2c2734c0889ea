"""onnxc.generate on the tiny decoders of tests/generate/make_decoders.py:
the forms (list, stream, path, session), seeded sampling, EOS, stats and the
errors. That the greedy tokens are onnxruntime's is checked by
tests/oracle/ort_generate.mjs, which runs this function too."""

import os
import subprocess
import sys

import pytest

import onnxc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKER = os.path.join(ROOT, "tests", "generate", "make_decoders.py")
PROMPT = [5, 17, 42, 8]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("decoders")
    r = subprocess.run([sys.executable, MAKER, str(out)], capture_output=True, text=True)
    if r.returncode == 77:
        pytest.skip("python3-onnx is missing: " + r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    return lambda name: str(out / name / "model.onnx")


def test_forms_agree(models):
    path = models("b")
    tokens = onnxc.generate(path, PROMPT, max_new_tokens=10)
    assert len(tokens) == 10 and all(isinstance(t, int) and 0 <= t < 100 for t in tokens)
    assert list(onnxc.generate(path, PROMPT, max_new_tokens=10, stream=True)) == tokens
    sess = onnxc.InferenceSession(path)
    assert onnxc.generate(sess, PROMPT, max_new_tokens=10, threads=1) == tokens
    assert onnxc.generate(onnxc.load(path), PROMPT, max_new_tokens=10) == tokens
    # the model without a cache has b's weights: the same tokens
    assert onnxc.generate(models("a"), PROMPT, max_new_tokens=10) == tokens


def test_stream_layout_stats(models):
    gen = onnxc.generate(models("b"), PROMPT, max_new_tokens=4, stream=True)
    assert gen.layout == "decoder-with-past"
    first = next(gen)
    rest = list(gen)
    assert len(rest) == 3 and first >= 0
    stats = gen.stats()
    assert stats["prompt_tokens"] == 4 and stats["new_tokens"] == 4
    assert stats["first_token_ms"] >= 0 and stats["decode_ms"] >= 0
    assert stats["cache_copied_bytes"] == 0  # the Concats wrote in the loop's buffers
    assert onnxc.generate(models("a"), PROMPT, max_new_tokens=1, stream=True).layout == "no-cache"


def test_sampling_is_seeded(models):
    path = models("b")
    kw = dict(max_new_tokens=16, do_sample=True, top_k=20, top_p=0.95, temperature=1.3)
    one = onnxc.generate(path, PROMPT, seed=7, **kw)
    assert onnxc.generate(path, PROMPT, seed=7, threads=2, **kw) == one
    others = [onnxc.generate(path, PROMPT, seed=s, **kw) for s in (8, 9, 10)]
    assert any(o != one for o in others)
    greedy = onnxc.generate(path, PROMPT, max_new_tokens=16)
    assert onnxc.generate(path, PROMPT, max_new_tokens=16, do_sample=True, top_k=1,
                          seed=3) == greedy


def test_eos(models):
    path = models("b")
    tokens = onnxc.generate(path, PROMPT, max_new_tokens=12)
    stop = tokens[5]
    cut = onnxc.generate(path, PROMPT, max_new_tokens=12, eos=[1000, stop])
    assert cut == tokens[: tokens.index(stop) + 1]


def test_errors(models):
    path = models("b")
    with pytest.raises(onnxc.InvalidArgument, match="empty"):
        onnxc.generate(path, [], max_new_tokens=3)
    with pytest.raises(onnxc.InvalidArgument, match="token id 100 at position 1"):
        onnxc.generate(path, [1, 100], max_new_tokens=3)
    with pytest.raises(onnxc.InvalidArgument, match="context length 16"):
        onnxc.generate(models("b_ctx"), [1, 2, 3], max_new_tokens=20)
    with pytest.raises(onnxc.InvalidArgument, match="input 'input_ids' not found"):
        onnxc.generate(models("notdecoder"), [1], max_new_tokens=3)
    with pytest.raises(onnxc.InvalidArgument, match="top_p"):
        onnxc.generate(path, [1], max_new_tokens=3, do_sample=True, top_p=2.0)
    with pytest.raises(onnxc.InvalidArgument):
        onnxc.generate(path, [1], max_new_tokens=-1)
    with pytest.raises(TypeError):
        onnxc.generate(path, ["a"], max_new_tokens=2)
