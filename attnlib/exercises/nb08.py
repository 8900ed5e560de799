"""Exercises of notebook 08 (efficient attention). The probes of Exercises 3 and 5 refuse a ready-made attention
and what each exercise forbids: the whole (Tq, Tk) matrix of scores, a copy of k or v for every query head."""

from __future__ import annotations

import math
import re

import torch

from . import Exercise, Mistake, Probe, Refused, as_number, near, plain, variant, watched

__all__ = ["check_blockwise_attention", "check_cache_causal_mask", "check_grouped_attention",
           "check_online_update", "check_weights_memory"]

# --- Exercise 1: the MiB of the float32 weights (B, H, T, T) = (1, 8, 8192, 8192) ------------------------
BYTES = 8 * 8192 * 8192 * 4

check_weights_memory = Exercise(
    "Exercise 1", expected=BYTES / 2**20, rtol=0.01, read=as_number,
    correct="2 GiB for one layer's weights, 16 MiB for Q: the T x T matrix is what grows.",
    mistakes=[
        Mistake("{got} MiB counts numbers, not bytes: each float32 takes 4 bytes.", answer=BYTES / 4 / 2**20),
        Mistake("{got} MiB is one head's (T, T) weights: each head has its own.", answer=BYTES / 8 / 2**20),
        Mistake("{got} MiB is twice the answer: 8 bytes a number (float64's), or two T x T tensors (scores and "
                "weights). The question asks for one float32 weights tensor.", answer=BYTES * 2 / 2**20),
        Mistake("{got} MiB counts 2 bytes per number, float16's; float32 takes 4.", answer=BYTES / 2 / 2**20),
        Mistake("{got} is in bits: the question asks MiB of bytes, 8 bits each.", answer=BYTES * 8 / 2**20),
        Mistake("{got} is the number of bytes: a MiB is 2**20 = 1048576 bytes.", answer=float(BYTES)),
        Mistake(lambda got: f"{got:.6g} is in MB of 10**6 bytes: a MiB is 2**20 = 1048576 bytes.", answer=BYTES / 1e6),
        Mistake("{got} is in GiB: the question asks MiB, and a GiB is 1024 MiB.", answer=BYTES / 2**30),
        Mistake("{got} is in KiB: the question asks MiB, and a MiB is 1024 KiB.", answer=BYTES / 2**10),
        Mistake("{got} MiB counts T numbers per head: the weights are T x T per head.", answer=8 * 8192 * 4 / 2**20),
        Mistake("Write the number alone, without its unit and without quotes: weights_mib is already in MiB.",
                raw=True, example="2048 MiB",
                when=lambda a: isinstance(a, str) and bool(re.fullmatch(r"\s*[\d.e+]+\s*[A-Za-z]+\s*", a))),
        Mistake("{got} MiB is the size of Q (B, H, T, Dh) with Dh = 64, which grows like T: the weights are "
                "(B, H, T, T), their last axis T, not Dh.", answer=8 * 8192 * 64 * 4 / 2**20),
        Mistake("{got} is close, but rounded: the count comes out as a whole number of MiB, nothing to round. Count "
                "again without rounding, a MiB being 2**20 bytes (not 10**6).", when=near(BYTES / 2**20, rel=0.05),
                example=2000),
    ])


# --- Exercise 2: one step of the online softmax, online_update(m, s, x) -> (m_new, s_new) --------------------
def online_update(m, s, x, *, rescale=1, shift="new", keep=torch.maximum,
                  term=lambda x, m_new: torch.exp(x - m_new)):
    """The reference; ``rescale`` (1, 0 or -1: the exponent's sign), ``shift``, ``keep`` (which of m and x) and
    ``term`` (the new score's term) switch on a mistake."""
    m_new = keep(m, x)
    return m_new, s * torch.exp(rescale * (m - m_new)) + term(x, {"new": m_new, "old": m}[shift])


