/*
 * embed-gemm: the sgemm rate BLIS reaches on ci-embed's own matrix shapes, for
 * bench/embed.sh to set ci-embed's throughput against.
 *
 *   bench/embed-gemm <model dir> <rows> <tokens per text> <threads> [<seconds>]
 *
 * Each of <threads> threads runs the products of one forward group (<rows>
 * tokens, texts of <tokens per text>) on the model's weights, BLIS single-threaded
 * inside it, as ci-embed -j <threads> does; prints the total GFLOP/s, then the
 * GFLOP per CPU second (what a shared machine does not skew).
 * Built on demand (make bench/embed-gemm), not installed.
 */
#include "core/common.h"
#include "embed/embed.h"

#include <pthread.h>
#include <sys/resource.h>

struct job {
	const struct embed_model *m;
	size_t rows, seq;
	double seconds, rate;
};

static void *run(void *arg)
{
	struct job *j = arg;

	j->rate = embed_gemm_rate(j->m, j->rows, j->seq, j->seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	struct embed_model *m;
	struct job *jobs;
	pthread_t *tid;
	double total = 0, flop = 0, cpu;
	struct rusage ru;
	int i, threads;

	util_init(argv[0]);
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: embed-gemm <model dir> <rows> <tokens per text> <threads> [<seconds>]\n");
		return EXIT_USAGE;
	}
	threads = atoi(argv[4]);
	if (threads < 1 || atoi(argv[2]) < 1 || atoi(argv[3]) < 1)
		die("bad arguments");
	if (embed_model_open(&m, argv[1]) < 0)
		return EXIT_IO;
	jobs = xcalloc((size_t)threads, sizeof(*jobs));
	tid = xcalloc((size_t)threads, sizeof(*tid));
	for (i = 0; i < threads; i++) {
		jobs[i].m = m;
		jobs[i].rows = (size_t)atoi(argv[2]);
		jobs[i].seq = (size_t)atoi(argv[3]);
		jobs[i].seconds = argc > 5 ? atof(argv[5]) : 3.0;
		if (pthread_create(&tid[i], NULL, run, &jobs[i]))
			die("cannot start a thread");
	}
	for (i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += jobs[i].rate;
		flop += jobs[i].rate * jobs[i].seconds;
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	printf("%.1f %.1f\n", total, cpu > 0 ? flop / cpu : 0);
	free(jobs);
	free(tid);
	embed_model_close(m);
	return close_stdout(EXIT_OK);
}
