"""Exercises of notebook 08 (efficient attention); the probes of Exercises 3 and 5 refuse what each forbids."""

from __future__ import annotations

import math
import re

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, plain, variant, watched

__all__ = ["check_blockwise_attention", "check_cache_causal_mask", "check_grouped_attention",
           "check_online_update", "check_weights_memory"]

BYTES = 8 * 8192 * 8192 * 4  # the float32 weights (B, H, T, T) = (1, 8, 8192, 8192)

check_weights_memory = Exercise(
    "Exercise 1", expected=BYTES / 2**20, rtol=0.01, read=as_number,
    correct="2 GiB for one layer's weights, 16 MiB for Q: the T x T matrix is what grows.",
    mistakes=[
        Mistake("{got} MiB counts numbers, not bytes: each float32 takes 4 bytes.", BYTES / 4 / 2**20),
        Mistake("{got} MiB is one head's (T, T) weights: each head has its own.", BYTES / 8 / 2**20),
        Mistake("{got} is the number of bytes: a MiB is 2**20 = 1048576 bytes.", float(BYTES)),
        Mistake(lambda got: f"{got:.6g} is in MB of 10**6 bytes: a MiB is 2**20 = 1048576 bytes.", BYTES / 1e6),
        Mistake("{got} is in GiB: the question asks MiB, and a GiB is 1024 MiB.", BYTES / 2**30),
        Mistake("Write the number alone, without its unit and quotes: it is in MiB.", raw=True, example="2048 MiB",
                when=lambda a: isinstance(a, str) and re.fullmatch(r"\s*[\d.e+]+\s*[A-Za-z]+\s*", a)),
    ])


def online_update(m, s, x, *, rescale=1, shift="new"):
    """Exercise 2's reference; ``rescale`` (the exponent's sign) and ``shift`` switch on a mistake."""
    m_new = torch.maximum(m, x)
    return m_new, s * torch.exp(rescale * (m - m_new)) + torch.exp(x - {"new": m_new, "old": m}[shift])


def _raw_exp(got, args) -> bool:
    """s_new adds exp(x) itself, to the old sum as it was or rescaled: the maximum is never subtracted."""
    m, s, x = (float(a) for a in args)
    raw = (s + math.exp(x), s * math.exp(m - max(m, x)) + math.exp(x))
    return any(math.isclose(float(as_number(got[1])), v, rel_tol=1e-4) for v in raw)


def _scalars(*values, dtype=torch.float64):
    return tuple(torch.tensor(v, dtype=dtype) for v in values)


check_online_update = Exercise(
    "Exercise 2", reference=online_update,
    probes=[Probe(_scalars(1.0, 1.0, 3.0), "m = 1, s = 1, x = 3 (a larger score)"),
            Probe(_scalars(3.0, 1.5, 2.0), "m = 3, s = 1.5, x = 2 (a smaller score)"),
            Probe(_scalars(-math.inf, 0.0, 1.0), "m = -inf, s = 0, x = 1 (the first score)"),
            Probe(_scalars(100.0, 1.0, 101.0, dtype=torch.float32), "m = 100, s = 1, x = 101 in float32",
                  "On m = 100, s = 1, x = 101 in float32 your s_new is wrong or not finite: exp of a raw score "
                  "overflows float32 (above exp(88.7)). Take exp only of m - m_new and x - m_new.")],
    correct="max first, then rescale what was summed under the old maximum by exp(m - m_new).",
    mistakes=[
        Mistake("Your function returns one value: return two values, (m_new, s_new).",
                when=lambda got: isinstance(got, torch.Tensor), example=lambda *a: online_update(*a)[1]),
        Mistake("On the first score (m = -inf) your s_new is NaN: shift every term by m_new, never by the old m.",
                when=lambda got, args: math.isinf(args[0]) and math.isnan(as_number(got[1])),
                example=lambda m, s, x: (m_new := torch.maximum(m, x), (s + torch.exp(x - m)) * torch.exp(m - m_new))),
        Mistake("When the maximum rises (m = 1, x = 3) your s_new adds to s as it was: rescale the old s first.",
                variant(online_update, rescale=0)),
        Mistake("Your rescaling has the wrong sign: s must shrink, not grow.", variant(online_update, rescale=-1)),
        Mistake("Your running sum takes exp(x) of the raw score: subtract the maximum first.", when=_raw_exp,
                example=lambda m, s, x: (torch.maximum(m, x), s * torch.exp(m - torch.maximum(m, x)) + torch.exp(x))),
        Mistake("Your new term is exp(x - m): shift every term by m_new.", variant(online_update, shift="old")),
        Mistake("You return (s_new, m_new): the maximum comes first.", lambda *a: online_update(*a)[::-1]),
    ])


