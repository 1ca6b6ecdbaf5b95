// SPDX-License-Identifier: LGPL-2.1-or-later
/* The target kernel's config (MODULE/config, plain or compressed), for
 * CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS. */
#include <sys/stat.h>

#include "fuzz-util.h"

static char moddir[128], config[192];

/* ROOT/lib/modules/6.12.0-fuzz/config, rewritten with each input (a leftover ROOT in /tmp
 * per run: the kernel object is made per input, so the directory must stay). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char root[] = "/tmp/kmodns-fuzz-kconfig.XXXXXX", dir[128];

	if (mkdtemp(root) == NULL)
		abort();
	snprintf(dir, sizeof(dir), "%s/lib", root);
	if (mkdir(dir, 0755) < 0)
		abort();
	snprintf(dir, sizeof(dir), "%s/lib/modules", root);
	if (mkdir(dir, 0755) < 0)
		abort();
	snprintf(moddir, sizeof(moddir), "%s/lib/modules/6.12.0-fuzz", root);
	snprintf(config, sizeof(config), "%s/config", moddir);
	if (mkdir(moddir, 0755) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmodns_kernel *kernel;
	FILE *f = fopen(config, "we");

	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	if (kmodns_kernel_new(fuzz_ctx(), "6.12.0-fuzz", moddir, &kernel) < 0)
		abort();
	kmodns_kernel_allows_missing_imports(kernel);
	kmodns_kernel_unref(kernel);
	return 0;
}
