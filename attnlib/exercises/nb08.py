"""Exercises of notebook 08 (efficient attention); the probes of Exercises 3 and 5 refuse what each forbids."""

from __future__ import annotations

import math
import re

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, near, plain, variant, watched

__all__ = ["check_blockwise_attention", "check_cache_causal_mask", "check_grouped_attention",
           "check_online_update", "check_weights_memory"]

BYTES = 8 * 8192 * 8192 * 4  # the float32 weights (B, H, T, T) = (1, 8, 8192, 8192)

check_weights_memory = Exercise(
    "Exercise 1", expected=BYTES / 2**20, rtol=0.01, read=as_number,
    correct="2 GiB for one layer's weights, 16 MiB for Q: the T x T matrix is what grows.",
    mistakes=[
        Mistake("{got} MiB counts numbers, not bytes: each float32 takes 4 bytes.", BYTES / 4 / 2**20),
        Mistake("{got} MiB is one head's (T, T) weights: each head has its own.", BYTES / 8 / 2**20),
        Mistake("{got} MiB counts float64 (8 bytes) or two T x T tensors: count float32 weights.", BYTES * 2 / 2**20),
        Mistake("{got} MiB counts 2 bytes per number, float16's; float32 takes 4.", BYTES / 2 / 2**20),
        Mistake("{got} is in bits: the question asks MiB of bytes, 8 bits each.", BYTES * 8 / 2**20),
        Mistake("{got} is the number of bytes: a MiB is 2**20 = 1048576 bytes.", float(BYTES)),
        Mistake(lambda got: f"{got:.6g} is in MB of 10**6 bytes: a MiB is 2**20 = 1048576 bytes.", BYTES / 1e6),
        Mistake("{got} is in GiB: the question asks MiB, and a GiB is 1024 MiB.", BYTES / 2**30),
        Mistake("{got} is in KiB: the question asks MiB, and a MiB is 1024 KiB.", BYTES / 2**10),
        Mistake("{got} MiB counts T numbers per head: the weights are T x T per head.", 8 * 8192 * 4 / 2**20),
        Mistake("Write the number alone, without its unit and quotes: it is in MiB.", raw=True, example="2048 MiB",
                when=lambda a: isinstance(a, str) and re.fullmatch(r"\s*[\d.e+]+\s*[A-Za-z]+\s*", a)),
        Mistake("{got} MiB is the size of Q, (B, H, T, Dh): the weights are (B, H, T, T).", 8 * 8192 * 64 * 4 / 2**20),
        Mistake("{got} is close, but rounded: count again, a MiB being 2**20 bytes.", example=2000,
                when=near(BYTES / 2**20, rel=0.05)),
    ])


def online_update(m, s, x, *, rescale=1, shift="new", keep=torch.maximum,
                  term=lambda x, m_new: torch.exp(x - m_new)):
    """Exercise 2's reference; ``rescale`` (the exponent's sign), ``shift``, ``keep``, ``term`` switch on a mistake."""
    m_new = keep(m, x)
    return m_new, s * torch.exp(rescale * (m - m_new)) + term(x, {"new": m_new, "old": m}[shift])


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
        Mistake("Your m_new is x even when x is smaller (m = 3, x = 2): the maximum then stays m.",
                lambda m, s, x: (x, s * torch.exp(m - x) + 1.0)),
        Mistake("Your s_new is the log of the running sum: s is the sum itself.",
                lambda *a: (online_update(*a)[0], online_update(*a)[1].log())),
        Mistake("You return the new score's weight: s_new is the running sum itself.", lambda m, s, x: (
                online_update(m, s, x)[0], torch.exp(x - torch.maximum(m, x)) / online_update(m, s, x)[1])),
        Mistake("You return (s_new, m_new): the maximum comes first.", lambda *a: online_update(*a)[::-1]),
        Mistake("Your m_new is the smaller of m and x: keep the larger.", variant(online_update, keep=torch.minimum)),
        Mistake("Your s_new adds x itself, not its exponential term.", variant(online_update, term=lambda x, m: x)),
        Mistake("Your s_new adds 1 whatever x is: x's term is 1 only when x is the new maximum.",
                variant(online_update, term=lambda x, m: 1.0)),
        Mistake("When x is not larger than m (m = 3, x = 2) your s_new stays s: x's term must still be added.",
                variant(online_update, term=lambda x, m: (x == m).to(x.dtype))),
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


