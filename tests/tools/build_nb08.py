"""Write notebooks/solutions/08_efficient_attention.ipynb (the source of notebook 08) with nbformat.

Run once, then refresh its outputs and make the learner version:
    python tests/tools/build_nb08.py
    OMP_NUM_THREADS=1 python tests/tools/run_notebooks.py refresh solutions/08
    OMP_NUM_THREADS=1 python tests/tools/make_exercises.py 08
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
SETUP = nbformat.read(ROOT / "notebooks/solutions/04_padding_and_causal_masks.ipynb", as_version=4).cells[1].source

cells = []


def md(text: str) -> None:
    cells.append(nbformat.v4.new_markdown_cell(text.strip("\n")))


def code(text: str, *, check: bool = False) -> None:
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if check or text.lstrip().startswith("# check:"):
        cell.metadata["jupyter"] = {"source_hidden": True}
    cells.append(cell)


md(r"""
# 08 · What does attention cost, and how do FlashAttention, the KV cache and GQA cut it?

Attention compares every query with every key: for T tokens that is a T × T matrix of scores per
head. This notebook measures what that costs on your machine, then takes the cost apart three ways:

1. **the cost, measured**: time and memory of attention as T doubles, and the arithmetic it does;
2. **the online softmax**: a softmax computed one score at a time, by hand, on one row;
3. **blockwise (flash) attention**: the same trick on blocks of keys, so the T × T weights are
   never stored; which blocks a causal mask lets us skip; attnlib's `flash_attention`;
4. **the key/value cache**: generating token by token without recomputing the past;
5. **multi-query and grouped-query attention**: fewer key/value heads, a smaller cache.

**You should know first** (notebooks 01-05): scaled dot-product attention, softmax over the keys
(`dim=-1`), the causal mask and its bottom-right alignment (notebook 04), heads (notebook 05).
Shapes use the course legend: B batch, H heads, Tq query length, Tk key length, E model width, Dh
head width.
""")
code(SETUP)
md("The imports: torch (its own attention as `F`, to compare against), then attnlib.")
code("""
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
""")
code("""
from attnlib import causal_mask, flash_attention, padding_mask, scaled_dot_product_attention
from attnlib.exercises import nb08  # the checkers of this notebook's exercises

torch.set_printoptions(precision=4, sci_mode=False)


def best_seconds(fn, repeat=3):
    \"\"\"The fastest of a few runs of fn(): the least disturbed by other programs on the machine.\"\"\"
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
""")

# --- 1. the cost -----------------------------------------------------------------------------
md(r"""
## 1. The cost, measured

attnlib's `scaled_dot_product_attention` returns the weights, (B, H, Tq, Tk): for self-attention
over T tokens that is B · H · T² numbers. In float32 each takes 4 bytes.

**Exercise 1 (predict, then run).** A model with H = 8 heads reads a document of T = 8192 tokens
(B = 1). How many MiB (2²⁰ bytes) do the float32 weights of one attention layer take? Write a
number, not code that computes it, then run the check.
""")
code("""
weights_mib = ...  # MiB of the (1, 8, 8192, 8192) float32 weights
### BEGIN SOLUTION
weights_mib = 2048
### END SOLUTION
""")
code("nb08.check_weights_memory(weights_mib)")
md(r"""
Now measured: attnlib's attention for one example with 4 heads of width 32, as T doubles. The
table shows the time of one call and the bytes of the weights it returned.
""")
code("""
# NBVAL_IGNORE_OUTPUT
torch.manual_seed(0)
cost = {}
for T in (256, 512, 1024, 2048):
    q, k, v = (torch.randn(1, 4, T, 32) for _ in range(3))  # (B, H, T, Dh)
    seconds = best_seconds(lambda: scaled_dot_product_attention(q, k, v))
    _, weights = scaled_dot_product_attention(q, k, v)  # weights (1, 4, T, T)
    cost[T] = (seconds, weights.nbytes / 2**20)
    print(f"T = {T:5d}: {seconds * 1e3:7.1f} ms, weights {cost[T][1]:6.1f} MiB")
