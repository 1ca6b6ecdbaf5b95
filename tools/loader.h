/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the tools that load modules share: kmod's log voice, module options, the pre-load check. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include <libkmod.h>

#include "libkmodns.h"
#include "tool-util.h"

/* ---- kmod's log: "<tool>: ERROR: ..." up to a priority, FATAL exits ----------------- */

void loader_log_open(bool use_syslog);
void loader_log_close(void);
/* Messages above priority are dropped (LOG_WARNING by default; -q: LOG_EMERG). */
void loader_log_set_priority(int priority);
int loader_log_get_priority(void);
/* Prints at prio when prio <= the log priority; LOG_CRIT and below then exit(1), as kmod's. */
_printf_(2, 3) void loader_log(int prio, const char *fmt, ...);
/* Routes libkmod's and libkmodns's messages through the same log, at the same priority. */
void loader_log_setup_kmod(struct kmod_ctx *ctx, struct kmodns_ctx *ns_ctx);

/* kmod_new() without libkmod 30's complaint about weakdep lines, which we read ourselves:
 * it parses the configuration before a log function can be set. */
struct kmod_ctx *loader_kmod_new(const char *dirname, const char *const *config_paths);

#define LOG_FATAL(...) loader_log(LOG_CRIT, __VA_ARGS__)
#define LOG_ERROR(...) loader_log(LOG_ERR, __VA_ARGS__)
#define LOG_WARN(...) loader_log(LOG_WARNING, __VA_ARGS__)

/* Module parameters from argv words, a value with a space quoted as kmod does; -ENOMEM. */
int module_options_from_args(char **args, int nargs, char **options);

/* ---- the pre-load check ------------------------------------------------------------------ */

/* The modules one load would insert, in order. */
struct load_set {
	struct kmod_module **mods;
	size_t count, capacity;
};
int load_set_add(struct load_set *set, struct kmod_module *mod);
void load_set_release(struct load_set *set);

enum load_check_flags {
	LOAD_CHECK_READ_FILES = 1 << 0, /* judge from the files, not depmod's records (insmod) */
	LOAD_CHECK_SHOW = 1 << 1,       /* print each module's verdict on stdout (-n -v) */
};

/*
 * Judges every module of set by kernel's namespace rule before any is loaded: one line per
 * refused module ("could not insert 'M': it ..."), a warning for one the kernel lets through.
 * Returns 0 when all may load, -EPERM when any is refused.
 */
int load_set_check(struct kmodns_kernel *kernel, const struct load_set *set, unsigned flags);

/* Where the admin's policy comes from: --policy FILE..., else the directories under --policy-root. */
struct loader_policy_source {
	const char **files;
	size_t n_files, capacity;
	const char *root; /* NULL: the system's */
};
#define LOADER_POLICY_OPTIONS_HELP                                                          \
	"\t    --policy=FILE           Apply this namespace policy (kmodns.d(5)) instead\n" \
	"\t                            of the installed one (may be repeated)\n"           \
	"\t    --policy-root=DIR       Read the installed policy under DIR\n"
int loader_policy_source_add_file(struct loader_policy_source *source, const char *path);
void loader_policy_source_release(struct loader_policy_source *source);
/* The policy the source names; errors in it are logged, the rest applies. */
int loader_policy_new(struct kmodns_ctx *ns_ctx, const struct loader_policy_source *source,
		      struct kmodns_policy **policy);

/* The target kernel of a module directory: release (NULL: the running kernel's) and dirname,
 * judging with the policy of source, read when a check first needs it: source must
 * outlive the kernel's checks. */
int loader_kernel_new(struct kmodns_ctx *ns_ctx, const char *release, const char *dirname,
		      const struct loader_policy_source *source, struct kmodns_kernel **kernel);
