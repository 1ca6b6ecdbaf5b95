// SPDX-License-Identifier: LGPL-2.1-or-later
/* A module file from memory (kmodns_module_new_from_memory), by symbols and by relocations. */
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned flags[] = { 0, KMODNS_MODULE_EXPORTS_BY_RELOCATIONS };
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct kmodns_module *mod;

		if (kmodns_module_new_from_memory(fuzz_ctx(), data, size, "fuzz.ko", flags[i], &mod) == 0) {
			fuzz_walk_module(mod);
			kmodns_module_unref(mod);
		}
	}
	return 0;
}