def _no_whole_matrix(block_size: int, *tensors: torch.Tensor) -> tuple:
    """Probe arguments refusing the (Tq, Tk) scores and a (rows, Tk) block of queries (Tq, Tk, Dh, Ev all differ)."""
    (tq, dh), tk, ev = tensors[0].shape[-2:], tensors[1].shape[-2], tensors[2].shape[-1]

    def forbid(t):
        shape = tuple(t.shape[-2:]) if tk > block_size else ()  # one block holds every key: nothing to forbid
        return "the whole matrix of scores" if shape in ((tq, tk), (tk, tq)) else \
            "a block of queries against every key" if len(shape) == 2 and shape[1] == tk and shape[0] not in (dh, ev) \
            else ""  # rows Dh or Ev: k.mT, v.mT
    return (*watched(*tensors, forbid=forbid), block_size)


def blockwise(query, key, value, block_size, *, rescale=("s", "acc"), raw_exp=False, scaled=1, last_block=True,
              tile_max=lambda tile: tile.amax(dim=-1, keepdim=True)):
    """Exercise 3's loop; each keyword switches on one classic mistake (``scaled``: how many times by sqrt(Dh))."""
    q = query / math.sqrt(query.shape[-1]) ** scaled
    m = q.new_full((*q.shape[:-1], 1), -math.inf)  # (..., Tq, 1)
    s, acc = q.new_zeros(*q.shape[:-1], 1), q.new_zeros(*q.shape[:-1], value.shape[-1])  # (..., Tq, 1), (..., Tq, Ev)
    end = key.shape[-2] if last_block else key.shape[-2] // block_size * block_size
    for start in range(0, end, block_size):
        tile = q @ key[..., start:start + block_size, :].mT  # (..., Tq, bk)
        m_new = torch.maximum(m, tile_max(tile)) if not raw_exp else torch.zeros_like(m)
        factor = torch.exp(m - m_new) if not raw_exp else 1.0
        p = torch.exp(tile - m_new)  # (..., Tq, bk)
        s = s * (factor if "s" in rescale else 1.0) + p.sum(dim=-1, keepdim=True)
        acc = acc * (factor if "acc" in rescale else 1.0) + p @ value[..., start:start + block_size, :]
        m = m_new
    return acc / s


def _reference(query, key, value, block_size):
    q, k, v = plain(query, key, value)
    return torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), dim=-1) @ v


def _blockwise_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(8)
    row = torch.tensor([[1.0], [3.0], [2.0], [5.0], [0.5]], dtype=torch.float64)  # section 2's row, as keys (Dh = 1)
    values = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 1], [0, 3, 1]], dtype=torch.float64)
    big = torch.tensor([[10.0], [120.0], [20.0], [5.0], [100.0], [30.0], [7.0]])  # float32 scores up to 120
    return [Probe(_no_whole_matrix(2, torch.tensor([[1.0], [0.5], [-1.0], [2.0]], dtype=torch.float64), row, values),
                  "section 2's row [1, 3, 2, 5, 0.5] in blocks of 2 (the maximum rises in block 2)"),
            Probe(_no_whole_matrix(2, torch.tensor([[1.0], [0.5], [-1.0]]), big, torch.randn(7, 2, generator=g)),
                  "scores up to 120 in float32, blocks of 2"),
            Probe(_no_whole_matrix(4, *(torch.randn(2, 3, t, d, generator=g) for t, d in ((5, 4), (11, 4), (11, 6)))),
                  "(B, H) = (2, 3), Tq = 5, Tk = 11, Dh = 4, blocks of 4"),
            Probe(_no_whole_matrix(1, *(torch.randn(1, t, d, generator=g) for t, d in ((6, 8), (9, 8), (9, 5)))),
                  "Tq = 6, Tk = 9, Dh = 8, blocks of 1"),
            Probe(_no_whole_matrix(8, *(torch.randn(t, d, generator=g) for t, d in ((4, 3), (6, 3), (6, 2)))),
                  "Tq = 4, Tk = 6, one block of 8")]


