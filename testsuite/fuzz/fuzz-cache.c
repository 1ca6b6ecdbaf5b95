// SPDX-License-Identifier: LGPL-2.1-or-later
/* depmod's module cache (modules.kmodns.cache): every entry and the kernel image's part. */
#include "fuzz-cache-util.h"

static void add_module(void *data, struct kmodns_module *mod)
{
	struct stat st = fuzz_key();
	uint8_t digest[KMODNS_CACHE_DIGEST_SIZE];

	if (kmodns_module_cache_writer_add(data, mod, &st, digest) < 0)
		abort();
}

/* A seed: every fixture module, and the fixture kernel's exports as the image's. */
static void write_seed(const char *fixtures, const char *out)
{
	struct kmodns_module_cache_writer *w = kmodns_module_cache_writer_new();
	struct kmodns_symvers *sv;
	struct stat st = fuzz_key();
	char path[4096];
	FILE *f = fopen(out, "we");

	if (w == NULL || f == NULL)
		abort();
	fuzz_each_fixture(fixtures, add_module, w);
	snprintf(path, sizeof(path), "%s/kernel/x86_64.elf", fixtures);
	if (kmodns_symvers_new_from_vmlinuz(fuzz_ctx(), path, &sv) == 0) {
		kmodns_module_cache_writer_set_vmlinux(w, FUZZ_VMLINUZ_PATH, &st, sv);
		kmodns_symvers_unref(sv);
	}
	if (kmodns_module_cache_writer_write(w, f) < 0 || fclose(f) != 0)
		abort();
	kmodns_module_cache_writer_free(w);
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
	struct kmodns_module_cache *cache;
	struct kmodns_symvers *sv;
	struct stat st = fuzz_key(), other = { 0 };
	size_t i;

	if (kmodns_module_cache_open(fuzz_ctx(), fuzz_sealed_file(data, size), &cache) < 0)
		return 0;
	for (i = 0; i < kmodns_module_cache_get_count(cache); i++) {
		const char *path = kmodns_module_cache_get_path(cache, i);
		struct kmodns_module *mod;

		kmodns_module_cache_has(cache, path, &other, NULL);
		/* by its key, and by its digest as a run stamp would ask */
		if (kmodns_module_cache_get(cache, path, &st, NULL, &mod) == 0) {
			fuzz_walk_module(mod);
			kmodns_module_unref(mod);
		}
		if (kmodns_module_cache_get(cache, path, &other, kmodns_module_cache_get_digest(cache, i), &mod) == 0)
			kmodns_module_unref(mod);
	}
	if (kmodns_module_cache_get_vmlinux(cache, FUZZ_VMLINUZ_PATH, &st, &sv) == 0) {
		for (i = 0; i < kmodns_symvers_get_count(sv); i++)
			fuzz_walk_export(kmodns_symvers_get_export(sv, i));
		kmodns_symvers_unref(sv);
	}
	kmodns_module_cache_free(cache);
	return 0;
}