""")
md(r"""
Each doubling of T multiplies the weights' memory by exactly 4: it grows as T². The time grows
faster than T too (the timings move with whatever else runs on the machine, so the check below
only asks for more than 8x the time for 8x the tokens; quadratic growth would be 64x).
""")
code("""
# check: the weights' memory is B * H * T^2 * 4 bytes (x4 per doubling); time grows much faster than T
for T, (_, mib) in cost.items():
    assert mib == 1 * 4 * T * T * 4 / 2**20
time_ratio = cost[2048][0] / cost[256][0]  # 8x the tokens: 64x if quadratic, 8x if linear
assert time_ratio > 8, time_ratio
print(f"memory x{cost[2048][1] / cost[256][1]:.0f} for 8x the tokens (64 = 8 squared); time grew more than 8x")
""")
md(r"""
Where does the time go? Two matrix products, Q Kᵀ and weights · V, each 2 · T · T · Dh
floating-point operations (a multiply and an add) per head: 4 · B · H · T² · Dh in all. Measure
how fast this machine multiplies matrices, then predict the attention's time from its count:
""")
code("""
# NBVAL_IGNORE_OUTPUT
a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
flops_per_second = 2 * 1024**3 / best_seconds(lambda: a @ b)
print(f"matmul speed: {flops_per_second / 1e9:.1f} GFLOP/s")
for T in (1024, 2048):
    flops = 4 * 1 * 4 * T * T * 32  # 4 B H T^2 Dh
    print(f"T = {T}: {flops / 1e9:.2f} GFLOP, predicted {flops / flops_per_second * 1e3:.1f} ms, "
          f"measured {cost[T][0] * 1e3:.1f} ms")
""")
md(r"""
The measured time is well above the prediction. Time the two products alone at T = 2048, and the
speed they reach:
""")
code("""
# NBVAL_IGNORE_OUTPUT
torch.manual_seed(0)
q, k, v = (torch.randn(1, 4, 2048, 32) for _ in range(3))  # (B, H, T, Dh)
scores_only = q @ k.mT  # (1, 4, 2048, 2048)
products = best_seconds(lambda: q @ k.mT) + best_seconds(lambda: scores_only @ v)
whole = best_seconds(lambda: scaled_dot_product_attention(q, k, v))
print(f"the two products: {products * 1e3:.1f} ms ({4 * 4 * 2048**2 * 32 / products / 1e9:.1f} GFLOP/s); "
      f"the whole attention: {whole * 1e3:.1f} ms")
""")
md(r"""
The products take most of the time, yet run far below the square product's speed. Q Kᵀ does only
2 · Dh = 64 operations for each of the T² numbers it writes, and weights · V reads each of them
again; the square 1024 × 1024 product does 2048 operations per number it writes. Attention's time
goes into moving the T × T matrix through memory more than into arithmetic. FlashAttention (Dao et
al. 2022) never writes that matrix: on a GPU this saves the trips to its main memory, and
everywhere it saves the memory itself.
""")

# --- 2. online softmax -------------------------------------------------------------------------
md(r"""
## 2. The online softmax, one row by hand

softmax(x)ᵢ = exp(xᵢ − m) / s with m = max(x) and s = Σⱼ exp(xⱼ − m). Subtracting the maximum
keeps every exp at most 1 (no overflow). It seems to need the whole row twice: once for m, once
for s. Milakov and Gimelshein (2018) compute both in one pass. Keep a running maximum m and a
running sum s of exp(xⱼ − m); when a larger score arrives, the terms already summed were
exp(xⱼ − m_old) and must become exp(xⱼ − m_new): multiply s by exp(m_old − m_new).

