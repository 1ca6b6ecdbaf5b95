// SPDX-License-Identifier: LGPL-2.1-or-later
/* A module file by path, as modinfo and depmod read one: plain, xz, zstd or gzip by magic,
 * and the header check modprobe makes before handing a file to libkmod. */
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct kmodns_module *mod;

	kmodns_file_check_header(fuzz_ctx(), path);
	if (kmodns_module_new_from_path(fuzz_ctx(), path, 0, &mod) == 0) {
		fuzz_walk_module(mod);
		kmodns_module_unref(mod);
	}
	return 0;
}
