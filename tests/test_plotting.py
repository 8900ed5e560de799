"""The figures the notebooks draw: right number of panels, labels, and the values written."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from attnlib import show_heatmaps, show_matmul  # noqa: E402


def heatmap_axes(fig):
    return [ax for ax in fig.axes if ax.collections and ax.get_label() != "<colorbar>"]


@pytest.mark.parametrize("shape,panels", [((3, 4), 1), ((2, 3, 4), 2), ((2, 3, 3, 4), 6)])
def test_show_heatmaps_draws_one_panel_per_map(shape, panels):
    fig = show_heatmaps(torch.rand(shape))
    assert len(heatmap_axes(fig)) == panels
    plt.close(fig)


def test_show_heatmaps_labels_and_titles():
    fig = show_heatmaps(torch.rand(2, 2, 3), xlabels=["a", "b", "c"], ylabels=["x", "y"], titles=["h0", "h1"])
    axes = heatmap_axes(fig)
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["x", "y"]
    assert [ax.get_title() for ax in axes] == ["h0", "h1"]
    plt.close(fig)


def test_show_heatmaps_fitted_range_is_shared_by_every_panel():
    weights = torch.stack([torch.full((2, 2), 0.1).fill_diagonal_(0.2), torch.eye(2)])
    fig = show_heatmaps(weights, vmin=None, vmax=None)
    assert [ax.collections[0].get_clim() for ax in heatmap_axes(fig)] == [(0.0, 1.0), (0.0, 1.0)]
    plt.close(fig)


def test_show_heatmaps_rejects_wrong_label_count():
    with pytest.raises(ValueError, match="xlabels must have 3 entries, got 2"):
        show_heatmaps(torch.rand(2, 3), xlabels=["a", "b"])


def test_show_matmul_writes_the_rounded_product_in_the_result_panel():
    left = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
    right = torch.tensor([[0.25, 1.0, 0.0], [1.0, -2.0, 3.0]])
    fig = show_matmul(left, right, names=("Q", "K^T", "scores"))
    panels = [ax for ax in fig.axes if ax.collections]
    assert [ax.get_title().split("\n")[0] for ax in panels] == ["Q", "K^T", "scores"]
    written = [float(t.get_text()) for t in panels[2].texts]
    expected = (left @ right).flatten().tolist()
    assert written == pytest.approx(expected, abs=0.0051)  # half a unit in the 2nd decimal
    plt.close(fig)


def test_show_matmul_rejects_mismatched_inner_sizes():
    with pytest.raises(ValueError, match="left and right must be"):
        show_matmul(torch.rand(2, 3), torch.rand(2, 3))
