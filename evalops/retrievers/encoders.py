"""Text encoders that ship with evalops: static token embeddings read from an installed package's files.

``wordllama`` (the ``wordllama`` wheel's ``l2_supercat`` model): a 32,000 x 256 float table of Llama-2
token embeddings trained as sentence embeddings, matryoshka-style, so its first 64 or 128 columns are
smaller models of their own. A text's vector is the mean of its tokens' rows, L2-normalised; this is what
``wordllama``'s own ``WordLlamaInference.embed(texts, norm=True)`` computes (the tokenizer's file, no special
tokens, no truncation, token ids clipped to the table, a mean over the real tokens only). A text with no
token (an empty string) gets the zero vector, which scores 0 against everything.

Nothing is downloaded and the ``wordllama`` package is never imported (its ``WordLlama.load()`` looks for the
tokenizer under ``tokenizer/`` while the wheel has ``tokenizers/``, then tries the network): the two files
are located with ``importlib`` and opened by path with the ``tokenizers`` and ``safetensors`` packages.

An encoder has ``identity`` (a string that changes whenever its vectors could: the weights' SHA-256, the
dimension, the pooling scheme), the key under which its document vectors are cached.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evalops.errors import ConfigError
from evalops.util.extras import MissingExtraError, require

__all__ = ["WORDLLAMA_DIMS", "WordLlamaEncoder", "wordllama_encoder", "wordllama_files"]

# The `wordllama` extra carries the model files (wordllama's wheel) and the two libraries that read them; it is
# an extra because wordllama pulls huggingface_hub (about 64 MB with tokenizers and hf-xet) into every install.
_EXTRA, _PURPOSE = "wordllama", "use the built-in dense encoder (model: wordllama)"

# The matryoshka dimensions the shipped 256-dimension table can be truncated to (wordllama's available dims).
WORDLLAMA_DIMS = (64, 128, 256)
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_POOLING = "mean-of-tokens/l2norm/v1"


def wordllama_files() -> tuple[Path, Path]:
    """The installed ``wordllama`` package's (weights, tokenizer) files, without importing the package."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(_EXTRA, _PURPOSE, "wordllama")
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ConfigError(f"dense: {path} is missing from the installed wordllama package; reinstall it "
                              "(pip install --force-reinstall wordllama)")
    return weights, tokenizer


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class WordLlamaEncoder:
    """``encode(texts) -> (n, dim) float32`` unit vectors from wordllama's shipped files (see the module)."""

    def __init__(self, dim: int = 256, *, batch_size: int = 256):
        if dim not in WORDLLAMA_DIMS:
            raise ConfigError(f"dense: wordllama's dimension must be one of {', '.join(map(str, WORDLLAMA_DIMS))}, "
                              f"got {dim!r}")
        weights_path, tokenizer_path = wordllama_files()
        # imported here: `import evalops.retrievers` stays cheap
        tokenizers = require("tokenizers", "wordllama", _PURPOSE)
        require("safetensors", "wordllama", _PURPOSE)
        from safetensors.numpy import load_file
        table = load_file(str(weights_path))["embedding.weight"]
        self.table = np.ascontiguousarray(table[:, :dim], dtype=np.float32)
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.dim = dim
        self.batch_size = batch_size
        self.identity = f"wordllama/l2_supercat_256@{_sha256(weights_path)[:16]}/dim={dim}/{_POOLING}"

    def __repr__(self) -> str:
        return f"WordLlamaEncoder(dim={self.dim})"

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(texts)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for lo in range(0, len(texts), self.batch_size):
            chunk = list(texts[lo : lo + self.batch_size])
            encodings = self.tokenizer.encode_batch(chunk, add_special_tokens=False)
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
            if not lengths.any():
                continue
            ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encodings])
            np.clip(ids, 0, self.table.shape[0] - 1, out=ids)
            has = np.flatnonzero(lengths)
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[has]
            sums = np.add.reduceat(self.table[ids], starts, axis=0, dtype=np.float32)
            out[lo + has] = sums / lengths[has, None].astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


@functools.lru_cache(maxsize=len(WORDLLAMA_DIMS))
def wordllama_encoder(dim: int = 256) -> WordLlamaEncoder:
    """One shared encoder per dimension in a process (the table is read once; encoding holds no state)."""
    return WordLlamaEncoder(dim)
