// SPDX-License-Identifier: GPL-2.0-or-later
/* A depmod.d file, read by depmod's own reader (tools/depmod-config.c). */
#include "fuzz-util.h"
#include "depmod-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg cfg = { .kversion = "6.1.0-9-amd64", .basedir = "" };
	FILE *saved = stderr;
	size_t i;

	stderr = fuzz_devnull();
	cfg_parse_file(&cfg, fuzz_file(data, size));
	stderr = saved;
	for (i = 0; i < cfg.n_searches; i++)
		fuzz_touch(cfg.searches[i].path);
	for (i = 0; i < cfg.n_overrides; i++)
		fuzz_touch(cfg.overrides[i].modname), fuzz_touch(cfg.overrides[i].subdir);
	for (i = 0; i < cfg.n_externals; i++)
		fuzz_touch(cfg.externals[i]);
	cfg_release(&cfg);
	return 0;
}