One row of five scores, one at a time; the rescaling happens when 3 and 5 arrive:
""")
code("""
scores = torch.tensor([1.0, 3.0, 2.0, 5.0, 0.5], dtype=torch.float64)
m, s = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
for x in scores:
    m_new = torch.maximum(m, x)
    rescale = torch.exp(m - m_new)  # 1 unless a larger score arrived (0 for the first one)
    s = s * rescale + torch.exp(x - m_new)
    note = f"larger score: old sum x {rescale.item():.4f}" if m_new > m and m > -math.inf else ""
    m = m_new
    print(f"x = {x.item():3.1f}  m = {m.item():3.1f}  s = {s.item():.4f}  {note}")
""")
md("After the last score, exp(x − m) / s are the weights:")
code("""
online_weights = torch.exp(scores - m) / s
print(online_weights)
""")
code("""
# check: the one-pass online softmax equals torch.softmax
torch.testing.assert_close(online_weights, torch.softmax(scores, dim=0), atol=1e-12, rtol=0)
print("online softmax == torch.softmax: equal")
""")
md(r"""
**Exercise 2: the online-softmax update.** Write `online_update(m, s, x)`: given the running
maximum `m`, the running sum `s` of exp(score − m) and a new score `x` (0-d tensors), return
`(m_new, s_new)`. The checker tries a larger score, a smaller one and the first score (m = −∞).
""")
code("""
def online_update(m, s, x):
    \"\"\"One step of the online softmax: the new running maximum and the rescaled running sum.\"\"\"
    ### BEGIN SOLUTION
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(m - m_new) + torch.exp(x - m_new)
    ### END SOLUTION
""")
code("nb08.check_online_update(online_update)")
md(r"""
Attention needs one more running quantity: the weighted sum of the values. Keep
acc = Σⱼ exp(xⱼ − m) vⱼ and rescale it by the same factor; at the end acc / s is
softmax(x) · V. Here the five keys come in blocks of two (the last block has one), with the
maximum taken over each block at once, as FlashAttention does:
""")
code("""
values = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.0, 3.0]], dtype=torch.float64)  # (Tk, Ev)
m, s, acc = torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
for start in range(0, 5, 2):
    x_blk, v_blk = scores[start:start + 2], values[start:start + 2]  # (bk,), (bk, Ev)
    m_new = torch.maximum(m, x_blk.max())
    p = torch.exp(x_blk - m_new)  # (bk,) this block's terms, under the new maximum
    s = s * torch.exp(m - m_new) + p.sum()
    acc = acc * torch.exp(m - m_new) + p @ v_blk  # (bk,) @ (bk, Ev) -> (Ev,)
    m = m_new
print("blockwise:", acc / s)
print("softmax(x) @ V:", torch.softmax(scores, dim=0) @ values)
""")
code("""
# check: the blockwise weighted sum equals softmax(x) @ V
torch.testing.assert_close(acc / s, torch.softmax(scores, dim=0) @ values, atol=1e-12, rtol=0)
print("blockwise output == softmax(x) @ V: equal")
""")

# --- 3. blockwise attention -------------------------------------------------------------------
md(r"""
## 3. Blockwise attention: the T × T matrix is never stored

The same loop for every query at once: the scores of all queries against one block of keys form
a (Tq, bk) tile; m, s and acc get one entry (row) per query. Memory: the tile, and (Tq, 1),
(Tq, 1) and (Tq, Ev) running quantities; nothing of size Tq × Tk.
""")
code("""
def blockwise_attention(query, key, value, block_size=16):
    \"\"\"softmax(Q K^T / sqrt(E)) V over blocks of keys, with a running max, sum and output.\"\"\"
    q = query / math.sqrt(query.shape[-1])  # (..., Tq, E)
    m = q.new_full((*q.shape[:-1], 1), -math.inf)  # (..., Tq, 1) running maximum
    s = q.new_zeros(*q.shape[:-1], 1)  # (..., Tq, 1) running sum of exp(score - m)
    acc = q.new_zeros(*q.shape[:-1], value.shape[-1])  # (..., Tq, Ev)
    for start in range(0, key.shape[-2], block_size):
        k_blk, v_blk = key[..., start:start + block_size, :], value[..., start:start + block_size, :]
        tile = q @ k_blk.mT  # (..., Tq, E) @ (..., E, bk) -> (..., Tq, bk)
        m_new = torch.maximum(m, tile.amax(dim=-1, keepdim=True))  # (..., Tq, 1)
        p = torch.exp(tile - m_new)  # (..., Tq, bk)
        s = s * torch.exp(m - m_new) + p.sum(dim=-1, keepdim=True)
        acc = acc * torch.exp(m - m_new) + p @ v_blk  # (..., Tq, bk) @ (..., bk, Ev) -> (..., Tq, Ev)
        m = m_new
    return acc / s  # (..., Tq, Ev)
