// SPDX-License-Identifier: LGPL-2.1-or-later
/* A kernel image: bzImage (xz, zstd, gzip or lz4 payload) or vmlinux ELF. */
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmodns_symvers *sv;
	size_t i;

	if (kmodns_symvers_new_from_vmlinuz(fuzz_ctx(), fuzz_file(data, size), &sv) < 0)
		return 0;
	for (i = 0; i < kmodns_symvers_get_count(sv); i++)
		fuzz_walk_export(kmodns_symvers_get_export(sv, i));
	kmodns_symvers_unref(sv);
	return 0;
}
