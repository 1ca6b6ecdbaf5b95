/* SPDX-License-Identifier: GPL-2.0-or-later */
/* depmod's configuration (depmod.d) as kmod 30 reads it: a reader of its own, so that a
 * fuzzer can feed it files without running depmod. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "libkmodns-util.h"

struct search {
	char *path; /* NULL for "built-in" and "external" */
	bool external;
};

struct override {
	char *modname, *subdir;
};

struct cfg {
	const char *kversion;
	const char *basedir; /* -b, "" without */
	char dirname[PATH_MAX]; /* <basedir><moduledir>/<kversion> */
	size_t dirnamelen;
	char outdir[PATH_MAX];
	char sym_prefix;
	bool print_unknown, check_symvers, warn_dups;
	struct search *searches; /* in the order written */
	size_t n_searches;
	struct override *overrides;
	size_t n_overrides;
	char **externals; /* directories, in the order written */
	size_t n_externals;
	struct strset excludes;
	struct strset config_files; /* read, in order: inputs of the run stamp */
};

void cfg_release(struct cfg *cfg);
/* Reads one depmod.d file into cfg; errors name the file and line (tool_err). */
void cfg_parse_file(struct cfg *cfg, const char *path);
/* Reads every file of the config paths (-C's, or the four depmod.d directories) in kmod's
 * order, then adds kmod's default search when none was given. */
int cfg_load(struct cfg *cfg, char **config_paths, size_t n_config_paths);
