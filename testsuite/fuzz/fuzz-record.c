// SPDX-License-Identifier: LGPL-2.1-or-later
/* A namespace record's text (the second value of a module's key in modules.dep.bin), and
 * the load verdict modprobe makes of it. */
#include "fuzz-cache-util.h"

/* Seeds: the record depmod would store for each fixture module, one file each in a directory. */
static void write_record(void *data, struct kmodns_module *mod)
{
	struct kmodns_requires *req = NULL;
	char path[4096], *text;
	FILE *f;

	kmodns_module_get_requires(mod, fuzz_lookup, fuzz_symvers(), &req);
	snprintf(path, sizeof(path), "%s/%s.record", (const char *)data, kmodns_module_get_name(mod));
	if (kmodns_ns_record_format(mod, req, true, &text) < 0 || (f = fopen(path, "we")) == NULL)
		abort();
	fputs(text, f);
	if (fclose(f) != 0)
		abort();
	free(text);
	kmodns_requires_unref(req);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *from = getenv("KMODNS_FUZZ_SEED_FROM"), *to = getenv("KMODNS_FUZZ_SEED_TO");

	if (from != NULL && to != NULL) {
		fuzz_each_fixture(from, write_record, (void *)to);
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kmodns_kernel *kernels[2];
	struct kmodns_ns_record *rec;
	char *text = malloc(size + 1);
	size_t i;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (kernels[0] == NULL &&
	    (kmodns_kernel_new(fuzz_ctx(), "6.12.0-fuzz", "/nonexistent/lib/modules/6.12.0-fuzz", &kernels[0]) < 0 ||
	     kmodns_kernel_new(fuzz_ctx(), "6.16.0-fuzz", "/nonexistent/lib/modules/6.16.0-fuzz", &kernels[1]) < 0))
		abort();
	if (kmodns_ns_record_new_from_text(text, &rec) == 0) {
		fuzz_walk_record(rec);
		for (i = 0; i < 2; i++) {
			struct kmodns_load_verdict *v;
			char *why;

			if (kmodns_kernel_check_record(kernels[i], "fuzz_mod", rec, &v) < 0)
				continue;
			fuzz_touch(kmodns_load_verdict_get_namespace(v));
			fuzz_touch(kmodns_load_verdict_get_symbol(v));
			fuzz_touch(kmodns_load_verdict_get_exporter(v));
			why = kmodns_load_verdict_describe(v);
			fuzz_touch(why);
			free(why);
			kmodns_load_verdict_unref(v);
		}
		kmodns_ns_record_unref(rec);
	}
	free(text);
	return 0;
}