def _raw_exp(got, args) -> bool:
    """The new term is exp(x) itself, the old sum rescaled or not: the maximum is never subtracted."""
    m, s, x = (float(a) for a in args)
    raw = (s + math.exp(x), s * math.exp(m - max(m, x)) + math.exp(x))  # the old sum as it was, or rescaled
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
                  "overflows float32 above exp(88.7). Take exp only of m - m_new and x - m_new, both at most 0.")],
    correct="max first, then rescale what was summed under the old maximum by exp(m - m_new).",
    mistakes=[
        Mistake("Your function returns one value: return two values, (m_new, s_new), as the exercise asks.",
                when=lambda got: isinstance(got, torch.Tensor), example=lambda *a: online_update(*a)[1]),
        Mistake("On the first score (m = -inf, s = 0) your s_new is NaN: a term exp(x - m) is inf there, and inf times "
                "the factor exp(m - m_new) = 0 is NaN. Shift every term by m_new, never by the old m.",
                when=lambda got, args: math.isinf(args[0]) and math.isnan(as_number(got[1])),
                example=lambda m, s, x: (m_new := torch.maximum(m, x), (s + torch.exp(x - m)) * torch.exp(m - m_new))),
        Mistake("When a larger score arrives (m = 1, x = 3) your s_new adds to s as it was, but s holds exp(score - 1) "
                "and the new terms exp(score - 3): rescale the old s first.", answer=variant(online_update, rescale=0)),
        Mistake("Your rescaling points the wrong way: the old terms exp(score - m) must shrink to exp(score - m_new), "
                "so multiply s by a factor at most 1, exp(m - m_new).", answer=variant(online_update, rescale=-1)),
        Mistake("Your running sum takes exp(x) of the raw score, never subtracting the maximum (section 2 warns: exp "
                "overflows). s keeps exp(score - m): add exp(x - m_new).", when=_raw_exp,
                example=lambda m, s, x: (torch.maximum(m, x), s * torch.exp(m - torch.maximum(m, x)) + torch.exp(x))),
        Mistake("Your new term is exp(x - m), shifted by the old maximum: every term of the running sum must be "
                "shifted by the same, new maximum.", answer=variant(online_update, shift="old")),
        Mistake("Your m_new is x itself: when the new score is smaller than the running maximum (m = 3, x = 2) the "
                "maximum stays m.", answer=lambda m, s, x: (x, s * torch.exp(m - x) + 1.0)),
        Mistake("Your s_new is the log of the running sum: s is the sum of the terms exp(score - m) itself, no log.",
                answer=lambda *a: (online_update(*a)[0], online_update(*a)[1].log())),
        Mistake("You return the new score's weight, its term over the sum: s_new is the running sum itself.",
                answer=lambda m, s, x: (online_update(m, s, x)[0], torch.exp(x - torch.maximum(m, x))
                                        / online_update(m, s, x)[1])),
        Mistake("You return (s_new, m_new): the maximum comes first.", answer=lambda *a: online_update(*a)[::-1]),
        Mistake("Your m_new is the smaller of m and x: the running maximum keeps the larger, so that every term "
                "exp(score - m_new) stays at most 1.", answer=variant(online_update, keep=torch.minimum)),
        Mistake("Your s_new adds the score x itself, but s is a sum of exponentials, exp(score - m): add x's term "
                "in that form, shifted by the new maximum.", answer=variant(online_update, term=lambda x, m: x)),
        Mistake("Your s_new adds 1 whatever x is: x's term exp(x - m_new) is 1 only when x is the new maximum; a "
                "smaller score (m = 3, x = 2) adds less.", answer=variant(online_update, term=lambda x, m: 1.0)),
        Mistake("When x is not larger than m (m = 3, x = 2) your s_new stays s: the maximum stays, but x's own "
                "term must still be added to the sum.",
                answer=variant(online_update, term=lambda x, m: (x == m).to(x.dtype))),
    ])