def blockwise(query, key, value, block_size, *, rescale=("s", "acc"), sign=1, raw_exp=False, keep_max=True,
              scaled=1, last_block=True, divide=True, tile_max=lambda tile: tile.amax(dim=-1, keepdim=True)):
    """Exercise 3's loop; each keyword switches on one classic mistake (``scaled``: how many times by sqrt(Dh))."""
    q = query / math.sqrt(query.shape[-1]) ** scaled
    m = q.new_full((*q.shape[:-1], 1), -math.inf)  # (..., Tq, 1)
    s, acc = q.new_zeros(*q.shape[:-1], 1), q.new_zeros(*q.shape[:-1], value.shape[-1])  # (..., Tq, 1), (..., Tq, Ev)
    end = key.shape[-2] if last_block else key.shape[-2] // block_size * block_size
    for start in range(0, end, block_size):
        tile = q @ key[..., start:start + block_size, :].mT  # (..., Tq, bk)
        m_new = torch.maximum(m, tile_max(tile)) if not raw_exp else torch.zeros_like(m)
        factor = torch.exp(sign * (m - m_new)) if not raw_exp else 1.0
        p = torch.exp(tile - m_new)  # (..., Tq, bk)
        s = s * (factor if "s" in rescale else 1.0) + p.sum(dim=-1, keepdim=True)
        acc = acc * (factor if "acc" in rescale else 1.0) + p @ value[..., start:start + block_size, :]
        m = m_new if keep_max else m
    return acc / s if divide else acc


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


def _sizes(error) -> set[int]:
    """The sizes a broadcasting error names: {5, 4} for "The size of tensor a (5) must match ... b (4)"."""
    return {int(n) for n in re.findall(r"\((\d+)\)", str(error))}


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
        Mistake("Your output is NaN: with m = -inf at first, only exp(m - m_new) and exp(tile - m_new) stay finite.",
                when=lambda got: bool(torch.isnan(got).all()), example=variant(blockwise, sign=-1)),
        Mistake("Your maximum is taken over the whole tile: keep one running maximum per query, over its keys.",
                variant(blockwise, tile_max=lambda t: t.amax(dim=(-2, -1), keepdim=True))),
        Mistake("Your m never changes: set m = m_new at the end of each block.", variant(blockwise, keep_max=False)),
        Mistake("On scores up to 120 in float32 an exp overflowed: subtract the running maximum, max(m, tile max).",
                example=variant(blockwise, raw_exp=True), when=lambda got, args: args[1].dtype == torch.float32
                and bool(args[1].abs().amax() > 88) and not bool(torch.isfinite(got).all())),
        Mistake("Your tile uses query, not the scaled q = query / sqrt(Dh).", variant(blockwise, scaled=0)),
        Mistake("Your tile divides by sqrt(Dh) again: the stub's q is already scaled.", variant(blockwise, scaled=2)),
        Mistake("Your loop drops the last block when it is shorter: range(0, Tk, block_size) reaches it.",
                variant(blockwise, last_block=False)),
        Mistake("Your function counts the axes from the front (shape[2], [:, :, ...]): the keys are axis -2.",
                raises=IndexError, example=lambda q, k, v, b: blockwise(q, k[:, :, :], v, b)),  # fails below 3 axes
        Mistake("You return acc itself: divide by s, the sum of the weights.", variant(blockwise, divide=False)),
        Mistake("You normalise each block on its own (a softmax per block): divide by s once, at the end.",
                lambda q, k, v, b: torch.stack([torch.softmax(q @ k[..., i:i + b, :].mT / math.sqrt(q.shape[-1]), -1)
                                                @ v[..., i:i + b, :] for i in range(0, k.shape[-2], b)]).mean(0)),
        Mistake("Your maximum runs over the queries (dim=-2), one per key: take one per query, over the tile's keys.",
                raises=RuntimeError, match="size of tensor", example=variant(blockwise, tile_max=lambda t: t.amax(
                    dim=-2, keepdim=True)), when=lambda err, args: _sizes(err) == {args[3], args[2].shape[-1]}),
        Mistake("Your value block is sliced along its last axis (Ev): slice the key axis, -2.", raises=RuntimeError,
                match="cannot be multiplied", when=lambda err, args: re.search(r"and (\d+)x", str(err))[1] == str(
                    args[2].shape[-2]), example=lambda q, k, v, b: torch.exp(q @ k[..., :b, :].mT) @ v[..., :b]),
        Mistake("Your tile maximum lost its last axis (amax without keepdim=True): keep it, as m and s do.",
                raises=RuntimeError, match="size of tensor", example=variant(blockwise, tile_max=lambda t: t.amax(-1)),
                when=lambda err, a: _sizes(err) in ({a[0].shape[-2], a[2].shape[-1]}, {a[0].shape[-2], a[3]})),
    ])


