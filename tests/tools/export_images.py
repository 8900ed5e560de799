"""Export the figures the README and the website show into images/ (run by `make images`).

Each figure is drawn by the same attnlib code the notebooks use, from the same seeded data,
so the README's pictures and the notebooks cannot disagree.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import attnlib  # noqa: E402

IMAGES = Path(__file__).resolve().parents[2] / "images"


def save(fig, name: str) -> None:
    path = IMAGES / name
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    print(f"wrote {path.relative_to(IMAGES.parent)}")


def qkv_matmul() -> None:
    """Notebook 01, section 3: Q @ K^T for the torch.manual_seed(42) example of 'QKV-Attention and Masking'."""
    torch.manual_seed(42)
    q, k = torch.randn(2, 4), torch.randn(3, 4)
    fig = attnlib.show_matmul(q, k.T, q @ k.T, names=("Q", "K^T", "Q K^T"),
                              row_labels=["q0", "q1"], col_labels=["k0", "k1", "k2"])
    save(fig, "qkv_matmul.png")


def self_attention_weights() -> None:
    """Notebook 01, section 5: self-attention weights of the three tokens of StatQuest's attention code."""
    tokens = ["write", "poetry", "<EOS>"]
    x = torch.tensor([[1.16, 0.23], [0.57, 1.36], [4.41, -2.16]])
    torch.manual_seed(42)
    w_q, w_k = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        weights = torch.softmax(w_q(x) @ w_k(x).T / math.sqrt(2), dim=-1)
    fig = attnlib.show_heatmaps(weights, xlabels=tokens, ylabels=tokens, annot=True, cell_size=0.8,
                                xlabel="keys (taken from)", ylabel="queries (asking)")
    save(fig, "self_attention_weights.png")


def causal_alignments() -> None:
    """Notebook 04: top-left and bottom-right causal masks for Tq=3, Tk=5."""
    masks = torch.stack([attnlib.causal_mask(3, 5), attnlib.causal_mask(3, 5, align="bottom_right")]).float()
    fig = attnlib.show_heatmaps(masks, titles=["top_left (is_causal=True)", "bottom_right (KV cache)"],
                                cmap="Greys", annot=True, fmt=".0f", cell_size=0.6)
    save(fig, "causal_alignments.png")


def title() -> None:
    """The course's title image: a six-token sentence's scores, the future masked, the softmax weights.

    The course's path in one picture (notebooks 01-04): Q Kᵀ / √d_k, then the causal mask, then
    softmax over the keys, each row summing to 1. Seeded random embeddings and projections.
    """
    import seaborn as sns

    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    torch.manual_seed(0)
    x = torch.randn(len(tokens), 8)
    w_q, w_k = torch.randn(8, 8), torch.randn(8, 8)
    scores = (x @ w_q) @ (x @ w_k).T / math.sqrt(8)
    scores = scores / scores.std()  # unit spread, so the weights are neither flat nor one-hot
    mask = attnlib.causal_mask(len(tokens), len(tokens))
    weights = attnlib.masked_softmax(scores, mask)
    masked = scores.masked_fill(~mask, float("nan"))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.4), gridspec_kw={"wspace": 0.35})
    limit = float(scores.abs().max())
    panels = [
        (scores, "scores  Q Kᵀ / √d_k", "coolwarm", -limit, limit, ".1f"),
        (masked, "causal mask: the future blocked", "coolwarm", -limit, limit, ".1f"),
        (weights, "weights = softmax over the keys", "Reds", 0.0, 1.0, ".2f"),
    ]
    for ax, (data, name, cmap, lo, hi, fmt) in zip(axes, panels):
        ax.set_facecolor("#eeeeee")
        labels = [[("" if v != v else format(v, fmt).replace("-0.0", "0.0")) for v in row] for row in data.tolist()]
        sns.heatmap(data.numpy(), ax=ax, cmap=cmap, vmin=lo, vmax=hi, annot=labels, fmt="", cbar=False,
                    square=True, linewidths=0.5, linecolor="white", xticklabels=tokens, yticklabels=tokens,
                    annot_kws={"fontsize": 8})
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("keys")
        ax.tick_params(length=0)
    axes[0].set_ylabel("queries")
    for left, right in zip(axes[:-1], axes[1:]):
        fig.text((left.get_position().x1 + right.get_position().x0) / 2, 0.5, "→", fontsize=28,
                 ha="center", va="center", color="#555555")
    save(fig, "title.png")


if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    title()
    qkv_matmul()
    self_attention_weights()
    causal_alignments()
