"""Exercises of notebook 10 (induction heads): a random batch judged by its properties, predictions, the targets."""

from __future__ import annotations

import math

import torch

from . import Exercise, Mistake, Probe, as_number, near, variant

__all__ = ["check_ablation_loss", "check_even_spread_score", "check_induction_targets", "check_repeated_batch",
           "check_untrained_loss"]

VOCAB, T = 64, 32  # the notebook's vocabulary and sequence length


def _direction(low: str, high: str):
    """Which way a prediction is off, never by how much (unlike the shared direction(), inf and NaN are too high)."""
    return lambda got, want, args: (low if got < want else high) if isinstance(got, (int, float)) else None


def _parts(got):
    """(tokens, first, second) when the output has that form (three integer tensors of ranks 2, 1, 1), else None."""
    if not (isinstance(got, (tuple, list)) and len(got) == 3 and all(isinstance(x, torch.Tensor) for x in got)):
        return None
    integer = not any(x.is_floating_point() or x.is_complex() or x.dtype == torch.bool for x in got)
    return tuple(x.long() for x in got) if integer and [x.dim() for x in got] == [2, 1, 1] else None


def _batch(predicate):
    """A property of a well-formed batch, ``predicate(tokens, first, second, B, T, L, V)``."""
    return lambda got, args: _parts(got) is not None and bool(predicate(*_parts(got), *args[:4]))


def _batch_with(ids=(0, 0), tokens=None, first_low=0, first_high=None, gap=None, after=None):
    """repeated_batch, right by default; each keyword makes one mistake (ids=(low, high): randint(low, V + high))."""
    def make(b, t, n, v, g):
        x = tokens(b, t, v, g) if tokens else torch.randint(ids[0], v + ids[1], (b, t), generator=g)  # (B, T)
        first = torch.randint(first_low, first_high or t - 2 * n + 1, (b,), generator=g)  # 0 .. T - 2L
        room = t - 2 * n - first + 1  # (B,): how many starts the second copy has
        second = first + n + (gap(room, g) if gap else (torch.rand(b, generator=g) * room).long())
        rows, j = torch.arange(b)[:, None], torch.arange(n)
        x[rows, second[:, None] + j] = x[rows, first[:, None] + j]  # (B, L) copied
        return after(x, first, second, g) if after else (x, first, second)
    return make


def _uniform(x, v, b, t):
    counts = torch.bincount(x.flatten(), minlength=v).double() / (b * t / v)  # 1 for each id when uniform
    return bool(((counts > 0.5) & (counts < 2)).all())


