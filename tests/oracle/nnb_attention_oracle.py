#!/usr/bin/python3
"""Attention-25 cases the node suite (opset <= 24 data) does not cover:
left/right window sizes composed with is_causal, boolean and float masks,
past key/value and nonpad_kv_seqlen, with 3-D grouped-query inputs. The
expected outputs come from a NumPy transcription of the rules in
Operators.md (Attention, version 25). Writes case folders into OUTDIR and
runs `ONNXC test OUTDIR`.

usage: nnb_attention_oracle.py ONNXC OUTDIR   (exit 77 = skipped: no numpy/onnx)
"""
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    print("skipped: python3 numpy/onnx are not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnb_rnn_oracle import save_case  # noqa: E402


def attention(Q, K, V, mask, past_k, past_v, nonpad, causal, left, right):
    """Q [B,Hq,Sq,D], K/V [B,Hk,Skv,*] -> Y [B,Hq,Sq,Dv], present K/V."""
    if past_k is not None:
        K = np.concatenate([past_k, K], axis=2)
        V = np.concatenate([past_v, V], axis=2)
    B, Hq, Sq, D = Q.shape
    Hk, T = K.shape[1], K.shape[2]
    scale = 1.0 / np.sqrt(D)
    Y = np.zeros((B, Hq, Sq, V.shape[3]), np.float64)
    for b in range(B):
        if past_k is not None:
            offset = past_k.shape[2]
        elif nonpad is not None:
            offset = int(nonpad[b]) - Sq
        else:
            offset = 0
        for h in range(Hq):
            kh = h // (Hq // Hk)
            s = (Q[b, h].astype(np.float64) @ K[b, kh].astype(np.float64).T) * scale
            for i in range(Sq):
                p = offset + i
                for j in range(T):
                    allowed = True
                    if causal and j > p:
                        allowed = False
                    if nonpad is not None and j >= nonpad[b]:
                        allowed = False
                    if left >= 0 and j < p - left:
                        allowed = False
                    if right >= 0 and j > p + right:
                        allowed = False
                    if mask is not None:
                        m = np.broadcast_to(mask, (B, Hq, Sq, mask.shape[-1]))[b, h, i]
                        if j >= m.shape[0]:
                            allowed = False
                        elif mask.dtype == np.bool_:
                            allowed = allowed and bool(m[j])
                        else:
                            s[i, j] += m[j]
                    if not allowed:
                        s[i, j] = -np.inf
                row = s[i]
                if np.all(np.isneginf(row)):
                    continue
                e = np.exp(row - row.max())
                Y[b, h, i] = (e / e.sum()) @ V[b, kh].astype(np.float64)
    return Y.astype(np.float32), K, V


def to3d(x):
    B, H, S, D = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, S, H * D).copy()


def make_cases(root):
    rng = np.random.default_rng(11)
    n = 0
    B, Hq, Hk, Sq, Skv, D = 2, 4, 2, 4, 6, 8
    variants = [
        ("window_l2_r0", dict(causal=0, left=2, right=0)),
        ("window_l2_r1", dict(causal=0, left=2, right=1)),
        ("window_l1_causal", dict(causal=1, left=1, right=-1)),
        ("window_r0_boolmask", dict(causal=0, left=-1, right=0, mask="bool")),
        ("window_l3_floatmask", dict(causal=0, left=3, right=2, mask="float")),
        ("window_l2_past", dict(causal=1, left=2, right=-1, past=3)),
        ("window_l1_nonpad", dict(causal=1, left=1, right=-1, nonpad=True)),
    ]
    for name, v in variants:
        Q = rng.standard_normal((B, Hq, Sq, D)).astype(np.float32)
        K = rng.standard_normal((B, Hk, Skv, D)).astype(np.float32)
        V = rng.standard_normal((B, Hk, Skv, D)).astype(np.float32)
        P = v.get("past", 0)
        pk = rng.standard_normal((B, Hk, P, D)).astype(np.float32) if P else None
        pv = rng.standard_normal((B, Hk, P, D)).astype(np.float32) if P else None
        T = Skv + P
        mask = None
        if v.get("mask") == "bool":
            mask = rng.random((Sq, T)) > 0.3
        elif v.get("mask") == "float":
            mask = rng.standard_normal((B, 1, Sq, T)).astype(np.float32)
        nonpad = np.array([6, 5], np.int64) if v.get("nonpad") else None
        Y, pk_out, pv_out = attention(Q, K, V, mask, pk, pv, nonpad, v["causal"], v["left"],
                                      v["right"])
        names = ["Q", "K", "V", "attn_mask" if mask is not None else "",
                 "past_key" if P else "", "past_value" if P else "",
                 "nonpad_kv_seqlen" if nonpad is not None else ""]
        while names and names[-1] == "":
            names.pop()
        vals = {"Q": to3d(Q), "K": to3d(K), "V": to3d(V), "attn_mask": mask, "past_key": pk,
                "past_value": pv, "nonpad_kv_seqlen": nonpad}
        outs = [("Y", to3d(Y))]
        if P:
            outs += [("present_key", pk_out.astype(np.float32)),
                     ("present_value", pv_out.astype(np.float32))]
        node = helper.make_node("Attention", names, [o for o, _ in outs], is_causal=v["causal"],
                                left_window_size=v["left"], right_window_size=v["right"],
                                q_num_heads=Hq, kv_num_heads=Hk)
        save_case(root, f"attention25_{name}", node, [(m, vals[m]) for m in names if m], outs,
                  opset=25)
        n += 1
    return n


def main():
    onnxc, out = sys.argv[1], sys.argv[2]
    n = make_cases(out)
    print(f"{n} cases written to {out}")
    r = subprocess.run([onnxc, "test", out], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