check_blockwise_attention = Exercise(
    "Exercise 3", reference=_reference, probes=_blockwise_probes, solution=blockwise,
    correct="s and acc rescaled by the same exp(m - m_new) at every block: exact attention, one tile at a time.",
    mistakes=[
        Mistake("On (B, H, T, D) inputs your slice key[start:stop] cuts the first axis: slice the key axis, -2.",
                raises=Refused, match="whole", when=lambda err, args: args[1].dim() > 2,
                example=lambda q, k, v, b: blockwise(q, k, v, b) if q.dim() == 2 else q @ k.mT),
        Mistake("Your tiles span every key (a block of queries against all keys): block the keys instead.",
                raises=Refused, match="every key", example=lambda q, k, v, b: torch.cat(
                    [torch.softmax(q[..., i:i + b, :] @ k.mT, -1) @ v for i in range(0, q.shape[-2], b)], -2)),
        Mistake("You build the whole (Tq, Tk) matrix of scores, or call code that does: loop over blocks of keys.",
                raises=Refused, match="whole",
                example=lambda q, k, v, b: torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1) @ v),
        Mistake("You call a ready-made attention (torch's scaled_dot_product_attention, attnlib's flash_attention): "
                "write the loop yourself.", raises=Refused, match="ready-made",
                example=lambda q, k, v, b: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
        Mistake("Your acc is not rescaled when the maximum rises, as s is.", variant(blockwise, rescale=("s",))),
        Mistake("Your s is not rescaled when the maximum rises, though acc is.", variant(blockwise, rescale=("acc",))),
        Mistake("You rescale neither s nor acc when the maximum rises: multiply both by exp(m_old - m_new).",
                variant(blockwise, rescale=())),
        Mistake("Your maximum is taken over the whole tile: keep one running maximum per query, over its keys.",
                variant(blockwise, tile_max=lambda t: t.amax(dim=(-2, -1), keepdim=True))),
        Mistake("On scores up to 120 in float32 an exp overflowed: subtract the running maximum, max(m, tile max).",
                example=variant(blockwise, raw_exp=True), when=lambda got, args: args[1].dtype == torch.float32
                and bool(args[1].abs().amax() > 88) and not bool(torch.isfinite(got).all())),
        Mistake("Your tile uses query, not the scaled q = query / sqrt(Dh).", variant(blockwise, scaled=0)),
        Mistake("Your tile divides by sqrt(Dh) again: the stub's q is already scaled.", variant(blockwise, scaled=2)),
        Mistake("Your loop drops the last block when it is shorter: range(0, Tk, block_size) reaches it.",
                variant(blockwise, last_block=False)),
    ])


def cache_causal_mask(q_len: int, kv_len: int, *, shift: int = 0) -> torch.Tensor:
    """Exercise 4's mask: query i sees keys 0 to kv_len - q_len + i (``shift`` moves the diagonal)."""
    return torch.ones(q_len, kv_len).tril(diagonal=kv_len - q_len + shift).bool()


check_cache_causal_mask = Exercise(
    "Exercise 4", reference=cache_causal_mask, probes=[(3, 8), (1, 4), (4, 4), (2, 7), (5, 6)],
    refuse=("attnlib.masks",),  # attnlib's causal_mask(q_len, kv_len, align="bottom_right") is the answer
    correct="query i is token kv_len - q_len + i: it sees keys 0 to kv_len - q_len + i, the bottom-right diagonal.",
    mistakes=[
        Mistake(lambda got, args: f"With {args[1] - args[0]} tokens cached, your first new query sees key 0 only "
                "(top-left, is_causal=True): the new queries are the last q_len tokens, so each also sees every "
                "cached key.",
                lambda q, kv: torch.ones(q, kv).tril().bool()),
        Mistake("Your mask is True where a query is blocked: True = may attend.", lambda *a: ~cache_causal_mask(*a)),
        Mistake("Each of your new queries misses its own key: the diagonal is one key too far left.",
                variant(cache_causal_mask, shift=-1)),
        Mistake("Each of your new queries sees one key too many, the next token's: the diagonal is one too far right.",
                variant(cache_causal_mask, shift=1)),
        Mistake("Your mask is (kv_len, q_len): rows are the queries.", lambda *a: cache_causal_mask(*a).T),
    ])