""")
code("""
# check: blockwise attention equals torch's attention, with lengths that are not multiples of the block
torch.manual_seed(0)
q, k, v = torch.randn(2, 3, 37, 8), torch.randn(2, 3, 53, 8), torch.randn(2, 3, 53, 5)  # (B, H, T, Dh)
torch.testing.assert_close(blockwise_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))
print("blockwise_attention (2, 3, 37, 5) == F.scaled_dot_product_attention: equal")
""")
md(r"""
With a causal mask most of the work can be skipped, not just masked. Cut 64 queries and 64 keys
into blocks of 8: a tile whose keys all come after its last query is wholly in the future, and
is never computed; a tile on the diagonal is computed and partly masked; the rest are computed
whole.
""")
code("""
n_blocks = 64 // 8
rows, cols = torch.arange(n_blocks)[:, None], torch.arange(n_blocks)[None, :]  # query block, key block
kind = torch.where(cols > rows, 0, torch.where(cols == rows, 1, 2))  # 0 skipped, 1 diagonal, 2 whole
fig, ax = plt.subplots(figsize=(3.5, 3.5))
ax.imshow(kind, cmap=plt.get_cmap("Blues", 3), vmin=0, vmax=2)
ax.set(xlabel="key block", ylabel="query block", title="causal: white tiles are skipped")
plt.show()
print(f"skipped {(kind == 0).sum().item()} of {kind.numel()} tiles, diagonal {(kind == 1).sum().item()}, "
      f"whole {(kind == 2).sum().item()}")
""")
md(r"""
28 of 64 tiles skipped: with n blocks, n(n − 1)/2 of n², close to half as n grows, so causal
attention does about half the work. attnlib's `flash_attention` does all of this: blocks of
queries as well as keys, the causal skipping, bool and float masks cut into tiles with the
scores, zeros for a query with no key left, and a backward pass (Dao 2023, FlashAttention-2)
that recomputes each tile's weights from the saved log-sum-exp instead of storing them.
""")
code("""
# check: flash_attention equals torch's attention, causal (both alignments), padding, and its gradients
torch.manual_seed(0)
q, k, v = (torch.randn(2, 3, T, 8, requires_grad=True) for T in (37, 53, 53))  # (B, H, T, Dh)
pad = padding_mask(torch.tensor([53, 20]), 53)[:, None, None, :]  # (B, 1, 1, Tk)
cases = {"no mask": {}, "is_causal (top-left)": {"is_causal": True},
         "bottom-right causal": {"attn_mask": causal_mask(37, 53, align="bottom_right")}, "padding": {"attn_mask": pad}}
for name, kwargs in cases.items():
    ours, theirs = flash_attention(q, k, v, **kwargs), F.scaled_dot_product_attention(q, k, v, **kwargs)
    torch.testing.assert_close(ours, theirs)
    for g_ours, g_theirs in zip(torch.autograd.grad(ours.sum(), (q, k, v)), torch.autograd.grad(theirs.sum(), (q, k, v))):
        torch.testing.assert_close(g_ours, g_theirs)
    print(f"{name:<22} output and gradients equal")
