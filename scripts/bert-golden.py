#!/usr/bin/python3
# scripts/bert-golden.py: the reference for ci-embed's BERT family, written
# independently of the C code, in Python with PyTorch: HuggingFace BertTokenizer's
# rules (unicodedata) and BertModel's forward pass (torch, in float64), the
# sentence-transformers pooling, L2 norm.
#
#   scripts/bert-golden.py [<builddir>]     regenerate tests/golden/ci-embed-bert/
#   scripts/bert-golden.py --model <dir>    print the golden records of any model
#                                           directory (e.g. a real all-MiniLM-L6-v2)
#
# The first form runs <builddir>/tests/bert-tiny (default: the source tree, built
# in place) for its variants, mean, cls and max, and writes
#   tests/golden/ci-embed-bert/<variant>.jsonl   {"text":..,"ids":[..],"vec":[..]}
# one record per text of TEXTS below: the reference tokenizer's ids and vector.
# Run it once by hand, for review, when the texts or bert-tiny change.  It needs
# Debian's python3-torch and python3-numpy; `make check` needs only its output.
import json
import os
import subprocess
import sys
import tempfile
import unicodedata

import numpy as np
import torch

TEXTS = [
    "",
    "hello world",
    "Hello World",
    "The cat sat on the mat in the sun.",
    "read the whole file into memory",
    "load all the bytes of a file into a buffer",
    "def parse(self, string): return self.read(string)",
    "static int skip_white(const char *s) { while (*s == ' ') s++; return 0; }",
    "camelCaseName snake_case_name getValue setter",
    "café naïve résumé über straße Café",
    "CAFÉ RÉSUMÉ ÜBER",
    "e\u0301t\u00e9 cafe\u0301",
    "東京は日本の中文語",
    "hello東京world 中文",
    "α β γ λ π σ: the greek letters",
    "well… «quoted» — ¿qué? ¡sí! – done",
    "emoji \U0001F600 and symbols \u2603 \u00a9 are unknown",
    "tabs\tand\nnewlines\r\nand  many   spaces",
    "control\u0001chars\u200band\ufeffzero width",
    "x" * 120 + " a very long word",
    "unknownword zzzzqqqq parseable loadable writeness",
    "http://www.example.com/file.json?key=value&name=list",
    "if (argc > 1) { print(argv[1]); } else { return null; }",
    "0123456789 42 3.14 1e-9 #define MAX 100",
    "the " * 40 + "end",
    "Parse the File, Return the Error: " + "token model vector search code line " * 8,
    "naïve 東京 café " * 10,
]


# ---- the tokenizer: BertTokenizer's basic tokenizer and WordPiece ----------------------

def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class Tokenizer:
    def __init__(self, d):
        with open(os.path.join(d, "vocab.txt"), encoding="utf-8") as f:
            self.vocab = {}
            for i, line in enumerate(f):
                self.vocab[line.rstrip("\n")] = i
        tok = load_json(d, "tokenizer_config.json") or {}
        sbert = load_json(d, "sentence_bert_config.json") or {}
        self.lower = tok.get("do_lower_case", True) or sbert.get("do_lower_case", False)
        strip = tok.get("strip_accents")
        self.strip = self.lower if strip is None else strip
        self.cjk = tok.get("tokenize_chinese_chars", True)

    def basic(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or is_control(ch):
                continue
            if is_whitespace(ch):
                out.append(" ")
            elif self.cjk and is_cjk(cp):
                out.append(" " + ch + " ")
            else:
                out.append(ch)
        words = []
        for tok in "".join(out).split():
            if self.lower:
                tok = tok.lower()
            if self.strip:
                tok = "".join(c for c in unicodedata.normalize("NFD", tok)
                              if unicodedata.category(c) != "Mn")
            cur = ""
            for ch in tok:
                if is_punctuation(ch):
                    if cur:
                        words.append(cur)
                    words.append(ch)
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word):
        if len(word) > 100:
            return [self.vocab["[UNK]"]]
        ids, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = ("##" if start else "") + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:
                return [self.vocab["[UNK]"]]
            ids.append(found)
            start = end
        return ids

    def encode(self, text, max_len):
        ids = []
        for w in self.basic(text):
            ids.extend(self.wordpiece(w))
        return [self.vocab["[CLS]"]] + ids[:max_len - 2] + [self.vocab["[SEP]"]]


# ---- the model ------------------------------------------------------------------------------

