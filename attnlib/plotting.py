"""Figures for attention: weight heatmaps and matrix products drawn as annotated grids.

Both functions return a matplotlib Figure and draw nothing else; end a notebook cell
with ``plt.show()`` to display it.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.figure import Figure


def _to_numpy(name: str, x: object) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    raise TypeError(f"{name} must be a torch.Tensor or numpy array, got {type(x).__name__}")


def show_heatmaps(
    weights: torch.Tensor | np.ndarray,
    xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    xlabel: str = "keys",
    ylabel: str = "queries",
    annot: bool = False,
    fmt: str = ".2f",
    cmap: str = "Reds",
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cell_size: float = 0.45,
    suptitle: str | None = None,
) -> Figure:
    """Draw attention weights as heatmaps, one per head or example, sharing one colour bar.

    Args:
        weights: (Tq, Tk), (N, Tq, Tk) for a row of N maps, or (R, C, Tq, Tk) for an R x C
            grid (e.g. (B, H, Tq, Tk) weights of a batch).
        xlabels: Tk labels for the keys (columns).
        ylabels: Tq labels for the queries (rows).
        titles: one title per map, in row-major order.
        xlabel, ylabel: axis titles (on the bottom row and left column only).
        annot: write each weight in its cell, formatted with ``fmt``.
        fmt: the format of the written weights (``".2f"``: two decimals).
        cmap, vmin, vmax: colour map and its range; [0, 1] suits attention weights; pass
            ``vmin=None, vmax=None`` to fit the data of all panels together (e.g. for raw scores).
        cell_size: inches per cell, which sets the figure size.
        suptitle: a title over the whole figure.

    Returns:
        the matplotlib Figure.

    Raises:
        TypeError: ``weights`` is not a tensor or array.
        ValueError: ``weights`` is not 2-, 3- or 4-D, or a label or title list has the
            wrong length.
    """
    w = _to_numpy("weights", weights)
    if w.ndim not in (2, 3, 4):
        raise ValueError(f"weights must have shape (Tq, Tk), (N, Tq, Tk) or (R, C, Tq, Tk), got {w.shape}")
    w = w.reshape((1,) * (4 - w.ndim) + w.shape)  # (Tq, Tk) or (N, Tq, Tk) -> (R, C, Tq, Tk)
    rows, cols, tq, tk = w.shape
    for name, labels, n in (("xlabels", xlabels, tk), ("ylabels", ylabels, tq), ("titles", titles, rows * cols)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name} must have {n} entries, got {len(labels)}")
    vmin = float(w.min()) if vmin is None else vmin  # one range for every panel, so the one colour bar is true
    vmax = float(w.max()) if vmax is None else vmax
    figsize = (max(2.5, cols * (tk * cell_size + 0.6) + 1.0), max(2.0, rows * (tq * cell_size + 0.6)))
    fig, axes = plt.subplots(rows, cols, figsize=figsize, squeeze=False, sharex=True, sharey=True)
    for idx, ax in enumerate(axes.flat):
        r, c = divmod(idx, cols)
        sns.heatmap(
            w[r, c], ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, cbar=False, square=True,
            annot=annot, fmt=fmt, annot_kws={"fontsize": 8},
            xticklabels=list(xlabels) if xlabels is not None else "auto",
            yticklabels=list(ylabels) if ylabels is not None else "auto",
        )
        ax.tick_params(axis="y", rotation=0)
        if titles is not None:
            ax.set_title(titles[idx], fontsize=10)
        if r == rows - 1:
            ax.set_xlabel(xlabel)
        if c == 0:
            ax.set_ylabel(ylabel)
    fig.colorbar(axes.flat[-1].collections[0], ax=axes.ravel().tolist(), shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle, y=1.02, va="bottom")  # above the panel titles; the colour bar stays put
    return fig


def show_matmul(
    left: torch.Tensor | np.ndarray,
    right: torch.Tensor | np.ndarray,
    result: torch.Tensor | np.ndarray | None = None,
    names: Sequence[str] = ("A", "B", "A @ B"),
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    decimals: int = 2,
    cmap: str = "coolwarm",
    cell_size: float = 0.55,
) -> Figure:
    """Draw ``left @ right = result`` as three annotated matrices side by side.

    Each cell shows its value rounded to ``decimals``; colours are centred at 0 so the
    sign stands out. Used for Q @ K^T = scores and weights @ V = output.

    Args:
        left: (n, k).
        right: (k, m).
        result: (n, m); computed as ``left @ right`` if None.
        names: titles of the three matrices.
        row_labels: n labels for the rows of ``left`` and ``result`` (e.g. query tokens).
        col_labels: m labels for the columns of ``right`` and ``result`` (e.g. key tokens).
        decimals: digits written in each cell.
        cmap: a diverging colour map.
        cell_size: inches per cell.

    Returns:
        the matplotlib Figure.

    Raises:
        ValueError: a matrix that is not 2-D, inner sizes that differ, or a ``result``
            whose shape is not (n, m).
    """
    a, b = _to_numpy("left", left), _to_numpy("right", right)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"left and right must be (n, k) and (k, m), got {a.shape} and {b.shape}")
    c = a @ b if result is None else _to_numpy("result", result)
    if c.shape != (a.shape[0], b.shape[1]):
        raise ValueError(f"result must have shape {(a.shape[0], b.shape[1])}, got {c.shape}")
    mats = (a, b, c)
    widths = [a.shape[1], 0.8, b.shape[1], 0.8, c.shape[1]]
    height = max(m.shape[0] for m in mats)
    fig, axes = plt.subplots(
        1, 5, figsize=(sum(widths) * cell_size + 0.8, height * cell_size + 1.0),
        gridspec_kw={"width_ratios": widths},
    )
    limit = max(float(np.abs(m).max()) for m in mats) or 1.0
    cols = list(col_labels) if col_labels is not None else False  # keys label right's and result's columns
    rows = list(row_labels) if row_labels is not None else False  # queries label left's and result's rows
    xticks, yticks = [False, cols, cols], [rows, False, rows]
    for ax, m, name, xt, yt in zip(axes[::2], mats, names, xticks, yticks):
        sns.heatmap(
            m, ax=ax, cmap=cmap, vmin=-limit, vmax=limit, center=0.0, cbar=False, annot=True,
            fmt=f".{decimals}f", annot_kws={"fontsize": 8}, linewidths=0.5, linecolor="white",
            xticklabels=xt, yticklabels=yt,
        )
        ax.set_title(f"{name}\n{m.shape[0]} x {m.shape[1]}", fontsize=10)
        ax.set_aspect("equal")
        ax.tick_params(axis="y", rotation=0)
    for ax, symbol in zip(axes[1::2], ("@", "=")):
        ax.axis("off")
        ax.text(0.5, 0.5, symbol, ha="center", va="center", fontsize=18)
    return fig
