"""The date reader of notebook 06: an encoder-decoder that reads dates with additive attention.

A bidirectional GRU reads the text and gives one annotation per character (the keys and the
values). A GRU decoder writes the 10 characters of the ISO date; before each one it scores its
state (the query) against every annotation with :class:`attnlib.AdditiveAttention`, masks the
padding, and takes the weighted sum of the annotations (the context). This is Bahdanau, Cho and
Bengio's model (2015) at a small size. :class:`MeanContextDecoder` is the ablation: the masked
mean of the annotations, the same at every step, in place of attention.

Notebook 06 trains the model with :func:`fit` and reads its weights with :func:`read`; its
"Going deeper" part builds the same model line by line and checks it equals this one.

Shape legend: B batch, Tk the text's length (the keys), 10 output characters, V a vocabulary's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F
from torch import nn

from .additive import AdditiveAttention
from .datasets import ISO_LENGTH
from .masks import from_valid_lens

BOS_ID = 0  # datasets.target_vocab(): id 0 is the begin symbol that starts decoding


class Encoder(nn.Module):
    """Characters -> annotations (B, Tk, 2 * hidden) and a summary (B, 2 * hidden), by a bidirectional GRU.

    The texts are packed, so the backward GRU starts at each text's last real character; the
    annotations at padded positions are zeros. The summary is the last state of each direction.
    """

    def __init__(self, vocab_size: int, embed_size: int = 32, hidden_size: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=0)
        self.rnn = nn.GRU(embed_size, hidden_size, batch_first=True, bidirectional=True)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embedding(src)  # (B, Tk) -> (B, Tk, embed)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, last = self.rnn(packed)  # last: (2 directions, B, hidden)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return out, torch.cat([last[0], last[1]], dim=-1)  # (B, Tk, 2 hidden), (B, 2 hidden)


class Decoder(nn.Module):
    """One output character per :meth:`step`: attend with the state, update the state, predict.

    The query is the state s_i before step i (hidden_size numbers), the keys and values are the
    annotations (key_size numbers); ``attention_hiddens`` is h, the width of the additive score.
    """

    def __init__(self, vocab_size: int, key_size: int = 64, embed_size: int = 32, hidden_size: int = 64,
                 attention_hiddens: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.init_state = nn.Linear(key_size, hidden_size)  # s_0 from the encoder's summary
        self.attention = AdditiveAttention(hidden_size, key_size, attention_hiddens)
        self.cell = nn.GRUCell(embed_size + key_size, hidden_size)
        self.out = nn.Linear(hidden_size + key_size, vocab_size)

    def context(self, state: torch.Tensor, annotations: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, hidden), (B, Tk, key), (B, 1, Tk) -> context (B, 1, key), weights (B, 1, Tk)."""
        return self.attention(state.unsqueeze(1), annotations, annotations, attn_mask=mask)  # the query is s_i

    def step(self, prev_char: torch.Tensor, state: torch.Tensor, annotations: torch.Tensor,
             mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """prev_char (B,), state (B, hidden) -> logits (B, V), the next state (B, hidden), weights (B, Tk)."""
        context, weights = self.context(state, annotations, mask)
        context = context.squeeze(1)  # (B, 1, key) -> (B, key)
        state = self.cell(torch.cat([self.embedding(prev_char), context], dim=-1), state)
        return self.out(torch.cat([state, context], dim=-1)), state, weights.squeeze(1)


class MeanContextDecoder(Decoder):
    """The ablation: the context is the mean of the real annotations, the same at every step (no attention).

    It builds the same layers in the same order as :class:`Decoder` (so with the same seed both
    start from the same weights), then drops the attention's.
    """

    def __init__(self, vocab_size: int, **sizes: int) -> None:
        super().__init__(vocab_size, **sizes)
        del self.attention  # no scoring network: the context ignores the query

    def context(self, state: torch.Tensor, annotations: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights = mask / mask.sum(dim=-1, keepdim=True)  # (B, 1, Tk): 1 / L on the L real characters
        return weights @ annotations, weights  # (B, 1, Tk) @ (B, Tk, key) -> (B, 1, key)


class DateReader(nn.Module):
    """Encoder and decoder: a text's ids (B, Tk) and lengths (B,) -> logits (B, 10, V) and weights (B, 10, Tk).

    With a ``target`` (B, 10) the character fed to step i + 1 is the true character i (teacher
    forcing, for training); without one it is the model's own most likely character (greedy).

    Args:
        src_vocab_size, tgt_vocab_size: the sizes of the input and output vocabularies.
        decoder: :class:`Decoder` (attention) or :class:`MeanContextDecoder` (the ablation).
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, decoder: type[Decoder] = Decoder) -> None:
        super().__init__()
        self.encoder = Encoder(src_vocab_size)
        self.decoder = decoder(tgt_vocab_size, key_size=64)

    def forward(self, src: torch.Tensor, lengths: torch.Tensor,
                target: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        annotations, summary = self.encoder(src, lengths)  # (B, Tk, 64), (B, 64)
        mask = from_valid_lens(lengths.to(src.device), src.shape[1], ndim=3)  # (B, 1, Tk): padding gets weight 0
        state = torch.tanh(self.decoder.init_state(summary))  # s_0: (B, 64) -> (B, hidden)
        prev_char = torch.full((src.shape[0],), BOS_ID, device=src.device)  # (B,)
        logits, weights = [], []
        for i in range(ISO_LENGTH):  # 10 output characters
            step_logits, state, step_weights = self.decoder.step(prev_char, state, annotations, mask)
            logits.append(step_logits)
            weights.append(step_weights)
            prev_char = target[:, i] if target is not None else step_logits.argmax(dim=-1)
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)  # (B, 10, V), (B, 10, Tk)


def fit(model: nn.Module, src: torch.Tensor, lengths: torch.Tensor, target: torch.Tensor, *, steps: int,
        batch_size: int, lr: float = 5e-3, progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
        ) -> list[float]:
    """Train ``model`` for ``steps`` steps, each on the next ``batch_size`` examples, and return every loss.

    Cross-entropy on the 10 output characters with teacher forcing, Adam with a one-cycle learning
    rate that peaks at ``lr``, gradients clipped to norm 1. Each batch is trimmed to its longest text.

    Args:
        model: a :class:`DateReader` (in training mode).
        src, lengths, target: (N, T), (N,), (N, 10) from :func:`attnlib.datasets.encode`, with
            N >= steps * batch_size: every example is used once.
        progress: wraps the loop of steps, e.g. ``tqdm.auto.tqdm`` for a progress bar.

    Raises:
        ValueError: fewer than ``steps * batch_size`` examples.
    """
    if src.shape[0] < steps * batch_size:
        raise ValueError(f"src must hold steps * batch_size = {steps * batch_size} examples, got {src.shape[0]}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=steps)
    losses = []
    for step in (progress or iter)(range(steps)):
        rows = slice(step * batch_size, (step + 1) * batch_size)
        batch_lengths, batch_target = lengths[rows], target[rows]
        logits, _ = model(src[rows, : int(batch_lengths.max())], batch_lengths, batch_target)  # (B, 10, V)
        loss = F.cross_entropy(logits.flatten(0, 1), batch_target.flatten())  # (B * 10, V) vs (B * 10,)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return losses


def read(model: nn.Module, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy decoding in eval mode: predicted ids (B, 10) and the attention weights (B, 10, Tk)."""
    model.eval()
    with torch.no_grad():
        logits, weights = model(src, lengths)  # no target: each step feeds the next its own choice
    return logits.argmax(dim=-1), weights


def show_alignment(weights: torch.Tensor, texts: list[str], output: str, *, titles: list[str] | None = None):
    """Draw (B, 10, Tk) weights as one heatmap per text: a row per output character, a column per input one.

    Columns past a text's end are its padding, labelled "·"; a space is drawn as "␣". Returns the Figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    b, tq, tk = weights.shape
    fig, axes = plt.subplots(b, 1, figsize=(0.36 * tk + 2.2, 0.36 * tq * b + 1.1 * b), squeeze=False,
                             layout="constrained")
    for n, ax in enumerate(axes[:, 0]):
        sns.heatmap(weights[n].detach().double().numpy(), ax=ax, cmap="Reds", vmin=0.0, vmax=1.0, square=True,
                    cbar=False)
        ax.set_xticks([j + 0.5 for j in range(tk)], [c.replace(" ", "␣") for c in texts[n].ljust(tk, "·")])
        ax.set_yticks([i + 0.5 for i in range(tq)], list(output))
        ax.tick_params(axis="both", rotation=0, length=0)
        ax.set(xlabel="keys: input characters", ylabel="queries: output", title=(titles or texts)[n])
    fig.colorbar(axes[0, 0].collections[0], ax=axes[:, 0].tolist(), shrink=0.5, label="attention weight")
    return fig


def draw(text: str, output: str, step: int, looks_at: int):
    """The encoder-decoder as a picture: step ``step`` writes ``output[step]`` with its weight on ``text[looks_at]``.

    The line widths stand for the attention weights, drawn by hand (0.91 on one character). Returns the Figure.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 4.6))
    ax.set(xlim=(-0.6, 13.4), ylim=(-0.4, 4.6))
    ax.axis("off")

    def node(x, y, label, color):
        ax.text(x, y, label, ha="center", va="center", bbox={"boxstyle": "round,pad=0.3", "ec": "0.3", "fc": color})

    def arrow(start, end, **style):
        ax.annotate("", end, start, arrowprops={"arrowstyle": "->", "shrinkA": 9, "shrinkB": 9, **style})

    for j, c in enumerate(text):  # the encoder: characters and their annotations h_j
        ax.text(j, 0, c.replace(" ", "␣"), ha="center", va="center", family="monospace", fontsize=12)
        node(j, 1, f"$h_{{{j}}}$", "#cfe2f3")
        weight = 0.91 if j == looks_at else 0.09 / max(len(text) - 1, 1)
        arrow((j, 1), (step + 1, 2.2), arrowstyle="-", lw=0.3 + 5 * weight, color="C3")
    node(step + 1, 2.2, f"$c_{{{step}}}$", "#f4cccc")  # the context, under the state it feeds
    for k in range(len(output) + 1):  # the decoder: states s_0 .. s_10, output y_k read from s_{k+1}
        node(k, 3.3, f"$s_{{{k}}}$", "#d9ead3")
        if k:
            arrow((k - 1, 3.3), (k, 3.3))
            ax.text(k, 4.3, output[k - 1], ha="center", va="center", family="monospace", fontsize=12)
    arrow((step, 3.3), (step + 1, 2.2), color="C3", ls="--")  # the query s_i is scored against every h_j
    arrow((step + 1, 2.2), (step + 1, 3.3), color="C3")  # the context c_i enters s_{i+1}
    for y, label in [(0, "input characters"), (1, "encoder (a GRU both ways):\nannotations = keys = values"),
                     (2.2, "attention: $c_i = \\sum_j \\alpha_{ij} h_j$\n(line width: $\\alpha_{ij}$)"),
                     (3.3, "decoder (a GRU): states;\n$s_i$ is the query of step $i$"),
                     (4.3, "output characters;\n$y_i$ is read from $s_{i+1}$")]:
        ax.text(11.4, y, label, va="center", fontsize=9)
    return fig


__all__ = ["BOS_ID", "DateReader", "Decoder", "Encoder", "MeanContextDecoder", "draw", "fit", "read",
           "show_alignment"]
