"""`ttprefill prefill --text`: the prompt tokenized with the model folder's tokenizer.json (or --tokenizer)."""

from __future__ import annotations

import argparse
import json

import pytest

from ttprefill.engine import EngineError
from ttprefill.engine_cli import read_tokens

# A word-level vocabulary written from scratch: the expected ids follow from it, not from the code under test.
VOCAB = {"[UNK]": 0, "the": 5, "cache": 9, "reuses": 11, "pages": 3}


def _write_tokenizer(folder):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def _args(**kw):
    base = dict(tokens=None, text=None, tokenizer=None, model="tiny")
    base.update(kw)
    return argparse.Namespace(**base)


def test_text_uses_the_model_folders_tokenizer(tmp_path):
    folder = _write_tokenizer(tmp_path / "model")
    ids = read_tokens(_args(text="the cache reuses the pages", model=str(folder)))
    assert ids == [5, 9, 11, 5, 3]


def test_explicit_tokenizer_wins_and_unknown_words_map_to_unk(tmp_path):
    folder = _write_tokenizer(tmp_path / "tok")
    assert read_tokens(_args(text="the sky", tokenizer=str(folder))) == [5, 0]
    assert read_tokens(_args(text="pages", tokenizer=str(folder / "tokenizer.json"))) == [3]


@pytest.mark.parametrize("setup,words", [
    (lambda d: _args(text="x", model="tiny"), ["preset", "--tokenizer"]),
    (lambda d: _args(text="x", model=str(d)), ["no tokenizer.json", "--tokenizer"]),
    (lambda d: _args(text="x", tokenizer=str(d / "missing")), ["--tokenizer", "no tokenizer.json"]),
    (lambda d: _args(text="x", tokens="ids.txt"), ["not both"]),
])
def test_missing_or_conflicting_tokenizer_is_a_clear_error(tmp_path, setup, words):
    with pytest.raises(EngineError) as e:
        read_tokens(setup(tmp_path))
    for w in words:
        assert w in str(e.value)


def test_malformed_tokenizer_json_names_the_file(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps({"not": "a tokenizer"}))
    with pytest.raises(EngineError, match="not a Hugging Face tokenizer.json"):
        read_tokens(_args(text="x", model=str(tmp_path)))


def test_empty_text_is_refused(tmp_path):
    folder = _write_tokenizer(tmp_path / "model")
    with pytest.raises(EngineError, match="no tokens"):
        read_tokens(_args(text="", model=str(folder)))


def test_prefill_from_text_runs_end_to_end(tmp_path, capsys):
    from ttprefill.cli import main

    folder = _write_tokenizer(tmp_path / "tok")
    code = main(["prefill", "--backend", "torch", "--model", "tiny", "--tokenizer", str(folder),
                 "--text", "the cache reuses the pages", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    result = json.loads(out)
    assert result["tokens"] == 5