check_repeated_batch = Exercise(
    "Exercise 1", solution=_batch_with(), refuse=("attnlib.induction",),
    probes=lambda: [Probe((*s, torch.Generator().manual_seed(i)), f"repeated_batch{s}")
                    for i, s in enumerate([(4096, 32, 10, 64), (3000, 20, 4, 9), (2000, 15, 6, 50)])],
    same_twice="Two calls with the same generator gave different batches: draw every number from the generator "
               "you are given, not from torch's global one.",
    correct="Random tokens, one segment twice, at places that change from row to row.",
    mistakes=[
        Mistake("Return three integer tensors: (tokens (B, T), first (B,), second (B,)).",
                when=lambda got: _parts(got) is None, example=lambda *a: _batch_with()(*a)[0]),
        Mistake(lambda got, args: f"Token ids must lie in 0 .. vocab_size - 1 = {args[3] - 1}; yours run from "
                f"{int(got[0].min())} to {int(got[0].max())}.",
                when=_batch(lambda x, f, s, b, t, n, v: x.min() < 0 or x.max() >= v), example=_batch_with(ids=(1, 1))),
        Mistake("A copy runs off the sequence: both copies must fit, first >= 0 and second + repeat_len <= seq_len.",
                when=_batch(lambda x, f, s, b, t, n, v: (f < 0).any() or (s + n > t).any()),
                example=_batch_with(after=lambda x, f, s, g: (x, f, s + 1))),
        Mistake("Every 'first' starts after its 'second': return (tokens, first, second), the earlier start first.",
                when=_batch(lambda x, f, s, b, t, n, v: (f >= s + n).all()),
                example=_batch_with(after=lambda x, f, s, g: (x, s, f))),
        Mistake("Your two copies overlap: the second must start at least repeat_len tokens after the first (second >= "
                "first + repeat_len).", when=_batch(lambda x, f, s, b, t, n, v: (s < f + n).any()),
                example=_batch_with(gap=lambda room, g: -torch.ones_like(room))),
        Mistake("Your second copy differs from the first: copy the whole segment of repeat_len tokens, after drawing "
                "the tokens.", when=_batch(lambda x, f, s, b, t, n, v: not torch.equal(
                    x.gather(1, s[:, None] + torch.arange(n)), x.gather(1, f[:, None] + torch.arange(n)))),
                example=_batch_with(after=lambda x, f, s, g: (torch.randint(int(x.max()) + 1, x.shape, generator=g),
                                                              f, s))),
        Mistake(lambda got, args: f"Your second copy starts at only {len(set((got[2] - got[1]).tolist()))} distance(s) "
                "from the first; every distance from repeat_len to seq_len - repeat_len must be possible.",
                when=_batch(lambda x, f, s, b, t, n, v: len(set((s - f).tolist())) < min(3, t - 2 * n + 1)),
                example=_batch_with(gap=lambda room, g: torch.randint(2, room.shape, generator=g) * (room > 1))),
        Mistake("Your first copy starts at the same place in every row: draw first at random for each row too.",
                when=_batch(lambda x, f, s, b, t, n, v: (f == f[0]).all()), example=_batch_with(first_high=1)),
        Mistake("The first copy never starts at position 0: the low bound of its start is 0.",
                when=_batch(lambda x, f, s, b, t, n, v: f.min() > 0), example=_batch_with(first_low=1)),
        Mistake("Some placements of the two copies never come up: every valid pair of starts must be possible.",
                when=_batch(lambda x, f, s, b, t, n, v: len({(int(i), int(j)) for i, j in zip(f, s)})
                            < (t - 2 * n + 1) * (t - 2 * n + 2) // 2),
                example=_batch_with(gap=lambda room, g: (room - 1) * torch.randint(2, room.shape, generator=g))),
        Mistake(lambda got, args: f"Token id {args[3] - 1}, the last of the vocabulary, never appears: randint's high "
                "is exclusive.", when=_batch(lambda x, f, s, b, t, n, v: x.max() < v - 1),
                example=_batch_with(ids=(0, -1))),
        Mistake("Token id 0 never appears: the ids run from 0 to vocab_size - 1.",
                when=_batch(lambda x, f, s, b, t, n, v: x.min() > 0), example=_batch_with(ids=(1, 0))),
        Mistake("Your tokens are not drawn uniformly, some ids far more often than others: draw each one with "
                "torch.randint(vocab_size, ...).", when=_batch(lambda x, f, s, b, t, n, v: not _uniform(x, v, b, t)),
                example=_batch_with(tokens=lambda b, t, v, g: torch.randint(v, (b, t), generator=g).index_fill(
                    1, torch.arange(0, t, 3), 0))),
        Mistake(lambda got: f"Your tokens are {str(got[0].dtype).removeprefix('torch.')}: the stub asks for int64 "
                "(torch.long).", when=lambda got: _parts(got) is not None and got[0].dtype != torch.long,
                example=_batch_with(after=lambda x, f, s, g: (x.int(), f, s))),
    ])


NEGATIVE = Mistake("Your loss is negative, and a loss never is: it is minus the log of a probability (at most 1).",
                   when=lambda got: isinstance(got, (int, float)) and got < 0, example=-math.log(VOCAB))

check_untrained_loss = Exercise(
    "Exercise 2", expected=math.log(VOCAB), decimals=1, read=as_number,
    correct=f"ln 64 = {math.log(VOCAB):.2f} nats: a uniform guess over 64 tokens, on every position alike.",
    diagnose=_direction("Too low for a model that knows nothing: it cannot beat a uniform guess over the 64 tokens.",
                        "Too high: a model that knows nothing does no worse than a uniform guess over the 64 tokens."),
    mistakes=[NEGATIVE, Mistake("{got} is the loss in bits (log2); F.cross_entropy uses the natural log, nats.",
                                when=near(math.log2(VOCAB), tol=0.05), example=6),
                Mistake("{got} is a base-10 log; F.cross_entropy uses the natural log, nats.",
                        when=near(math.log10(VOCAB), tol=0.05), example=1.81)])


EVEN_SPREAD = sum(1 / (i + 1) for i in range(1, T)) / (T - 1)  # query i sees keys 0 .. i: weight 1 / (i + 1) each
_KEYS = "the causal mask lets query i see only the i + 1 keys 0 .. i."

check_even_spread_score = Exercise(
    "Exercise 3", expected=EVEN_SPREAD, atol=0.004, rtol=0.0, read=as_number,  # 0.10, not 0.09 nor 0.11
    correct=f"{EVEN_SPREAD:.3f}: query i sees its i + 1 keys, so it gives the previous one 1 / (i + 1); the mean over "
            "i = 1 .. 31 is dominated by the first queries (1/2, 1/3, ...): about three times 1/T.",
    diagnose=_direction("Too low: average 1 / (number of keys query i may see) over the queries i = 1 .. T - 1.",
                        "Too high: average 1 / (number of keys query i may see) over the queries i = 1 .. T - 1."),
    mistakes=[
        Mistake("{got} is 1/(T - 1), as if every query spread its weight over T - 1 keys; " + _KEYS,
                when=near(1 / (T - 1), tol=0.0005), example=1 / 31),
        Mistake("{got} spreads each query's weight over all T keys (1/T), but " + _KEYS,
                when=lambda got: isinstance(got, (int, float)) and 0.028 <= got <= 0.036, example=1 / 32),
    ])


def _targets(tokens, pick="latest", shift=1, strict=True):
    """(B, T) ids -> (B, T): the position after the latest earlier occurrence of each token, -1 where there is none.
    Each keyword makes one mistake (strict=False: a query is its own earlier occurrence)."""
    t = tokens.shape[-1]
    keys = torch.ones(t, t, dtype=torch.bool).tril(-int(strict))  # j < i (j <= i when not strict)
    earlier = (tokens[..., :, None] == tokens[..., None, :]) & keys
    j = torch.arange(t) if pick == "latest" else t - torch.arange(t)  # the latest (or the first) scores highest
    found = torch.where(earlier, j, -1).amax(dim=-1)  # (B, T)
    found = found if pick == "latest" else torch.where(found >= 0, t - found, -1)
    return torch.where(found >= 0, found + shift, -1)


def _target_probes():
    g = torch.Generator().manual_seed(10)
    segment = torch.randint(50, (2, 6), generator=g)
    repeated = torch.cat([torch.randint(50, (2, 5), generator=g), segment, segment], dim=1)  # (2, 17)
    return [Probe((torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]]),), "the digits of pi, 3 1 4 1 5 9 2 6 5 3 5"),
            Probe((torch.randint(4, (3, 12), generator=g),), "3 rows of 12 tokens from a vocabulary of 4"),
            Probe((repeated,), "2 rows: 5 random tokens, then a segment of 6 twice"),
            Probe((torch.full((1, 5), 7),), "one token five times, 7 7 7 7 7")]


