/*
 * fuzz-models.c: the loaders of model files (libcommon/embed/safetensors.c,
 * wordpiece.c, spm.c), which read what a user's --model directory holds, and
 * ci-rank's model reader (libcommon/rank/model.c, what ci-rank --model reads).
 *
 * Input: a selector byte (0 safetensors, 1 vocab.txt, 2 tokenizer.json,
 * 3 SentencePiece vocab.json, 4 a ci-rank model; 5-7 as 1-3), then the file.
 * Properties: no crash; a file a loader accepts can be used (tensors listed
 * are readable, text is encoded); a ci-rank model accepted, each member, gives
 * a confidence of -1 (no calibration) or in [0, 1], non-decreasing in the top
 * logit and in the margin.
 */
#include "core/common.h"
#include "embed/safetensors.h"
#include "embed/wordpiece.h"
#include "embed/spm.h"
#include "rank/model.h"
#include "fuzz.h"

#include <math.h>
#include <unistd.h>

static const char sample[] = "Hello, wörld! def f(x): return x_1 + 2 # 漢字";

/* Each member of the ci-rank model text json: its calibration's properties. */
static void rank_model_props(const char *json, size_t len)
{
	static const double zs[] = { -1e6, -30, -1, 0, 0.5, 2, 30, 1e6 };
	static const double ms[] = { 0, 0.5, 3, 10, 1e9 };
	static const double fs[] = { 1, 0, 250, 1e7, NAN };	/* the index's files */
	struct rank_model m;

	for (int which = 0; which < RANK_MEMBERS; which++) {
		if (rank_model_parse_for(&m, json, len, "fuzz", which))
			continue;
		for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++)
		for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
			double prev = -1;
			for (size_t i = 0; i < sizeof(zs) / sizeof(zs[0]); i++) {
				double c = rank_model_confidence(&m, zs[i], ms[j], fs[k]);
				if (m.cal == RANK_CAL_NONE ? c != -1 : !(c >= 0 && c <= 1 && c >= prev))
					fuzz_fail("member %d: confidence %g at z %g, margin %g, files %g (before %g)",
						  which, c, zs[i], ms[j], fs[k], prev);
				/* a wider lead never lowers it */
				if (j && m.cal != RANK_CAL_NONE && c < rank_model_confidence(&m, zs[i], ms[j - 1], fs[k]))
					fuzz_fail("member %d: confidence falls as the margin rises to %g", which, ms[j]);
				prev = c;
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	unsigned sel;
	int fd;

	if (size < 1)
		return 0;
	sel = data[0] & 7;
	if (sel == 4) {
		/* the model text itself (rank_model_parse reads a buffer) */
		rank_model_props((const char *)data + 1, size - 1);
		return 0;
	}
	sel &= 3;
	fd = fuzz_memfile(path, sizeof(path), data + 1, size - 1);
	if (fd < 0)
		return 0;
	switch (sel) {
	case 0: {
		struct safetensors *st;
		if (safetensors_open(&st, path) == 0) {
			const float *f;
			const long dims[1] = { 4 };
			/* a tensor of another shape must be refused, not read past */
			if (safetensors_has(st, "x") && safetensors_f32(&f, st, "x", 1, dims) == 0) {
				volatile float sum = f[0] + f[1] + f[2] + f[3];
				(void)sum;
			}
			safetensors_close(st);
		}
		break;
	}
	case 1:
	case 2: {
		struct wordpiece *wp;
		struct wordpiece_opts o = { 1, 1, 1 };
		int rc = sel == 1 ? wordpiece_load(&wp, path, &o) : wordpiece_load_json(&wp, path, &o);
		if (rc == 0) {
			struct wordpiece_work w = WORDPIECE_WORK_INIT;
			wordpiece_encode(wp, &w, sample, sizeof(sample) - 1, 64);
			wordpiece_work_release(&w);
			wordpiece_free(wp);
		}
		break;
	}
	case 3: {
		struct spm *sp;
		if (spm_load(&sp, path) == 0) {
			struct spm_work w = SPM_WORK_INIT;
			spm_encode(sp, &w, sample, sizeof(sample) - 1, 64);
			spm_work_release(&w);
			spm_free(sp);
		}
		break;
	}
	}
	close(fd);
	return 0;
}
