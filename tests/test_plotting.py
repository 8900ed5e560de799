"""The figures the notebooks draw: right number of panels, labels, and the values written."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
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


# --- what is drawn: colour bar, colour range, labels on the outer axes, the result panel -----------


def colorbar_axes(fig):
    return [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]


def test_show_heatmaps_has_one_colour_bar_for_all_panels_with_their_range():
    fig = show_heatmaps(torch.rand(2, 3, 2, 2), vmin=-1.0, vmax=2.0)
    bars = colorbar_axes(fig)
    assert len(bars) == 1
    panels = heatmap_axes(fig)
    assert len(panels) == 6
    assert {ax.collections[0].get_clim() for ax in panels} == {(-1.0, 2.0)}  # vmin and vmax honoured
    assert bars[0].get_ylim() == (-1.0, 2.0)  # the bar shows the same range
    assert bars[0]._colorbar.mappable in [ax.collections[0] for ax in panels]  # the bar shows the panels' colours
    assert all(ax.collections[0].get_cmap().name == "Reds" for ax in panels)
    # one bar for the whole grid: right of every panel, and as tall as both rows (not one panel's)
    bar, boxes = bars[0].get_position(), [ax.get_position() for ax in panels]
    assert bar.x0 >= max(b.x1 for b in boxes)
    assert bar.y0 < boxes[-1].y1 and bar.y1 > boxes[0].y0  # reaches into the bottom and the top row
    plt.close(fig)


def test_show_heatmaps_default_range_is_0_to_1_whatever_the_data():
    fig = show_heatmaps(torch.full((2, 2, 2), 0.25))
    assert {ax.collections[0].get_clim() for ax in heatmap_axes(fig)} == {(0.0, 1.0)}
    assert colorbar_axes(fig)[0].get_ylim() == (0.0, 1.0)
    plt.close(fig)


def test_show_heatmaps_fits_only_the_bound_left_as_none():
    weights = torch.tensor([[[0.2, 0.4], [0.6, 0.8]], [[0.3, 0.5], [0.7, 0.9]]])
    fig = show_heatmaps(weights, vmin=None, vmax=1.0)
    assert [ax.collections[0].get_clim() for ax in heatmap_axes(fig)] == [(pytest.approx(0.2), 1.0)] * 2
    plt.close(fig)
    fig = show_heatmaps(weights, vmin=0.0, vmax=None)
    assert [ax.collections[0].get_clim() for ax in heatmap_axes(fig)] == [(0.0, pytest.approx(0.9))] * 2
    plt.close(fig)


def test_show_heatmaps_puts_axis_titles_on_the_outer_axes_only():
    fig = show_heatmaps(torch.rand(2, 3, 2, 4), xlabel="keys here", ylabel="queries here")
    panels = heatmap_axes(fig)
    for idx, ax in enumerate(panels):
        r, c = divmod(idx, 3)
        assert ax.get_xlabel() == ("keys here" if r == 1 else ""), (r, c)
        assert ax.get_ylabel() == ("queries here" if c == 0 else ""), (r, c)
    plt.close(fig)


def test_show_heatmaps_draws_each_map_in_its_panel_in_row_major_order():
    weights = torch.arange(2 * 3 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2) / 24
    fig = show_heatmaps(weights, titles=[f"p{i}" for i in range(6)])
    for idx, ax in enumerate(heatmap_axes(fig)):
        r, c = divmod(idx, 3)
        assert ax.get_title() == f"p{idx}"
        drawn = ax.collections[0].get_array().ravel()
        assert drawn.tolist() == pytest.approx(weights[r, c].flatten().tolist())
    plt.close(fig)


def test_show_heatmaps_annotations_cmap_and_suptitle():
    weights = torch.tensor([[0.125, 0.875], [0.5, 0.5]])
    fig = show_heatmaps(weights, annot=True, fmt=".1f", cmap="Blues", suptitle="All heads")
    (ax,) = heatmap_axes(fig)
    assert [t.get_text() for t in ax.texts] == ["0.1", "0.9", "0.5", "0.5"]
    assert ax.collections[0].get_cmap().name == "Blues"
    assert fig._suptitle is not None and fig._suptitle.get_text() == "All heads"
    plt.close(fig)
    fig = show_heatmaps(weights)
    assert len(heatmap_axes(fig)[0].texts) == 0 and fig._suptitle is None  # no annotations, no suptitle by default
    plt.close(fig)


def test_show_heatmaps_size_follows_cell_size_and_panels():
    small = show_heatmaps(torch.rand(2, 6, 6), cell_size=0.3)
    large = show_heatmaps(torch.rand(2, 6, 6), cell_size=0.6)
    assert large.get_size_inches()[0] > small.get_size_inches()[0]
    assert large.get_size_inches()[1] > small.get_size_inches()[1]
    plt.close(small), plt.close(large)


def test_show_heatmaps_rejects_bad_shapes_and_types():
    with pytest.raises(ValueError, match="weights must have shape"):
        show_heatmaps(torch.rand(1, 1, 1, 2, 2))
    with pytest.raises(ValueError, match="ylabels must have 2 entries, got 3"):
        show_heatmaps(torch.rand(2, 3), ylabels=["a", "b", "c"])
    with pytest.raises(ValueError, match="titles must have 2 entries, got 1"):
        show_heatmaps(torch.rand(2, 2, 3), titles=["h0"])
    with pytest.raises(TypeError, match="weights must be a torch.Tensor or numpy array, got list"):
        show_heatmaps([[0.5, 0.5]])


def test_show_heatmaps_accepts_numpy_and_tensors_needing_grad():
    fig = show_heatmaps(np.array([[0.5, 0.5]], dtype=np.float32))
    assert len(heatmap_axes(fig)) == 1
    plt.close(fig)
    fig = show_heatmaps(torch.rand(2, 2, requires_grad=True))
    assert len(heatmap_axes(fig)) == 1
    plt.close(fig)


def test_show_matmul_uses_the_result_it_is_given():
    left, right = torch.eye(2), torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    given = torch.tensor([[9.0, 8.0], [7.0, 6.0]])  # not left @ right: the panel must show it anyway
    fig = show_matmul(left, right, given, decimals=1)
    panels = [ax for ax in fig.axes if ax.collections]
    assert [t.get_text() for t in panels[2].texts] == ["9.0", "8.0", "7.0", "6.0"]
    assert [t.get_text() for t in panels[0].texts] == ["1.0", "0.0", "0.0", "1.0"]
    assert [t.get_text() for t in panels[1].texts] == ["1.0", "2.0", "3.0", "4.0"]
    plt.close(fig)
    with pytest.raises(ValueError, match=r"result must have shape \(2, 2\), got \(2, 3\)"):
        show_matmul(left, right, torch.zeros(2, 3))


def test_show_matmul_draws_symbols_labels_shapes_and_a_symmetric_range():
    left = torch.tensor([[1.0, -3.0], [0.5, 2.0], [0.0, 1.0]])  # (3, 2)
    right = torch.tensor([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, -1.0]])  # (2, 4)
    fig = show_matmul(left, right, names=("Q", "K^T", "S"), row_labels=["a", "b", "c"],
                      col_labels=["w", "x", "y", "z"], cmap="PuOr", decimals=3)
    panels = [ax for ax in fig.axes if ax.collections]
    assert [ax.get_title() for ax in panels] == ["Q\n3 x 2", "K^T\n2 x 4", "S\n3 x 4"]
    symbols = [t.get_text() for ax in fig.axes if not ax.collections for t in ax.texts]
    assert symbols == ["@", "="]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in panels[2].get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in panels[1].get_xticklabels()] == ["w", "x", "y", "z"]
    assert [t.get_text() for t in panels[2].get_xticklabels()] == ["w", "x", "y", "z"]
    assert len(panels[0].get_xticklabels()) == 0 and len(panels[1].get_yticklabels()) == 0
    limit = float((left @ right).abs().max())  # 5.5, larger than any entry of left or right
    assert {ax.collections[0].get_clim() for ax in panels} == {(-limit, limit)}
    assert panels[2].texts[0].get_text() == f"{float((left @ right)[0, 0]):.3f}"
    plt.close(fig)


def test_show_matmul_of_zeros_still_has_a_colour_range():
    fig = show_matmul(torch.zeros(2, 2), torch.zeros(2, 2))
    assert {ax.collections[0].get_clim() for ax in fig.axes if ax.collections} == {(-1.0, 1.0)}
    plt.close(fig)


def test_show_matmul_rejects_non_matrices():
    with pytest.raises(ValueError, match="left and right must be"):
        show_matmul(torch.rand(2, 3, 1), torch.rand(3, 2))
    with pytest.raises(TypeError, match="right must be a torch.Tensor or numpy array"):
        show_matmul(torch.rand(2, 2), [[1.0]])


def test_show_matmul_layout_size_defaults_and_messages():
    left, right = torch.ones(3, 2), torch.ones(2, 5)  # (n, k) = (3, 2), (k, m) = (2, 5)
    fig = show_matmul(left, right)
    widths = [2, 0.8, 5, 0.8, 5]  # left's, "@", right's, "=", result's columns
    assert fig.axes[0].get_gridspec().get_width_ratios() == widths
    height = 3  # the most rows of the three matrices (not the most columns, 5)
    assert fig.get_size_inches() == pytest.approx((sum(widths) * 0.55 + 0.8, height * 0.55 + 1.0))
    panels = [ax for ax in fig.axes if ax.collections]
    assert [t.get_text() for t in panels[2].texts][:2] == ["2.00", "2.00"]  # two decimals by default
    assert all(len(ax.get_xticklabels()) == 0 and len(ax.get_yticklabels()) == 0 for ax in panels)
    plt.close(fig)
    fig = show_matmul(left, right, cell_size=1.0, cmap="Greys")
    assert fig.get_size_inches() == pytest.approx((sum(widths) + 0.8, height + 1.0))
    panel = [ax for ax in fig.axes if ax.collections][0]
    assert panel.collections[0].get_cmap()(0.0) == pytest.approx(plt.get_cmap("Greys")(0.0))
    plt.close(fig)
    with pytest.raises(ValueError) as info:
        show_matmul(left, right, torch.zeros(2, 5))
    assert str(info.value) == "result must have shape (3, 5), got (2, 5)"
    for args, name in (([[1.0]], torch.ones(1, 1)), "left"), ((torch.ones(1, 1), [[1.0]]), "right"):
        with pytest.raises(TypeError) as info:
            show_matmul(*args)
        assert str(info.value) == f"{name} must be a torch.Tensor or numpy array, got list"
    with pytest.raises(TypeError) as info:
        show_matmul(torch.ones(1, 1), torch.ones(1, 1), [[1.0]])
    assert str(info.value) == "result must be a torch.Tensor or numpy array, got list"


def test_show_heatmaps_figure_size():
    fig = show_heatmaps(torch.rand(2, 3, 4, 5), cell_size=0.5)  # R=2, C=3 panels of Tq=4, Tk=5
    assert fig.get_size_inches() == pytest.approx((3 * (5 * 0.5 + 0.6) + 1.0, 2 * (4 * 0.5 + 0.6)))
    plt.close(fig)
    fig = show_heatmaps(torch.rand(1, 1), cell_size=0.1)  # a tiny map gets the minimum size
    assert fig.get_size_inches() == pytest.approx((2.5, 2.0))
    plt.close(fig)