""")
md(r"""
What does it buy? At T = 2048 with 8 heads of width 64, attnlib's plain attention stores
(1, 8, 2048, 2048) float32 weights, 128 MiB; `flash_attention`'s largest tile is
(1, 8, 256, 512), 4 MiB. The times of the three (the README's benchmark has the full table,
with memory measured in a fresh process):
""")
code("""
# NBVAL_IGNORE_OUTPUT
torch.manual_seed(0)
q, k, v = (torch.randn(1, 8, 2048, 64) for _ in range(3))  # (B, H, T, Dh)
with torch.no_grad():
    timings = {
        "attnlib scaled_dot_product_attention": best_seconds(lambda: scaled_dot_product_attention(q, k, v), 2),
        "attnlib flash_attention": best_seconds(lambda: flash_attention(q, k, v), 2),
        "torch F.scaled_dot_product_attention": best_seconds(lambda: F.scaled_dot_product_attention(q, k, v), 2),
    }
for name, seconds in timings.items():
    print(f"{name:<38} {seconds * 1e3:6.0f} ms")
""")

# --- 4. KV cache -------------------------------------------------------------------------------
md(r"""
## 4. The key/value cache

A language model generates one token at a time: the new token's query attends to the keys and
values of every token so far. Recomputing all of them at every step repeats the same work; the
keys and values of the past do not change (causal attention: a token never sees its future), so
a **cache** keeps them and each step computes only the new token's query, key and value.

A one-head attention layer with random projections, and 40 tokens (random embeddings):
""")
code("""
torch.manual_seed(0)
E = 64
proj_q, proj_k, proj_v = (nn.Linear(E, E) for _ in range(3))
tokens = torch.randn(1, 40, E)  # (B, T, E)


def attend(x_q, x_kv, mask=None):
    \"\"\"Attention of the tokens x_q (B, Tq, E) to x_kv (B, Tk, E), projections included.\"\"\"
    return F.scaled_dot_product_attention(proj_q(x_q), proj_k(x_kv), proj_v(x_kv), attn_mask=mask)
""")
md(r"""
Without a cache, step t projects all t + 1 tokens again and keeps the last query's output. With
a cache, step t projects only token t and appends its key and value:
""")
code("""
@torch.no_grad()
def decode_recompute(x):
    steps = [attend(x[:, : t + 1], x[:, : t + 1], causal_mask(t + 1))[:, -1:] for t in range(x.shape[1])]
    return torch.cat(steps, dim=1)  # (B, T, E)


@torch.no_grad()
def decode_cached(x):
    keys, values, steps = [], [], []
    for t in range(x.shape[1]):
        keys.append(proj_k(x[:, t : t + 1]))  # (B, 1, E): only the new token is projected
        values.append(proj_v(x[:, t : t + 1]))
        k_cache, v_cache = torch.cat(keys, dim=1), torch.cat(values, dim=1)  # (B, t + 1, E)
        mask = causal_mask(1, t + 1, align="bottom_right")  # (1, t + 1): the new query sees every key
        steps.append(F.scaled_dot_product_attention(proj_q(x[:, t : t + 1]), k_cache, v_cache, attn_mask=mask))
    return torch.cat(steps, dim=1)  # (B, T, E)
""")
code("""
# check: recomputing, caching and one causal pass over all tokens give the same outputs
with torch.no_grad():
    full = attend(tokens, tokens, causal_mask(40))  # (1, 40, 64)
torch.testing.assert_close(decode_recompute(tokens), full)
torch.testing.assert_close(decode_cached(tokens), full)
print("decode_recompute == decode_cached == one causal pass: equal, shape", tuple(full.shape))
""")
md(r"""
A single new query sees every cached key, so its mask row is all True. The alignment matters
when several new tokens come at once (a prompt appended to a conversation, or a chunk of
tokens checked together): with 5 tokens in the cache and 3 new ones, the new queries are tokens
5, 6 and 7, and the causal diagonal must sit bottom-right (notebook 04).

