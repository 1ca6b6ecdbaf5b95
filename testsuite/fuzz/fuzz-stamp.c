// SPDX-License-Identifier: LGPL-2.1-or-later
/* depmod's run stamp (modules.kmodns.stamp). */
#include "fuzz-cache-util.h"

static void add_module(void *data, struct kmodns_module *mod)
{
	struct stat st = fuzz_key();
	uint8_t digest[KMODNS_CACHE_DIGEST_SIZE];

	if (kmodns_module_cache_digest(mod, digest) < 0 ||
	    kmodns_run_stamp_writer_add(data, kmodns_module_get_path(mod), &st, digest) < 0)
		abort();
}

/* A seed: the fixture modules with their digests, and two written files without. */
static void write_seed(const char *fixtures, const char *out)
{
	static const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE] = { 1, 2, 3 };
	struct kmodns_run_stamp_writer *w = kmodns_run_stamp_writer_new(inputs);
	struct stat st = fuzz_key();
	FILE *f = fopen(out, "we");

	if (w == NULL || f == NULL)
		abort();
	fuzz_each_fixture(fixtures, add_module, w);
	if (kmodns_run_stamp_writer_add(w, "modules.dep", &st, NULL) < 0 ||
	    kmodns_run_stamp_writer_add(w, "modules.dep.bin", &st, NULL) < 0 ||
	    kmodns_run_stamp_writer_write(w, f) < 0 || fclose(f) != 0)
		abort();
	kmodns_run_stamp_writer_free(w);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *from = getenv("KMODNS_FUZZ_SEED_FROM"), *to = getenv("KMODNS_FUZZ_SEED_TO");

	if (from != NULL && to != NULL) {
		write_seed(from, to);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE] = { 1, 2, 3 };
	struct kmodns_run_stamp *stamp;
	struct stat st = fuzz_key();
	size_t i;

	if (kmodns_run_stamp_open(fuzz_ctx(), fuzz_sealed_file(data, size), &stamp) < 0)
		return 0;
	kmodns_run_stamp_inputs_equal(stamp, inputs);
	for (i = 0; i < kmodns_run_stamp_get_count(stamp); i++) {
		const char *path = kmodns_run_stamp_get_path(stamp, i);
		const uint8_t *digest = kmodns_run_stamp_get_digest(stamp, i);
		uint8_t sum = 0;
		size_t j;

		fuzz_touch(path);
		kmodns_run_stamp_key_matches(stamp, i, &st);
		for (j = 0; digest != NULL && j < KMODNS_CACHE_DIGEST_SIZE; j++)
			sum += digest[j];
		if (kmodns_run_stamp_get_fresh_digest(stamp, path, &st) != (kmodns_run_stamp_key_matches(stamp, i, &st) ? digest : NULL))
			abort();
		(void)sum;
	}
	kmodns_run_stamp_free(stamp);
	return 0;
}
