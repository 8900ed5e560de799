"""Export the figures the README shows into images/ (run by `make images`).

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


if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    qkv_matmul()
    self_attention_weights()
    causal_alignments()
