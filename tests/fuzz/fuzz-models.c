/*
 * fuzz-models.c: the loaders of model files (libcommon/embed/safetensors.c,
 * wordpiece.c, spm.c), which read what a user's --model directory holds.
 *
 * Input: a selector byte (0 safetensors, 1 vocab.txt, 2 tokenizer.json,
 * 3 SentencePiece vocab.json), then the file.  Properties: no crash; a file a
 * loader accepts can be used (tensors listed are readable, text is encoded).
 */
#include "core/common.h"
#include "embed/safetensors.h"
#include "embed/wordpiece.h"
#include "embed/spm.h"
#include "fuzz.h"

#include <unistd.h>

static const char sample[] = "Hello, wörld! def f(x): return x_1 + 2 # 漢字";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (size < 1)
		return 0;
	fd = fuzz_memfile(path, sizeof(path), data + 1, size - 1);
	if (fd < 0)
		return 0;
	switch (data[0] & 3) {
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
		int rc = (data[0] & 3) == 1 ? wordpiece_load(&wp, path, &o) : wordpiece_load_json(&wp, path, &o);
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
