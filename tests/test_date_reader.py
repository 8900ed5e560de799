"""attnlib.date_reader: the encoder-decoder of notebook 06, its ablation, training loop and figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from attnlib import datasets, date_reader  # noqa: E402


@pytest.fixture(scope="module")
def data():
    train, test = datasets.date_examples(64, n_test=8, seed=1)
    src_vocab, tgt_vocab = datasets.source_vocab(train), datasets.target_vocab()
    encoded = [datasets.encode(examples, src_vocab, tgt_vocab) for examples in (train, test)]
    return src_vocab, tgt_vocab, *encoded


def model_of(decoder, vocab_sizes, seed=0):
    torch.manual_seed(seed)
    return date_reader.DateReader(*vocab_sizes, decoder)


@pytest.mark.parametrize("decoder", [date_reader.Decoder, date_reader.MeanContextDecoder])
def test_shapes_padding_and_rows(data, decoder):
    src_vocab, tgt_vocab, _, (src, lengths, tgt) = data
    model = model_of(decoder, (len(src_vocab), len(tgt_vocab)))
    for target in (tgt, None):  # teacher forcing, then greedy decoding
        logits, weights = model(src, lengths, target)
        assert logits.shape == (len(src), 10, len(tgt_vocab)) and weights.shape == (len(src), 10, src.shape[1])
        padding = torch.arange(src.shape[1]) >= lengths[:, None]  # (N, T)
        assert (weights.detach()[padding[:, None, :].expand_as(weights)] == 0).all()
        torch.testing.assert_close(weights.sum(-1), torch.ones(len(src), 10))


def test_the_mean_context_is_uniform_over_the_real_characters_at_every_step(data):
    src_vocab, tgt_vocab, _, (src, lengths, _) = data
    _, weights = model_of(date_reader.MeanContextDecoder, (len(src_vocab), len(tgt_vocab)))(src, lengths)
    want = (torch.arange(src.shape[1]) < lengths[:, None]).float() / lengths[:, None]  # (N, T)
    torch.testing.assert_close(weights, want[:, None, :].expand_as(weights))


def test_both_decoders_start_from_the_same_weights(data):
    src_vocab, tgt_vocab, *_ = data
    sizes = (len(src_vocab), len(tgt_vocab))
    attention, mean = model_of(date_reader.Decoder, sizes).state_dict(), model_of(date_reader.MeanContextDecoder, sizes)
    assert set(mean.state_dict()) < set(attention) and not any("attention" in k for k in mean.state_dict())
    assert all(torch.equal(t, attention[k]) for k, t in mean.state_dict().items())


def test_the_annotations_do_not_depend_on_the_padding(data):
    src_vocab, tgt_vocab, _, (src, lengths, _) = data
    encoder = model_of(date_reader.Decoder, (len(src_vocab), len(tgt_vocab))).encoder
    n = int(lengths.argmin())
    alone, summary_alone = encoder(src[n: n + 1, : lengths[n]], lengths[n: n + 1])
    padded, summary_padded = encoder(src[n: n + 1], lengths[n: n + 1])
    torch.testing.assert_close(padded[:, : lengths[n]], alone)
    torch.testing.assert_close(summary_padded, summary_alone)
    assert (padded[:, lengths[n]:] == 0).all()


def test_fit_lowers_the_loss_and_read_decodes_greedily(data):
    src_vocab, tgt_vocab, (src, lengths, tgt), _ = data
    model = model_of(date_reader.Decoder, (len(src_vocab), len(tgt_vocab)))
    seen = []
    losses = date_reader.fit(model, src, lengths, tgt, steps=8, batch_size=8, progress=lambda r: seen.append(r) or r)
    assert len(losses) == 8 and losses[-1] < losses[0] and len(seen) == 1
    predictions, weights = date_reader.read(model, src, lengths)
    assert not model.training and predictions.shape == (len(src), 10) and not weights.requires_grad
    logits, _ = model(src, lengths)
    assert torch.equal(predictions, logits.argmax(-1))


def test_fit_refuses_too_few_examples(data):
    src_vocab, tgt_vocab, (src, lengths, tgt), _ = data
    model = model_of(date_reader.Decoder, (len(src_vocab), len(tgt_vocab)))
    with pytest.raises(ValueError, match="steps \\* batch_size = 128"):
        date_reader.fit(model, src, lengths, tgt, steps=16, batch_size=8)


def test_figures():
    texts = ["Sat, 7 Feb 2026", "7.2.2026"]
    figure = date_reader.show_alignment(torch.rand(2, 10, 15).softmax(-1), texts, "2026-02-07")
    assert isinstance(figure, Figure) and [a.get_title() for a in figure.axes[:2]] == texts
    assert [t.get_text() for t in figure.axes[1].get_xticklabels()] == list("7.2.2026") + ["·"] * 7
    assert isinstance(date_reader.draw("2026.02.07", "2026-02-07", step=3, looks_at=3), Figure)