# --- Exercise 3: the blockwise loop, blockwise_attention(query, key, value, block_size) ----------------------
def _no_whole_matrix(block_size: int, *tensors: torch.Tensor) -> tuple:
    """Probe arguments whose (Tq, Tk) matrix may not be built (when Tk > block_size), nor a block of queries against
    every key, (rows, Tk) with rows neither Dh nor Ev (k.mT, v.mT): Tq, Tk, Dh, Ev all differ."""
    (tq, dh), tk, ev = tensors[0].shape[-2:], tensors[1].shape[-2], tensors[2].shape[-1]

    def forbid(t):
        shape = tuple(t.shape[-2:]) if tk > block_size else ()  # one block holds every key: nothing to forbid
        return "the whole matrix of scores" if shape in ((tq, tk), (tk, tq)) else \
            "a block of queries against every key" if len(shape) == 2 and shape[1] == tk and shape[0] not in (dh, ev) \
            else ""
    return (*watched(*tensors, forbid=forbid), block_size)


def blockwise(query, key, value, block_size, *, rescale=("s", "acc"), sign=1, raw_exp=False, keep_max=True,
              scaled=1, last_block=True, divide=True, tile_max=lambda tile: tile.amax(dim=-1, keepdim=True)):
    """The reference loop; each keyword switches on one classic mistake (``scaled``: how many times by sqrt(Dh))."""
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