def cache_causal_mask(q_len: int, kv_len: int, *, shift: int = 0, sign: int = 1) -> torch.Tensor:
    """Exercise 4's mask: query i sees keys 0 to kv_len - q_len + i (``shift``, ``sign`` move the diagonal)."""
    return torch.ones(q_len, kv_len).tril(diagonal=sign * (kv_len - q_len) + shift).bool()


check_cache_causal_mask = Exercise(
    "Exercise 4", reference=cache_causal_mask, probes=[(3, 8), (1, 4), (4, 4), (2, 7), (5, 6)],
    refuse=("attnlib.masks",),  # attnlib's causal_mask(q_len, kv_len, align="bottom_right") is the answer
    correct="query i is token kv_len - q_len + i: it sees keys 0 to kv_len - q_len + i, the bottom-right diagonal.",
    mistakes=[
        Mistake(lambda got, args: f"With {args[1] - args[0]} tokens cached, your first new query sees key 0 only "
                "(top-left, is_causal=True): shift the diagonal by kv_len - q_len.",
                lambda q, kv: torch.ones(q, kv).tril().bool()),
        Mistake("Your mask is True where a query is blocked: True = may attend.", lambda *a: ~cache_causal_mask(*a)),
        Mistake("Each of your new queries misses its own key: the diagonal is one key too far left.",
                variant(cache_causal_mask, shift=-1)),
        Mistake("Each of your new queries sees one key too many, the next token's: the diagonal is one too far right.",
                variant(cache_causal_mask, shift=1)),
        Mistake("Your diagonal is shifted by 5 whatever the lengths: read kv_len - q_len from the arguments.",
                when=lambda got, args: args[1] - args[0] != 5 and torch.equal(got, torch.ones(*args).tril(5).bool()),
                example=lambda q_len, kv_len: torch.ones(q_len, kv_len).tril(5).bool()),
        Mistake(lambda got: f"Your mask has the right pattern but dtype {str(got.dtype).removeprefix('torch.')}: "
                "return booleans.", example=lambda *a: cache_causal_mask(*a).float(), when=lambda got, args: got.dtype
                != torch.bool and any(torch.equal(m, cache_causal_mask(*args)) for m in (got != 0, got == 0))),
        Mistake("Your mask is (kv_len, q_len): rows are the queries.", lambda *a: cache_causal_mask(*a).T),
        Mistake("Your triangle points the wrong way: query i sees the keys on and below the shifted diagonal.",
                lambda q_len, kv_len: torch.ones(q_len, kv_len, dtype=torch.bool).triu(kv_len - q_len)),
        Mistake("Your new queries do not see the cached tokens, though they come after all of them.",
                lambda q, kv: torch.cat([torch.zeros(q, kv - q), torch.ones(q, q).tril()], 1).bool()),
        Mistake("Your diagonal is shifted by q_len: the cached tokens number kv_len - q_len.",
                lambda q_len, kv_len: torch.ones(q_len, kv_len).tril(q_len).bool()),
        Mistake("Your diagonal is shifted left, by q_len - kv_len: the shift goes the other way.",
                variant(cache_causal_mask, sign=-1)),
        Mistake("Your mask lets every new query see every key, the later new tokens too: only a single new query can.",
                lambda q_len, kv_len: torch.ones(q_len, kv_len, dtype=torch.bool)),
        Mistake(lambda got, args: f"Your mask is {tuple(got.shape)} for q_len = {args[0]}, kv_len = {args[1]}: size "
                "it from the arguments.", when=lambda got, args: got.dim() == 2 and tuple(got.shape) not in (
                    args, args[::-1]), example=lambda q_len, kv_len: torch.ones(3, 8).tril(5).bool()),
    ])