check_induction_targets = Exercise(
    "Exercise 4", reference=_targets, probes=_target_probes, exact_dtype=True,
    correct="Each query points at the token after the latest earlier copy of its own token: the key an induction "
            "head attends to, and the token it predicts next.",
    mistakes=[
        Mistake(lambda got: f"Your targets are right but {str(got.dtype).removeprefix('torch.')}: return int64 "
                "(torch.long).", example=lambda x: _targets(x).int(),
                when=lambda got, args: got.dtype != torch.long and torch.equal(got.long(), _targets(args[0]))),
        Mistake("You point one position too far: an induction head attends to the token right after the earlier "
                "occurrence.", variant(_targets, shift=2)),
        Mistake("You point at the earlier occurrence itself; an induction head attends to the token right after it, "
                "the one it copies.", variant(_targets, shift=0)),
        Mistake("You count the query itself as an earlier occurrence (j <= i), so every query points at a future "
                "token: only positions j < i count.", variant(_targets, strict=False)),
        Mistake("You take the first occurrence of the token; an induction head reads the latest one before the "
                "query.", variant(_targets, pick="first")),
    ])


check_ablation_loss = Exercise(
    "Exercise 5", expected=math.log(VOCAB), atol=0.45, rtol=0.0, read=as_number,
    correct=f"Near ln 64 = {math.log(VOCAB):.2f}: without the heads that copy, the repeat is as unpredictable as the "
            "first copy.",
    diagnose=_direction("Lower than the ablation gives: beating a uniform guess needs a head that reads the earlier "
                        "tokens, and you removed those heads.", "Higher than a uniform guess over the vocabulary, "
                        "what a model that knows nothing about the next token pays."),
    mistakes=[
        NEGATIVE,
        Mistake("A loss that stays low would need another head to copy; with the induction heads gone the model can "
                "only guess.", when=lambda got: isinstance(got, (int, float)) and 0 <= got < 2.0, example=0.5),
    ])