**Exercise 3 (predict, then run).** 5 tokens are cached and 3 new tokens arrive together. How many
of the 8 keys may the first new query attend to?
""")
code("""
keys_seen = ...  # a number
### BEGIN SOLUTION
keys_seen = 6
### END SOLUTION
""")
code("nb08.check_cache_keys_seen(keys_seen)")
md("The two alignments for 3 queries and 8 keys, 1 = may attend:")
code("""
print("bottom_right (cache):\\n", causal_mask(3, 8, align="bottom_right").int())
print("top_left (is_causal):\\n", causal_mask(3, 8).int())
""")
code("""
# check: 3 new tokens after a cache of 5 equal the last 3 rows of full causal attention only with bottom_right
with torch.no_grad():
    chunk = attend(tokens[:, 5:8], tokens[:, :8], causal_mask(3, 8, align="bottom_right"))  # (1, 3, 64)
    wrong = attend(tokens[:, 5:8], tokens[:, :8], causal_mask(3, 8))
    reference = attend(tokens[:, :8], tokens[:, :8], causal_mask(8))[:, 5:8]
torch.testing.assert_close(chunk, reference)
assert not torch.allclose(wrong, reference)
print("bottom_right: equal to full causal attention; top_left: different")
""")
md(r"""
Time per generated token, as the sequence grows: one step at position t, with and without the
cache (a wider model, E = 256, so that the projections are visible):
""")
code("""
# NBVAL_IGNORE_OUTPUT
torch.manual_seed(0)
E = 256
proj_q, proj_k, proj_v = (nn.Linear(E, E) for _ in range(3))
long_tokens = torch.randn(1, 1024, E)  # (B, T, E)
per_token = {}
with torch.no_grad():
    for t in (128, 256, 512, 1024):
        prefix = long_tokens[:, :t]
        k_cache, v_cache = proj_k(prefix), proj_v(prefix)  # (1, t, E), filled by earlier steps
        new = long_tokens[:, t - 1 : t]  # (1, 1, E)
        recompute = best_seconds(lambda: attend(prefix, prefix, causal_mask(t))[:, -1:], 5)
        cached = best_seconds(lambda: F.scaled_dot_product_attention(
            proj_q(new), torch.cat([k_cache, proj_k(new)], 1), torch.cat([v_cache, proj_v(new)], 1)), 5)
        per_token[t] = (recompute, cached)
        print(f"t = {t:4d}: recompute {recompute * 1e3:6.2f} ms, cached {cached * 1e3:6.3f} ms, "
              f"ratio {recompute / cached:5.1f}")
""")
code("""
# check: at t = 1024 the cached step is faster (the margin is generous; the times move with load)
recompute, cached = per_token[1024]
assert recompute / cached > 2, recompute / cached
print("the cached step is more than twice as fast at t = 1024")
""")
md(r"""
The recomputing step grows with t (it projects all t tokens and, for the full causal pass, does
t² work); the cached step projects one token and reads t keys. The price is memory: the cache
holds a key and a value per token, per head, per layer.
""")

# --- 5. MQA / GQA ------------------------------------------------------------------------------
md(r"""
## 5. Multi-query and grouped-query attention: a smaller cache