def gqa(q, k, v, *, tiled=(False, False), power=0.5, softmax_dim=-1):
    """Exercise 5's reference, q (B, Hq, Tq, Dh), k, v (B, Hkv, Tk, Dh); ``tiled``: heads split, merged as (g, Hkv)."""
    (b, hq, tq, dh), hkv = q.shape, k.shape[1]
    groups = q.reshape(b, hq // hkv, hkv, tq, dh).transpose(1, 2) if tiled[0] else q.reshape(b, hkv, -1, tq, dh)
    scores = groups @ k.unsqueeze(2).mT / dh ** power  # (B, Hkv, g, Tq, Tk)
    out = scores.softmax(dim=softmax_dim) @ v.unsqueeze(2)  # (B, Hkv, g, Tq, Dh)
    return (out.transpose(1, 2) if tiled[1] else out).reshape(b, hq, tq, -1)


def _no_copy(g: torch.Generator, b: int, hq: int, hkv: int, tq: int, tk: int, dh: int) -> tuple:
    """Random q, k, v that refuse a stored tensor of Hq key or value heads (Tq, Tk and Dh all differ)."""
    q, k, v = (torch.randn(*shape, generator=g) for shape in ((b, hq, tq, dh), (b, hkv, tk, dh), (b, hkv, tk, dh)))

    def forbid(t):
        with torch._C.DisableTorchFunctionSubclass():
            stored = t.untyped_storage().nbytes() >= t.numel() * t.element_size()  # not a broadcast view
        copy = t.dim() >= 3 and tuple(t.shape[-3:]) in ((hq, tk, dh), (hq, dh, tk))
        return "a copy of the keys or values for every query head" if hq != hkv and copy and stored else ""
    return watched(q, k, v, forbid=forbid)


def _gqa_probes() -> list[Probe]:
    g = torch.Generator().manual_seed(8)
    return [Probe(_no_copy(g, 1, 6, 2, 3, 5, 4), "Hq = 6, Hkv = 2 (groups of 3), Tq = 3, Tk = 5, Dh = 4"),
            Probe(_no_copy(g, 2, 8, 4, 2, 7, 3), "B = 2, Hq = 8, Hkv = 4 (groups of 2)"),
            Probe(_no_copy(g, 1, 4, 1, 5, 3, 2), "multi-query: Hq = 4, Hkv = 1"),
            Probe(_no_copy(g, 2, 3, 3, 4, 6, 5), "Hq = Hkv = 3: ordinary multi-head attention"),
            Probe(_no_copy(g, 1, 6, 3, 2, 9, 4), "Hq = 6, Hkv = 3 (groups of 2)")]


check_grouped_attention = Exercise(
    "Exercise 5", reference=lambda q, k, v: gqa(*plain(q, k, v)), probes=_gqa_probes,
    correct="Query heads grouped by their key/value head, k and v shared by broadcasting: GQA without "
            "a copy of the cache.",
    mistakes=[
        Mistake("You copy k or v to one head per query head (repeat_interleave, expand and reshape, indexing): let "
                "broadcasting share each key/value head.", raises=Refused, match="copy",
                example=lambda q, k, v: gqa(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1))),
        Mistake("You call a ready-made attention (torch's scaled_dot_product_attention, with or without enable_gqa, or "
                "attnlib's): write it yourself.", raises=Refused, match="ready-made",
                example=lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
        Mistake("Your query head h reads key/value head h % Hkv: consecutive query heads share one, so split Hq as "
                "(Hkv, g).", variant(gqa, tiled=(True, True))),
        Mistake("You did not divide the scores by sqrt(Dh), the width of q and k.", variant(gqa, power=0)),
        Mistake("You divided the scores by Dh itself: the scale is sqrt(Dh).", variant(gqa, power=1)),
        Mistake("Your softmax ran over the queries: each query's weights must sum to 1.", variant(gqa, softmax_dim=-2)),
    ])