check_blockwise_attention = Exercise(
    "Exercise 3", reference=_reference, probes=_blockwise_probes, solution=blockwise,
    correct="s and acc rescaled by the same exp(m - m_new) at every block: exact attention, one tile at a time.",
    mistakes=[
        Mistake("On (B, H, T, D) inputs your tiles hold every key: your slice cuts the first axis (key[start:stop]), "
                "the key axis only for 2-D inputs. Blocks run along the key axis, -2, whatever the leading axes.",
                raises=Refused, match="whole", when=lambda err, args: args[1].dim() > 2,
                example=lambda q, k, v, b: blockwise(q, k, v, b) if q.dim() == 2 else q @ k.mT),
        Mistake("Your tiles span every key (a block of queries against all keys): block the keys instead, and keep "
                "the running m, s and acc of each query across the blocks.", raises=Refused, match="every key",
                example=lambda q, k, v, b: torch.cat([torch.softmax(q[..., i:i + b, :] @ k.mT, -1) @ v
                                                      for i in range(0, q.shape[-2], b)], -2)),
        Mistake("Your function builds the whole (Tq, Tk) matrix of scores, or calls a function that does: the exercise "
                "is to never store it. Loop over blocks of keys, one (Tq, block) tile at a time.", raises=Refused,
                match="whole", example=lambda q, k, v, b: torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1) @ v),
        Mistake("Your function calls a ready-made attention (torch's scaled_dot_product_attention, attnlib's "
                "flash_attention): write the loop over blocks of keys yourself.", raises=Refused, match="ready-made",
                example=lambda q, k, v, b: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
        Mistake("Your acc is not rescaled when the maximum rises (5 in block 2 of section 2's row): like s, multiply "
                "its exp(score - m_old) terms by exp(m_old - m_new).", answer=variant(blockwise, rescale=("s",))),
        Mistake("Your s is not rescaled when a block raises the maximum, though acc is: both hold exp(score - m_old) "
                "terms, so multiply both by exp(m_old - m_new).", answer=variant(blockwise, rescale=("acc",))),
        Mistake("Neither s nor acc is rescaled when the maximum rises: multiply what was summed under the old maximum "
                "by exp(m_old - m_new) before adding the block's terms.", answer=variant(blockwise, rescale=())),
        Mistake("Your output is NaN everywhere: on the first block m = -inf, so rescale by exp(m - m_new), 0 there "
                "(exp(m_new - m) is inf), and make the block's terms exp(tile - m_new) (exp(tile - m) is inf).",
                when=lambda got: bool(torch.isnan(got).all()), example=variant(blockwise, sign=-1)),
        Mistake("Your maximum is taken over the whole tile, all queries together: a query with large scores then "
                "pushes another's exp(tile - m_new) down to 0 in float32. Keep one running maximum per query, over "
                "the keys of the tile only.",
                answer=variant(blockwise, tile_max=lambda t: t.amax(dim=(-2, -1), keepdim=True))),
        Mistake("Your m never changes: after each block the running maximum must become m_new (m = m_new at the end of "
                "the loop), or the next block uses the wrong factor.", answer=variant(blockwise, keep_max=False)),
        Mistake("On scores up to 120 in float32 your output is not finite: an exp overflowed (inf above exp(88.7)). "
                "Subtract the running maximum max(m, tile max), never a block's own maximum alone: then every exp, "
                "of tile - m_new and of m - m_new, takes at most 0.", example=variant(blockwise, raw_exp=True),
                when=lambda got, args: args[1].dtype == torch.float32 and bool(args[1].abs().amax() > 88)
                and not bool(torch.isfinite(got).all())),
        Mistake("Your tile uses query, not the scaled q = query / sqrt(Dh).", answer=variant(blockwise, scaled=0)),
        Mistake("Your tile divides by sqrt(Dh) again: the stub's q is already query / sqrt(Dh), so your scores are "
                "scaled twice.", answer=variant(blockwise, scaled=2)),
        Mistake("Your loop drops the last block when Tk is not a multiple of block_size: range(0, Tk, block_size) "
                "reaches it (a slice past the end is just shorter).", answer=variant(blockwise, last_block=False)),
        Mistake("Your function counts the axes from the front (shape[2], [:, :, ...]): the probes have 2, 3 and 4 "
                "axes. Count from the end: the keys are axis -2 (key.shape[-2], key[..., start:stop, :]).",
                raises=IndexError, example=lambda q, k, v, b: blockwise(q, k[:, :, :], v, b)),  # fails below 3 axes
        Mistake("You return acc itself: divide by s, the sum of the weights.", answer=variant(blockwise, divide=False)),
        Mistake("You normalise each block on its own (a softmax per block) and then combine the blocks: keep the "
                "unnormalised s and acc across the blocks and divide once, at the end.",
                answer=lambda q, k, v, b: torch.stack([torch.softmax(q @ k[..., i:i + b, :].mT / math.sqrt(
                    q.shape[-1]), -1) @ v[..., i:i + b, :] for i in range(0, k.shape[-2], b)]).mean(0)),
        Mistake("Your maximum runs over the queries (dim=-2), one per key: take one per query, over the tile's keys.",
                raises=RuntimeError, match="size of tensor", example=variant(blockwise, tile_max=lambda t: t.amax(
                    dim=-2, keepdim=True)), when=lambda err, args: {int(n) for n in re.findall(r"\((\d+)\)", str(err))}
                == {args[3], args[2].shape[-1]}),  # the block against Ev
        Mistake("Your value block keeps every key: its slice runs along value's last axis (Ev). Blocks run along the "
                "key axis, -2, for value as for key.", raises=RuntimeError, match="cannot be multiplied",
                when=lambda err, args: re.search(r"and (\d+)x", str(err))[1] == str(args[2].shape[-2]),
                example=lambda q, k, v, b: torch.exp(q @ k[..., :b, :].mT) @ v[..., :b]),
        Mistake("Your tile maximum has lost its last axis (amax without keepdim=True): (..., Tq) against m's (..., Tq, "
                "1) broadcasts to (..., Tq, Tq), which the tile and acc cannot take. Keep that axis, as m and s have "
                "it.",
                raises=RuntimeError, match="size of tensor", example=variant(blockwise, tile_max=lambda t: t.amax(-1)),
                when=lambda err, args: {int(n) for n in re.findall(r"\((\d+)\)", str(err))}
                in ({args[0].shape[-2], args[2].shape[-1]}, {args[0].shape[-2], args[3]})),  # Tq against Ev or block
    ])


# --- Exercise 4: the causal mask of q_len new queries over kv_len cached keys ---------------------------------
def cache_causal_mask(q_len: int, kv_len: int, *, shift: int = 0, sign: int = 1) -> torch.Tensor:
    """(Tq, Tk): query i sees keys 0 to kv_len - q_len + i, the bottom-right diagonal (``shift``, ``sign`` move it)."""
    return torch.ones(q_len, kv_len).tril(diagonal=sign * (kv_len - q_len) + shift).bool()