The cache holds 2 · B · H · T · Dh numbers per layer (keys and values). Shazeer (2019) let all
query heads share **one** key/value head (multi-query attention, MQA); Ainslie et al. (2023)
share each key/value head among a **group** of query heads (grouped-query attention, GQA), which
keeps more of the quality. With Hq = 12 query heads, T = 8192, Dh = 64, float32, one layer:
""")
code("""
Hq, T, Dh = 12, 8192, 64
cache_mib = {}
for name, h_kv in (("multi-head, Hkv = H", Hq), ("grouped, Hkv = H/3", Hq // 3), ("multi-query, Hkv = 1", 1)):
    cache_mib[h_kv] = 2 * 1 * h_kv * T * Dh * 4 / 2**20  # keys and values, (B, Hkv, T, Dh) each
    print(f"{name:<22} {h_kv:2d} key/value heads: cache {cache_mib[h_kv]:5.0f} MiB per layer")
""")
code("""
# check: the cache shrinks by the factor the key/value heads shrink by
assert cache_mib[12] / cache_mib[4] == 3 and cache_mib[12] / cache_mib[1] == 12
print("H/3 key/value heads: a third of the cache; one head: a twelfth")
""")
md(r"""
Which query heads share which key/value head? With Hq = 6 and Hkv = 2, torch's `enable_gqa`
(and Ainslie et al.'s groups) give query heads 0, 1, 2 key/value head 0 and heads 3, 4, 5 key/value
head 1: query head h reads key/value head h // (Hq / Hkv). Copying each key/value head for its
group turns GQA back into ordinary multi-head attention.

**Exercise 4: the head grouping.** Write `expand_kv(kv, num_query_heads)`: (B, Hkv, T, Dh) ->
(B, Hq, T, Dh), each key/value head repeated for its group of consecutive query heads.
""")
code("""
def expand_kv(kv, num_query_heads):
    \"\"\"(B, Hkv, T, Dh) -> (B, Hq, T, Dh): key/value head j serves query heads j * g ... j * g + g - 1.\"\"\"
    ### BEGIN SOLUTION
    return kv.repeat_interleave(num_query_heads // kv.shape[1], dim=1)  # g = Hq // Hkv copies, side by side
    ### END SOLUTION
""")
code("nb08.check_expand_kv(expand_kv)")
md(r"""
attnlib's `scaled_dot_product_attention` takes `enable_gqa=True` with torch's meaning: query
(B, Hq, Tq, Dh), key and value (B, Hkv, Tk, Dh), Hq a multiple of Hkv. It gives the same output as
torch's, and as ordinary attention on the expanded keys and values:
""")
code("""
# check: GQA in attnlib == torch's enable_gqa == ordinary attention on repeat_interleave'd heads
torch.manual_seed(0)
q = torch.randn(2, 6, 5, 8)  # (B, Hq, Tq, Dh)
k, v = torch.randn(2, 2, 7, 8), torch.randn(2, 2, 7, 8)  # (B, Hkv, Tk, Dh)
out, weights = scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
k6, v6 = k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)  # (B, Hkv, Tk, Dh) -> (B, Hq, Tk, Dh)
torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k6, v6, is_causal=True))
print(f"output {tuple(out.shape)}, weights {tuple(weights.shape)}: equal to torch's")
""")

# --- endings -------------------------------------------------------------------------------------
md(r"""
## What you now know

* Attention stores B · H · T² weights and does 4 · B · H · T² · Dh operations: memory and time grow as T².
* The online softmax keeps a running max and sum, rescaling by exp(m_old − m_new) when a larger score arrives.
* FlashAttention applies it to blocks of keys: exact attention, O(T) memory, and causal tiles in the future skipped.
* A key/value cache makes each generated token cost O(t), not O(t²); several new tokens need the bottom-right mask.
* MQA and GQA share key/value heads among query heads (`repeat_interleave`), shrinking the cache by Hq / Hkv.
""")
md(r"""
## Self-check

Answer each in your head, then open the answer.

1. You double the context from 4096 to 8192 tokens. By how much do the attention weights' memory
   and the attention's arithmetic grow, and the projections' (Q, K, V) memory?

<details><summary>Answer</summary>

The weights and the arithmetic grow 4× (T²); Q, K and V, (B, H, T, Dh), grow 2× (T). At T = 8192
with 8 heads, the float32 weights take 2 GiB per layer (Exercise 1).

</details>

2. In the online softmax, the running maximum goes from 3 to 5. What happens to the running sum,
   and why is the result still exact?

<details><summary>Answer</summary>

It is multiplied by exp(3 − 5): every term it holds was exp(xⱼ − 3) and becomes exp(xⱼ − 5), as
if the maximum had been 5 from the start. No approximation is made, so the final weights equal
`torch.softmax` (section 2) to the last digits.

</details>

3. FlashAttention does the same arithmetic as ordinary attention (more, in the backward pass).
   Why is it faster on a GPU, and what does it save everywhere?

<details><summary>Answer</summary>

It never writes the T × T scores and weights to memory and reads them back: each tile lives in
fast on-chip memory while it is used (Dao et al. 2022). Everywhere it saves that memory: O(T)
instead of O(T²).
On this CPU our eager version is not faster than torch's fused kernel, but it is faster than
attnlib's materialising attention at long T (section 3; the README's benchmark).