def gqa(q, k, v, *, tiled=(False, False), power=0.5, width=None, softmax_dim=-1, causal=False):
    """Exercise 5's reference, q (B, Hq, Tq, Dh), k, v (B, Hkv, Tk, Dh); ``tiled``: heads split, merged as (g, Hkv)."""
    (b, hq, tq, dh), hkv = q.shape, k.shape[1]
    groups = q.reshape(b, hq // hkv, hkv, tq, dh).transpose(1, 2) if tiled[0] else q.reshape(b, hkv, -1, tq, dh)
    scores = groups @ k.unsqueeze(2).mT / (width or dh) ** power  # (B, Hkv, g, Tq, Tk)
    if causal:
        scores = scores.masked_fill(~torch.ones(tq, k.shape[2], dtype=torch.bool).tril(), -math.inf)
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
        Mistake("Your heads come back out of order: merge the axes (Hkv, g) in the order you split them.",
                variant(gqa, tiled=(False, True))),
        Mistake("You did not divide the scores by sqrt(Dh), the width of q and k.", variant(gqa, power=0)),
        Mistake("You divided the scores by Dh itself: the scale is sqrt(Dh).", variant(gqa, power=1)),
        Mistake("You scale by sqrt(Tk), the number of keys, not by sqrt(Dh), the width of q and k.",
                lambda q, k, v: gqa(q, k, v, width=k.shape[2])),
        Mistake("Your scale is sqrt(64) whatever the probe: read Dh from q's shape.", variant(gqa, width=64)),
        Mistake("Your scores are masked, a causal mask by habit: this exercise has none.", variant(gqa, causal=True)),
        Mistake("Your softmax ran over the queries: each query's weights must sum to 1.", variant(gqa, softmax_dim=-2)),
        Mistake(lambda got: f"Your output has shape {tuple(got.shape)}: merge the group axes into (B, Hq, Tq, Dh).",
                when=lambda got: got.dim() == 5,
                example=lambda q, k, v: gqa(q, k, v).reshape(q.shape[0], k.shape[1], -1, *q.shape[2:])),
        Mistake("q has Hq heads and k has Hkv: give the query heads a group axis, so that broadcasting pairs them.",
                raises=RuntimeError, match="size of tensor a", when=lambda err, args: _sizes(err) == {
                    args[0].shape[1], args[1].shape[1]}, example=lambda q, k, v: torch.softmax(q @ k.mT, -1) @ v),
        Mistake("Your reshape does not fit q's values: read Hkv from k.shape[1] and the group size from the shapes.",
                raises=RuntimeError, match="invalid for input of size",  # groups of 3: right on the first probe only
                example=lambda q, k, v: gqa(q.reshape(len(q), -1, 3, *q.shape[2:]).flatten(1, 2), k, v)),
    ])