def _right_but_not_bool(got, args) -> bool:
    want = cache_causal_mask(*args)  # torch.equal is False for a mask of another shape
    return got.dtype != torch.bool and (torch.equal(got != 0, want) or torch.equal(got == 0, want))


check_cache_causal_mask = Exercise(
    "Exercise 4", reference=cache_causal_mask, probes=[(3, 8), (1, 4), (4, 4), (2, 7), (5, 6)],
    refuse=("attnlib.masks",),  # attnlib's causal_mask(q_len, kv_len, align="bottom_right") is the answer
    correct="query i is token kv_len - q_len + i: it sees keys 0 to kv_len - q_len + i, the bottom-right diagonal.",
    mistakes=[
        Mistake(lambda got, args: f"With {args[1] - args[0]} tokens cached, your first new query sees key 0 only: "
                "the top-left diagonal (is_causal=True), right only with no cache. The new queries follow the cached "
                "tokens: shift the diagonal by kv_len - q_len.", answer=lambda q, kv: torch.ones(q, kv).tril().bool()),
        Mistake("Your mask is True exactly where a query may NOT attend (True = blocked, nn.MultiheadAttention's "
                "convention). Here True = may attend.", answer=lambda q_len, kv_len: ~cache_causal_mask(q_len, kv_len)),
        Mistake("Each of your new queries misses its own key (the diagonal is one key too far left): a query "
                "attends to its own token.", answer=variant(cache_causal_mask, shift=-1)),
        Mistake("Each of your new queries sees one key too many, the token after it: the diagonal is one key too "
                "far right.", answer=variant(cache_causal_mask, shift=1)),
        Mistake("Your diagonal is shifted by 5 whatever the lengths: the number of cached tokens is kv_len - q_len, "
                "read from the arguments.", example=lambda q_len, kv_len: torch.ones(q_len, kv_len).tril(5).bool(),
                when=lambda got, args: args[1] - args[0] != 5 and torch.equal(got, torch.ones(*args).tril(5).bool())),
        Mistake(lambda got: f"Your mask has the right pattern but dtype {str(got.dtype).removeprefix('torch.')}: "
                "return booleans, True = may attend.", when=_right_but_not_bool,
                example=lambda q_len, kv_len: cache_causal_mask(q_len, kv_len).float()),
        Mistake("Your mask is (kv_len, q_len): rows are the queries, so it is (q_len, kv_len).",
                answer=lambda q_len, kv_len: cache_causal_mask(q_len, kv_len).T),
        Mistake("Your triangle points the wrong way: a new query sees the keys after its own token and not the ones "
                "before. Query i sees the keys on and below the shifted diagonal.",
                answer=lambda q_len, kv_len: torch.ones(q_len, kv_len, dtype=torch.bool).triu(kv_len - q_len)),
        Mistake("Your new queries do not see the cached tokens: a new token comes after every cached one and sees "
                "all of them.", answer=lambda q_len, kv_len: torch.cat([torch.zeros(q_len, kv_len - q_len),
                                                                         torch.ones(q_len, q_len).tril()], 1).bool()),
        Mistake("Your diagonal is shifted by q_len: the cached tokens number kv_len - q_len.",
                answer=lambda q_len, kv_len: torch.ones(q_len, kv_len).tril(q_len).bool()),
        Mistake("Your diagonal is shifted left, by q_len - kv_len: the new queries come after the cached tokens and "
                "see every one of them, so the shift goes the other way.", answer=variant(cache_causal_mask, sign=-1)),
        Mistake("Your mask lets every new query see every key, also the new tokens after its own: only a single "
                "new query needs no mask.", answer=lambda q_len, kv_len: torch.ones(q_len, kv_len, dtype=torch.bool)),
        Mistake(lambda got, args: f"Your mask is {tuple(got.shape)} for q_len = {args[0]}, kv_len = {args[1]}: size "
                "it from the two arguments, one row per new query, one column per key (cached or new).",
                when=lambda got, args: got.dim() == 2 and tuple(got.shape) not in (args, args[::-1]),
                example=lambda q_len, kv_len: torch.ones(3, 8).tril(5).bool()),
    ])