</details>

4. A model has 32 query heads and 8 key/value heads. How much smaller is its cache than with 32
   key/value heads, and which key/value head does query head 13 read?

<details><summary>Answer</summary>

4× smaller (8 instead of 32 key/value heads). Groups of 32 / 8 = 4 consecutive query heads share
one key/value head: query head 13 reads key/value head 13 // 4 = 3.

</details>
""")
md(r"""
## What goes into attnlib

* `flash_attention(query, key, value, attn_mask=None, is_causal=False, scale=None, *,
  block_size_q=256, block_size_k=512, return_lse=False)` in `attnlib/flash.py`: section 3's loop
  with blocks of queries too, causal tiles skipped, masks cut into tiles, fully masked rows zero,
  the log-sum-exp on request, and FlashAttention-2's backward pass. It returns the output only:
  never materialising the weights is its point.
* `enable_gqa=True` in `scaled_dot_product_attention`: key/value heads shared by groups of query
  heads, as in torch.

The inline versions, checked against attnlib's:
""")
code("""
# check: the inline blockwise attention and the inline GQA expansion equal attnlib's
torch.manual_seed(1)
q, k, v = torch.randn(2, 6, 70, 16), torch.randn(2, 2, 90, 16), torch.randn(2, 2, 90, 8)  # (B, H, T, Dh)
k6, v6 = k.repeat_interleave(3, dim=1), v.repeat_interleave(3, dim=1)  # the inline GQA expansion, Hkv 2 -> Hq 6
torch.testing.assert_close(blockwise_attention(q, k6, v6, block_size=32),
                           flash_attention(q, k6, v6, block_size_q=16, block_size_k=32))
torch.testing.assert_close(scaled_dot_product_attention(q, k6, v6)[0],
                           scaled_dot_product_attention(q, k, v, enable_gqa=True)[0])
print("blockwise_attention == flash_attention; repeat_interleave + attention == enable_gqa=True: equal")
""")
md(r"""
## References

* Milakov, M., and Gimelshein, N. (2018). "Online normalizer calculation for softmax". arXiv:1805.02867.
  The one-pass running maximum and rescaled sum of section 2.
* Dao, T., Fu, D. Y., Ermon, S., Rudra, A., and Ré, C. (2022). "FlashAttention: Fast and
  Memory-Efficient Exact Attention with IO-Awareness". NeurIPS. Algorithm 1 (the blockwise forward
  pass of section 3).
* Dao, T. (2023). "FlashAttention-2: Faster Attention with Better Parallelism and Work
  Partitioning". Algorithm 2 (the backward pass of `flash_attention`).
* Shazeer, N. (2019). "Fast Transformer Decoding: One Write-Head is All You Need". Multi-query
  attention and the cost of incremental decoding.
* Ainslie, J., Lee-Thorp, J., de Jong, M., Zemlyanskiy, Y., Lebrón, F., and Sanghai, S. (2023).
  "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints". EMNLP.
* Vaswani, A., et al. (2017). "Attention Is All You Need". NeurIPS. Sec. 3.2.1 (scaled
  dot-product attention) and sec. 4 (the cost per layer, O(n² · d)).
* PyTorch 2.13 documentation: `torch.nn.functional.scaled_dot_product_attention` (`is_causal`,
  `enable_gqa`).
""")

nb = nbformat.v4.new_notebook(cells=cells)
nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
               "language_info": {"name": "python"}}
nbformat.write(nb, ROOT / "notebooks/solutions/08_efficient_attention.ipynb")
print("wrote notebooks/solutions/08_efficient_attention.ipynb,", len(cells), "cells")
