// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module.symvers (-E, build/Module.symvers): both column orders. */
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmodns_symvers *sv;
	size_t i;

	if (kmodns_symvers_new_from_file(fuzz_ctx(), fuzz_file(data, size), &sv) < 0)
		return 0;
	for (i = 0; i < kmodns_symvers_get_count(sv); i++) {
		const struct kmodns_export *e = kmodns_symvers_get_export(sv, i);
		fuzz_walk_export(e);
		if (kmodns_symvers_find(sv, kmodns_export_get_symbol(e)) == NULL)
			abort();
	}
	kmodns_symvers_find(sv, "printk");
	kmodns_symvers_unref(sv);
	return 0;
}