# --- Exercise 5: grouped_query_attention(q, k, v) without a copy of k or v ----------------------------------
def gqa(q, k, v, *, tiled=(False, False), power=0.5, width=None, softmax_dim=-1, causal=False):
    """The reference: q (B, Hq, Tq, Dh), k and v (B, Hkv, Tk, Dh); each keyword switches on a mistake (``tiled``:
    the heads split, and merged back, as (g, Hkv); the scores divided by ``width`` (Dh) ** ``power``)."""
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
        Mistake("Your function copies k or v to one head per query head (repeat_interleave, repeat, expand then "
                "reshape, or indexing with a list of heads), a full-size copy of the cache at every step: give the "
                "query heads a group axis and let broadcasting share each key/value head.", raises=Refused,
                match="copy", example=lambda q, k, v: gqa(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1))),
        Mistake("You call a ready-made attention (torch's scaled_dot_product_attention, with or without enable_gqa, or "
                "attnlib's): write the grouping and the attention yourself.", raises=Refused, match="ready-made",
                example=lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
        Mistake("Your query head h reads key/value head h % Hkv (the heads dealt out in turn: 0, 1, 0, 1, ...), "
                "but in torch's enable_gqa and Ainslie et al.'s groups consecutive query heads share one key/value "
                "head: split Hq into (Hkv, g), the key/value head first.", answer=variant(gqa, tiled=(True, True))),
        Mistake("Your heads come back out of order: you split Hq as (Hkv, g), but the transpose before merging makes "
                "it (g, Hkv). Undo step 1 exactly: merge the same two axes, in the same order.",
                answer=variant(gqa, tiled=(False, True))),
        Mistake("You did not divide the scores by sqrt(Dh), the width of q and k.", answer=variant(gqa, power=0)),
        Mistake("You divided the scores by Dh itself: the scale is sqrt(Dh), which keeps their variance near 1 "
                "whatever the width.", answer=variant(gqa, power=1)),
        Mistake("You scale by sqrt(Tk), the number of keys (k.shape[2]), not by sqrt(Dh), the width of q and k.",
                answer=lambda q, k, v: gqa(q, k, v, width=k.shape[2])),
        Mistake("Your scale is sqrt(64) whatever the probe's Dh, the notebook's own Dh: read the width from q's "
                "shape.", answer=variant(gqa, width=64)),
        Mistake("Your scores are masked, a causal mask by habit: this exercise has no mask, every query sees every "
                "key.", answer=variant(gqa, causal=True)),
        Mistake("Your softmax ran over the queries: each query's weights over the keys (the last axis) must sum "
                "to 1.", answer=variant(gqa, softmax_dim=-2)),
        Mistake(lambda got: f"Your output has shape {tuple(got.shape)}: merge the group axes back, (B, Hkv, g, Tq, "
                "Dh) -> (B, Hq, Tq, Dh).", when=lambda got: got.dim() == 5,
                example=lambda q, k, v: gqa(q, k, v).reshape(q.shape[0], k.shape[1], -1, *q.shape[2:])),
        Mistake("q has Hq heads and k has Hkv: their head axes do not line up. Give the query heads a group axis "
                "first, so that each key/value head meets its group by broadcasting.", raises=RuntimeError,
                match="size of tensor a", when=lambda err, args: {int(n) for n in re.findall(r"\((\d+)\)", str(err))}
                == {args[0].shape[1], args[1].shape[1]}, example=lambda q, k, v: torch.softmax(q @ k.mT, -1) @ v),
        Mistake("A reshape asked for a shape that does not hold q's values: read Hkv from k.shape[1] and the group "
                "size g = Hq // Hkv from the shapes, not from the notebook's numbers.", raises=RuntimeError,
                match="invalid for input of size",  # the example's groups of 3: right on the first probe only
                example=lambda q, k, v: gqa(q.reshape(len(q), -1, 3, *q.shape[2:]).flatten(1, 2), k, v)),
    ])