def load_json(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        buf = raw[base + b:base + e]
        if t["dtype"] == "F32":
            a = np.frombuffer(buf, dtype="<f4")
        elif t["dtype"] == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif t["dtype"] == "BF16":
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            continue
        key = name[5:] if name.startswith("bert.") else name
        key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        out[key] = torch.from_numpy(a.astype(np.float64).reshape(t["shape"]))
    return out


class Model:
    def __init__(self, d):
        self.cfg = load_json(d, "config.json")
        self.w = load_safetensors(os.path.join(d, "model.safetensors"))
        self.tok = Tokenizer(d)
        tok = load_json(d, "tokenizer_config.json") or {}
        sbert = load_json(d, "sentence_bert_config.json") or {}
        self.max_len = self.cfg.get("max_position_embeddings", 512)
        lim = sbert.get("max_seq_length", tok.get("model_max_length"))
        if isinstance(lim, int) and 2 <= lim < self.max_len:
            self.max_len = lim
        self.pooling = "mean"
        mods = load_json(d, "modules.json") or []
        sub = next((m["path"] for m in mods if "Pooling" in m.get("type", "")), "1_Pooling")
        pcfg = load_json(d, os.path.join(sub, "config.json")) or {}
        if pcfg.get("pooling_mode_cls_token"):
            self.pooling = "cls"
        elif pcfg.get("pooling_mode_max_tokens"):
            self.pooling = "max"

    def embed(self, ids):
        W, c = self.w, self.cfg
        eps = c.get("layer_norm_eps", 1e-12)
        H = c["num_attention_heads"]
        ln = torch.nn.functional.layer_norm
        x = torch.tensor(ids)
        n, d = len(ids), c["hidden_size"]
        h = (W["embeddings.word_embeddings.weight"][x]
             + W["embeddings.position_embeddings.weight"][:n]
             + W["embeddings.token_type_embeddings.weight"][0])
        h = ln(h, (d,), W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
        for i in range(c["num_hidden_layers"]):
            p = "encoder.layer.%d." % i

            def lin(x, name):
                return x @ W[p + name + ".weight"].T + W[p + name + ".bias"]

            def heads(x):
                return x.view(n, H, d // H).transpose(0, 1)
            q = heads(lin(h, "attention.self.query"))
            k = heads(lin(h, "attention.self.key"))
            v = heads(lin(h, "attention.self.value"))
            att = torch.softmax(q @ k.transpose(1, 2) / (d // H) ** 0.5, dim=-1)
            ctx = (att @ v).transpose(0, 1).reshape(n, d)
            h = ln(h + lin(ctx, "attention.output.dense"), (d,),
                   W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"], eps)
            f = lin(h, "intermediate.dense")
            act = c.get("hidden_act", "gelu")
            if act == "gelu":
                f = 0.5 * f * (1 + torch.erf(f / 2 ** 0.5))
            elif act in ("gelu_new", "gelu_pytorch_tanh"):
                f = 0.5 * f * (1 + torch.tanh((2 / torch.pi) ** 0.5 * (f + 0.044715 * f ** 3)))
            elif act == "relu":
                f = torch.relu(f)
            else:
                raise SystemExit("hidden_act %s: not in the reference" % act)
            h = ln(h + lin(f, "output.dense"), (d,),
                   W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], eps)
        if self.pooling == "cls":
            v = h[0]
        elif self.pooling == "max":
            v = h.max(dim=0).values
        else:
            v = h.mean(dim=0)
        return v / max(float(v.norm()), 1e-12)


def records(d):
    m = Model(d)
    for t in TEXTS:
        ids = m.tok.encode(t, m.max_len)
        v = m.embed(ids)
        yield json.dumps({"text": t, "ids": ids, "vec": [float("%.8g" % x) for x in v.tolist()]},
                         ensure_ascii=False)


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--model":
        for r in records(args[1]):
            print(r)
        return
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = args[0] if args else top
    out = os.path.join(top, "tests", "golden", "ci-embed-bert")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("mean", "cls", "max"):
            d = os.path.join(tmp, variant)
            subprocess.run([os.path.join(build, "tests", "bert-tiny"), variant, d], check=True)
            with open(os.path.join(out, variant + ".jsonl"), "w", encoding="utf-8") as f:
                for r in records(d):
                    f.write(r + "\n")


if __name__ == "__main__":
    main()
