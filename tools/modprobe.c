// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * modprobe: kmod's modprobe on the system's libkmod — same options, output,
 * messages and exit codes — that checks the whole load set (softdeps,
 * dependencies, the module) against the target kernel's namespace rule before
 * the first insertion, and loads nothing when the kernel would refuse one.
 *
 * libkmod builds the load list; a dry pass of its own probe yields exactly the
 * modules it would insert, which are judged, and only then the real pass runs.
 * What libkmod 30 lacks and kmod added later is ours: "modprobe PATH.ko" (31),
 * weakdep configuration in -c (33), --show-exports on a module name.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>

#include "loader.h"
#include "modprobe-config.h"
#include "tool-util.h"
#include "tools.h"

#define DEFAULT_VERBOSE LOG_WARNING

static struct {
	int verbose;
	int not_found_priority; /* "not found" is fatal, except with -a */
	bool dry_run, show_depends, lookup_only, first_time, ignore_commands, ignore_loaded;
	bool use_blacklist, force, force_modversion, force_vermagic, remove_holders, ns_check;
	unsigned long long wait_msec;
} opt = {
	.verbose = DEFAULT_VERBOSE,
	.not_found_priority = LOG_CRIT,
	.ns_check = true,
};

#define LOG_NOT_FOUND(...) loader_log(opt.not_found_priority, __VA_ARGS__)

enum {
	OPT_FORCE_VERMAGIC = 1,
	OPT_FORCE_MODVERSION,
	OPT_FIRST_TIME,
	OPT_DUMP_MODVERSIONS,
	OPT_REMOVE_HOLDERS,
	OPT_SHOW_EXPORTS,
	OPT_NO_NS_CHECK,
	OPT_POLICY,
	OPT_POLICY_ROOT,
};

static const char options_short[] = "arw:RibfDcnC:d:S:sqvVh";
static const struct option long_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "remove", no_argument, NULL, 'r' },
	{ "remove-dependencies", no_argument, NULL, OPT_REMOVE_HOLDERS },
	{ "remove-holders", no_argument, NULL, OPT_REMOVE_HOLDERS },
	{ "wait", required_argument, NULL, 'w' },
	{ "resolve-alias", no_argument, NULL, 'R' },
	{ "first-time", no_argument, NULL, OPT_FIRST_TIME },
	{ "ignore-install", no_argument, NULL, 'i' },
	{ "ignore-remove", no_argument, NULL, 'i' },
	{ "use-blacklist", no_argument, NULL, 'b' },
	{ "force", no_argument, NULL, 'f' },
	{ "force-modversion", no_argument, NULL, OPT_FORCE_MODVERSION },
	{ "force-vermagic", no_argument, NULL, OPT_FORCE_VERMAGIC },
	{ "show-depends", no_argument, NULL, 'D' },
	{ "showconfig", no_argument, NULL, 'c' },
	{ "show-config", no_argument, NULL, 'c' },
	{ "show-modversions", no_argument, NULL, OPT_DUMP_MODVERSIONS },
	{ "dump-modversions", no_argument, NULL, OPT_DUMP_MODVERSIONS },
	{ "show-exports", no_argument, NULL, OPT_SHOW_EXPORTS },
	{ "no-ns-check", no_argument, NULL, OPT_NO_NS_CHECK },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "policy-root", required_argument, NULL, OPT_POLICY_ROOT },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "show", no_argument, NULL, 'n' },
	{ "config", required_argument, NULL, 'C' },
	{ "dirname", required_argument, NULL, 'd' },
	{ "set-version", required_argument, NULL, 'S' },
	{ "syslog", no_argument, NULL, 's' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	printf("Usage:\n"
	       "\t%1$s [options] [-i] [-b] modulename\n"
	       "\t%1$s [options] -a [-i] [-b] modulename [modulename...]\n"
	       "\t%1$s [options] -r [-i] modulename\n"
	       "\t%1$s [options] -r -a [-i] modulename [modulename...]\n"
	       "\t%1$s [options] -c\n"
	       "\t%1$s [options] --dump-modversions filename\n"
	       "Management Options:\n"
	       "\t-a, --all                   Consider every non-argument to\n"
	       "\t                            be a module name to be inserted\n"
	       "\t                            or removed (-r)\n"
	       "\t-r, --remove                Remove modules instead of inserting\n"
	       "\t    --remove-dependencies   Deprecated: use --remove-holders\n"
	       "\t    --remove-holders        Also remove module holders (use together with -r)\n"
	       "\t-w, --wait <MSEC>           When removing a module, wait up to MSEC for\n"
	       "\t                            module's refcount to become 0 so it can be\n"
	       "\t                            removed (use together with -r)\n"
	       "\t    --first-time            Fail if module already inserted or removed\n"
	       "\t-i, --ignore-install        Ignore install commands\n"
	       "\t-i, --ignore-remove         Ignore remove commands\n"
	       "\t-b, --use-blacklist         Apply blacklist to resolved alias.\n"
	       "\t-f, --force                 Force module insertion or removal.\n"
	       "\t                            implies --force-modversions and\n"
	       "\t                            --force-vermagic\n"
	       "\t    --force-modversion      Ignore module's version\n"
	       "\t    --force-vermagic        Ignore module's version magic\n"
	       "\t    --no-ns-check           Do not check symbol namespaces before\n"
	       "\t                            loading: leave them to the kernel\n"
	       LOADER_POLICY_OPTIONS_HELP
	       "\n"
	       "Query Options:\n"
	       "\t-R, --resolve-alias         Only lookup and print alias and exit\n"
	       "\t-D, --show-depends          Only print module dependencies and exit\n"
	       "\t-c, --showconfig            Print out known configuration and exit\n"
	       "\t-c, --show-config           Same as --showconfig\n"
	       "\t    --show-modversions      Dump module symbol version and exit\n"
	       "\t    --dump-modversions      Same as --show-modversions\n"
	       "\t    --show-exports          Only print module exported symbol versions\n"
	       "\t                            (and namespaces) and exit\n"
	       "\n"
	       "General Options:\n"
	       "\t-n, --dry-run               Do not execute operations, just print out\n"
	       "\t-n, --show                  Same as --dry-run\n"
	       "\t-C, --config=FILE           Use FILE instead of default search paths\n"
	       "\t-d, --dirname=DIR           Use DIR as filesystem root for /lib/modules\n"
	       "\t-S, --set-version=VERSION   Use VERSION instead of `uname -r`\n"
	       "\t-s, --syslog                print to syslog, not stderr\n"
	       "\t-q, --quiet                 disable messages\n"
	       "\t-v, --verbose               enables more messages\n"
	       "\t-V, --version               show version\n"
	       "\t-h, --help                  show this help\n",
	       program_invocation_short_name);
}

/* ---- -c: the configuration libkmod read, and the weakdeps it cannot ------------------ */

/* kmod 30's search path for modprobe.d, in order of precedence. */
static const char *const default_config_paths[] = {
	"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/lib/modprobe.d", NULL,
};

struct config_file {
	char *name, *path;
};

static int config_file_compare(const void *a, const void *b)
{
	return strcmp(((const struct config_file *)a)->name, ((const struct config_file *)b)->name);
}

struct config_files {
	struct config_file *files;
	size_t count, capacity;
};

/* Adds dir/name (name NULL: dir is the file) unless a file of that name came first. */
static void config_files_add(struct config_files *cf, const char *dir, const char *name)
{
	const char *base = name ? name : strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	char *path = NULL;
	size_t i;

	for (i = 0; i < cf->count; i++)
		if (streq(cf->files[i].name, base))
			return;
	if (name ? asprintf(&path, "%s/%s", dir, name) < 0 : (path = strdup(dir)) == NULL)
		return;
	if (array_reserve((void **)&cf->files, &cf->capacity, sizeof(*cf->files), cf->count + 1) < 0 ||
	    (cf->files[cf->count].name = strdup(base)) == NULL) {
		free(path);
		return;
	}
	cf->files[cf->count++].path = path;
}

/* As libkmod lists a configuration path: a file as it is, a directory's visible *.conf files. */
static void config_files_add_path(struct config_files *cf, const char *path)
{
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (stat(path, &st) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		config_files_add(cf, path, NULL);
		return;
	}
	d = opendir(path);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 5 || !streq(de->d_name + len - 5, ".conf"))
			continue;
		config_files_add(cf, path, de->d_name);
	}
	closedir(d);
}

static void show_weakdeps(struct kmod_ctx *ctx, const char *const *config_paths)
{
	struct config_files cf = { 0 };
	size_t i;

	config_files_add(&cf, kmod_get_dirname(ctx), "modules.softdep");
	config_files_add(&cf, kmod_get_dirname(ctx), "modules.weakdep");
	for (i = 0; config_paths[i] != NULL; i++)
		config_files_add_path(&cf, config_paths[i]);
	qsort(cf.files, cf.count, sizeof(*cf.files), config_file_compare);
	for (i = 0; i < cf.count; i++) {
		weakdeps_print(stdout, cf.files[i].path);
		free(cf.files[i].name);
		free(cf.files[i].path);
	}
	free(cf.files);
}

static int show_config(struct kmod_ctx *ctx, const char *const *config_paths)
{
	static const struct {
		const char *name;
		struct kmod_config_iter *(*get)(const struct kmod_ctx *ctx);
	} kinds[] = {
		{ "blacklist", kmod_config_get_blacklists },
		{ "install", kmod_config_get_install_commands },
		{ "remove", kmod_config_get_remove_commands },
		{ "alias", kmod_config_get_aliases },
		{ "options", kmod_config_get_options },
		{ "softdep", kmod_config_get_softdeps },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct kmod_config_iter *it = kinds[i].get(ctx);

		while (it != NULL && kmod_config_iter_next(it)) {
			const char *value = kmod_config_iter_get_value(it);
			printf("%s %s", kinds[i].name, kmod_config_iter_get_key(it));
			if (value != NULL)
				printf(" %s\n", value);
			else
				putchar('\n');
		}
		kmod_config_iter_free_iter(it);
	}
	show_weakdeps(ctx, config_paths);
	printf("\n# End of configuration files. Dumping indexes now:\n\n");
	fflush(stdout);
	kmod_dump_index(ctx, KMOD_INDEX_MODULES_ALIAS, STDOUT_FILENO);
	kmod_dump_index(ctx, KMOD_INDEX_MODULES_SYMBOL, STDOUT_FILENO);
	return 0;
}

/* ---- --dump-modversions, --show-exports ------------------------------------------------ */

static int show_modversions(struct kmod_ctx *ctx, const char *filename)
{
	struct kmod_module *mod = NULL;
	struct kmod_list *list = NULL, *l;
	int err = kmod_module_new_from_path(ctx, filename, &mod);

	if (err < 0) {
		LOG_NOT_FOUND("Module %s not found.\n", filename);
		return err;
	}
	err = kmod_module_get_versions(mod, &list);
	if (err < 0) {
		LOG_NOT_FOUND("could not get modversions of %s: %s\n", filename, strerror(-err));
		kmod_module_unref(mod);
		return err;
	}
	kmod_list_foreach(l, list)
		printf("0x%08" PRIx64 "\t%s\n", kmod_module_version_get_crc(l),
		       kmod_module_version_get_symbol(l));
	kmod_module_versions_free_list(list);
	kmod_module_unref(mod);
	return 0;
}

/* A file name, or a module name looked up in the tree (kmod 30 took only files). */
static char *module_file_of(struct kmod_ctx *ctx, const char *arg)
{
	struct kmod_list *list = NULL, *l;
	char *path = NULL;

	if (strchr(arg, '/') != NULL || access(arg, F_OK) == 0)
		return strdup(arg);
	if (kmod_module_new_from_lookup(ctx, arg, &list) < 0)
		return NULL;
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);
		if (path == NULL && kmod_module_get_path(mod) != NULL)
			path = strdup(kmod_module_get_path(mod));
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	return path;
}

/* Real exports only, with their namespace: kmod lists namespace strings as symbols too. */
static int show_exports(struct kmod_ctx *ctx, struct kmodns_ctx *ns_ctx, const char *arg)
{
	_cleanup_free_ char *path = module_file_of(ctx, arg);
	struct kmodns_module *mod = NULL;
	size_t i;
	int err;

	if (path == NULL) {
		LOG_NOT_FOUND("Module %s not found.\n", arg);
		return -ENOENT;
	}
	err = kmodns_module_new_from_path(ns_ctx, path, 0, &mod);
	if (err < 0) {
		LOG_NOT_FOUND("could not get symbols of %s: %s\n", path, strerror(-err));
		return err;
	}
	for (i = 0; i < kmodns_module_get_export_count(mod); i++) {
		const struct kmodns_export *e = kmodns_module_get_export(mod, i);
		const char *ns = kmodns_export_get_namespace(e);
		uint32_t crc = 0;

		kmodns_export_get_crc(e, &crc);
		printf("0x%08" PRIx32 "\t%s%s%s\n", crc, kmodns_export_get_symbol(e), ns[0] ? "\t" : "", ns);
	}
	kmodns_module_unref(mod);
	return 0;
}

/* ---- -r: removal ----------------------------------------------------------------------- */

static int run_command(struct kmod_module *mod, const char *type, const char *command,
		       const char *options)
{
	_cleanup_free_ char *cmd = NULL;
	const char *p, *var = "$CMDLINE_OPTS";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int status;

	if (f == NULL)
		return -ENOMEM;
	for (p = command; *p;) {
		const char *at = strstr(p, var);
		if (at == NULL) {
			fputs(p, f);
			break;
		}
		fprintf(f, "%.*s%s", (int)(at - p), p, options ? options : "");
		p = at + strlen(var);
	}
	if (memstream_close(f, &buf) < 0)
		return -ENOMEM;
	cmd = buf;
	if (opt.show_depends || opt.verbose > DEFAULT_VERBOSE)
		printf("%s %s\n", type, cmd);
	fflush(stdout);
	if (opt.dry_run)
		return 0;
	setenv("MODPROBE_MODULE", kmod_module_get_name(mod), 1);
	status = system(cmd);
	unsetenv("MODPROBE_MODULE");
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		LOG_NOT_FOUND("Error running %s command for %s\n", type, kmod_module_get_name(mod));
		return status == -1 ? -errno : -EINVAL;
	}
	return 0;
}

static void sleep_msec(unsigned long long msec)
{
	struct timespec ts = { .tv_sec = (time_t)(msec / 1000), .tv_nsec = (long)(msec % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static unsigned long long now_msec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

static int remove_module_now(struct kmod_module *mod)
{
	const char *name = kmod_module_get_name(mod);
	unsigned long long deadline = 0, backoff = 1;
	unsigned flags = (opt.force ? KMOD_REMOVE_FORCE : 0) | (opt.wait_msec ? KMOD_REMOVE_NOLOG : 0);
	int err;

	if (opt.show_depends || opt.verbose > DEFAULT_VERBOSE)
		printf("rmmod %s\n", name);
	if (opt.dry_run)
		return 0;
	for (;;) {
		err = kmod_module_remove_module(mod, flags);
		if (err == -EEXIST) {
			if (!opt.first_time)
				return 0;
			LOG_NOT_FOUND("Module %s is not in kernel.\n", name);
			return err;
		}
		if (err != -EAGAIN || opt.wait_msec == 0)
			break;
		/* the refcount may drop: retry with growing pauses until the deadline */
		if (deadline == 0)
			deadline = now_msec() + opt.wait_msec;
		if (now_msec() >= deadline)
			break;
		sleep_msec(backoff < deadline - now_msec() ? backoff : deadline - now_msec());
		backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
	}
	if (err < 0 && opt.wait_msec)
		LOG_ERROR("could not remove '%s': %s\n", name, strerror(-err));
	return err;
}

enum { REMOVE_HOLDERS = 1, REMOVE_IGNORE_BUILTIN = 2 };
static int remove_module(struct kmod_module *mod, unsigned flags);

/* Last first; stop_on_error for holders, whose failure keeps mod in use. */
static int remove_list_reversed(struct kmod_list *list, bool stop_on_error)
{
	struct kmod_list *l;

	kmod_list_foreach_reverse(l, list) {
		struct kmod_module *m = kmod_module_get_module(l);
		int r = remove_module(m, REMOVE_IGNORE_BUILTIN);
		kmod_module_unref(m);
		if (r < 0 && stop_on_error)
			return r;
	}
	return 0;
}

/* kmod's order: post-softdeps, holders (if asked), the module, unused dependencies, pre-softdeps. */
static int remove_module(struct kmod_module *mod, unsigned flags)
{
	const char *name = kmod_module_get_name(mod);
	struct kmod_list *pre = NULL, *post = NULL;
	const char *cmd = NULL;
	int err = 0;

	if (!opt.ignore_commands) {
		err = kmod_module_get_softdeps(mod, &pre, &post);
		if (err < 0) {
			LOG_WARN("could not get softdeps of '%s': %s\n", name, strerror(-err));
			return err;
		}
		cmd = kmod_module_get_remove_commands(mod);
	}
	if (cmd == NULL && !opt.ignore_loaded) {
		int state = kmod_module_get_initstate(mod);
		if (state < 0) {
			if (opt.first_time) {
				LOG_NOT_FOUND("Module %s is not in kernel.\n", name);
				err = -ENOENT;
			}
			goto out;
		}
		if (state == KMOD_MODULE_BUILTIN) {
			if (!(flags & REMOVE_IGNORE_BUILTIN)) {
				LOG_NOT_FOUND("Module %s is builtin.\n", name);
				err = -ENOENT;
			}
			goto out;
		}
	}
	remove_list_reversed(post, false);
	if (flags & REMOVE_HOLDERS) {
		struct kmod_list *holders = kmod_module_get_holders(mod);
		err = remove_list_reversed(holders, true);
		kmod_module_unref_list(holders);
		if (err < 0)
			goto out;
	}
	if (cmd == NULL && !opt.ignore_loaded && opt.wait_msec == 0 && kmod_module_get_refcnt(mod) > 0) {
		LOG_NOT_FOUND("Module %s is in use.\n", name);
		err = -EBUSY;
		goto out;
	}
	err = cmd ? run_command(mod, "remove", cmd, NULL) : remove_module_now(mod);
	if (err < 0)
		goto out;
	if (cmd == NULL) {
		struct kmod_list *deps = kmod_module_get_dependencies(mod), *l;
		kmod_list_foreach(l, deps) {
			struct kmod_module *dep = kmod_module_get_module(l);
			if (kmod_module_get_refcnt(dep) == 0)
				remove_module_now(dep);
			kmod_module_unref(dep);
		}
		kmod_module_unref_list(deps);
	}
	remove_list_reversed(pre, false);
out:
	kmod_module_unref_list(pre);
	kmod_module_unref_list(post);
	return err;
}

static int remove_alias(struct kmod_ctx *ctx, const char *alias)
{
	struct kmod_list *list = NULL, *l;
	int err = kmod_module_new_from_lookup(ctx, alias, &list);

	if (err < 0)
		return err;
	if (list == NULL) {
		LOG_NOT_FOUND("Module %s not found.\n", alias);
		return -ENOENT;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);
		err = remove_module(mod, opt.remove_holders ? REMOVE_HOLDERS : 0);
		kmod_module_unref(mod);
		if (err < 0)
			break;
	}
	kmod_module_unref_list(list);
	return err;
}

/* ---- insertion ----------------------------------------------------------------------- */

/* libkmod's print_action carries no data pointer: the dry pass collects into these. */
static struct load_set collected;

/* Every action of the dry pass, for -n to print after the check instead of probing twice. */
static struct action {
	struct kmod_module *mod;
	bool install;
	char *options;
} *actions;
static size_t n_actions, actions_capacity;
static bool actions_failed;

static void collect_action(struct kmod_module *m, bool install, const char *options)
{
	/* an install command runs its own modprobe, which checks what it loads */
	if (!install && kmod_module_get_path(m) != NULL)
		load_set_add(&collected, m);
	if (array_reserve((void **)&actions, &actions_capacity, sizeof(*actions), n_actions + 1) < 0 ||
	    (actions[n_actions].options = strdup(options ? options : "")) == NULL) {
		actions_failed = true;
		return;
	}
	actions[n_actions].mod = kmod_module_ref(m);
	actions[n_actions++].install = install;
}

static void actions_release(void)
{
	size_t i;

	for (i = 0; i < n_actions; i++) {
		kmod_module_unref(actions[i].mod);
		free(actions[i].options);
	}
	free(actions);
	actions = NULL;
	n_actions = actions_capacity = 0;
	actions_failed = false;
}

static void print_action(struct kmod_module *m, bool install, const char *options)
{
	const char *path = kmod_module_get_path(m);

	if (install)
		printf("install %s %s\n", kmod_module_get_install_commands(m), options);
	else if (path != NULL)
		printf("insmod %s %s\n", path, options);
	else if (kmod_module_get_initstate(m) == KMOD_MODULE_BUILTIN)
		printf("builtin %s\n", kmod_module_get_name(m));
}

static unsigned probe_flags(void)
{
	unsigned flags = KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY;

	if (opt.force || opt.force_modversion)
		flags |= KMOD_PROBE_FORCE_MODVERSION;
	if (opt.force || opt.force_vermagic)
		flags |= KMOD_PROBE_FORCE_VERMAGIC;
	if (opt.ignore_commands)
		flags |= KMOD_PROBE_IGNORE_COMMAND;
	if (opt.ignore_loaded)
		flags |= KMOD_PROBE_IGNORE_LOADED;
	if (opt.dry_run)
		flags |= KMOD_PROBE_DRY_RUN;
	if (opt.use_blacklist)
		flags |= KMOD_PROBE_APPLY_BLACKLIST;
	if (opt.first_time)
		flags |= KMOD_PROBE_FAIL_ON_LOADED;
	return flags;
}

/*
 * The whole load set of mod judged before anything of it is inserted; -EPERM if refused.
 * With -n the dry pass is the whole run: *probe_err gets its result and its actions stay in
 * actions[] for the caller to print (*done true), so libkmod does not resolve it all again.
 */
static int check_load_set(struct kmodns_kernel *kernel, struct kmod_module *mod, unsigned flags,
			  const char *options, int *probe_err, bool *done)
{
	int err;

	*done = false;
	err = kmod_module_probe_insert_module(mod, flags | KMOD_PROBE_DRY_RUN, options, NULL, NULL,
					      collect_action);
	if (opt.dry_run && !actions_failed) {
		*probe_err = err;
		*done = true;
	}
	/* nothing to load, or an error the real pass reports as kmod does */
	if (err == 0 && collected.count > 0)
		err = load_set_check(kernel, &collected,
				     opt.dry_run && opt.verbose > DEFAULT_VERBOSE ? LOAD_CHECK_SHOW : 0);
	else
		err = 0;
	load_set_release(&collected);
	return err;
}

static int insert_module(struct kmodns_kernel *kernel, struct kmod_module *mod, const char *options)
{
	const char *name = kmod_module_get_name(mod);
	unsigned flags = probe_flags();
	bool done = false;
	int err;

	if (opt.lookup_only) {
		printf("%s\n", name);
		return 0;
	}
	/* kernel is NULL for --no-ns-check and -D (initramfs builders parse its list): no verdicts */
	if (kernel != NULL) {
		int probe_err = 0;

		err = check_load_set(kernel, mod, flags, options, &probe_err, &done);
		if (err < 0) { /* refused: nothing printed, nothing loaded */
			actions_release();
			return err;
		}
		if (done) {
			size_t i;

			/* -n: what the real pass would have printed, from the dry pass */
			for (i = 0; i < n_actions && opt.verbose > DEFAULT_VERBOSE; i++)
				print_action(actions[i].mod, actions[i].install, actions[i].options);
			err = probe_err;
		}
		actions_release();
	}
	if (!done)
		err = kmod_module_probe_insert_module(mod, flags, options, NULL, NULL,
						      opt.show_depends || opt.verbose > DEFAULT_VERBOSE ? print_action : NULL);
	if (err >= 0) /* a positive return says why nothing was done (blacklisted): no error */
		return 0;
	if (err == -EEXIST)
		LOG_ERROR("could not insert '%s': Module already in kernel\n", name);
	else if (err == -ENOENT)
		LOG_ERROR("could not insert '%s': Unknown symbol in module, or unknown parameter (see dmesg)\n",
			  name);
	else
		LOG_ERROR("could not insert '%s': %s\n", name, strerror(-err));
	return err;
}

/* A module name or alias; or, as kmod 31, the path of a module file. */
static int insert_alias(struct kmod_ctx *ctx, struct kmodns_kernel *kernel, const char *alias,
			const char *options)
{
	struct kmod_list *list = NULL, *l;
	struct kmod_module *mod = NULL;
	int err;

	if (alias[0] == '/' || startswith(alias, "./")) {
		err = kmod_module_new_from_path(ctx, alias, &mod);
		if (err < 0) {
			LOG_NOT_FOUND("Failed to get module from path %s: %s\n", alias, strerror(-err));
			return -ENOENT;
		}
		err = insert_module(kernel, mod, options);
		kmod_module_unref(mod);
		return err;
	}
	err = kmod_module_new_from_lookup(ctx, alias, &list);
	if (list == NULL || err < 0) {
		LOG_NOT_FOUND("Module %s not found in directory %s\n", alias, kmod_get_dirname(ctx));
		return -ENOENT;
	}
	kmod_list_foreach(l, list) {
		mod = kmod_module_get_module(l);
		err = insert_module(kernel, mod, options);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	return err;
}

/* ---- MODPROBE_OPTIONS: options of the outer modprobe for nested ones -------------------- */

static void modprobe_options_append(const char *word)
{
	const char *old = getenv("MODPROBE_OPTIONS");
	_cleanup_free_ char *value = NULL;

	if (old == NULL) {
		setenv("MODPROBE_OPTIONS", word, 1);
		return;
	}
	if (asprintf(&value, "%s %s", old, word) < 0 || setenv("MODPROBE_OPTIONS", value, 1) < 0)
		LOG_ERROR("could not append value to $MODPROBE_OPTIONS\n");
}

/* argv with $MODPROBE_OPTIONS's words put first: split on spaces outside quotes, quotes dropped. */
static char **argv_with_env_options(int *argc, char **argv)
{
	const char *env = getenv("MODPROBE_OPTIONS"), *p;
	char **out, *buf, *w, *word, quote = 0;
	size_t n = 1, words = 1;
	int i;

	if (env == NULL)
		return argv;
	for (p = env; *p; p++)
		words += *p == ' ';
	/* the words and their bytes in one block, freed with it */
	out = malloc(((size_t)*argc + words + 1) * sizeof(*out) + strlen(env) + 1);
	if (out == NULL)
		return NULL;
	buf = (char *)(out + *argc + words + 1);
	out[0] = argv[0];
	word = w = buf;
	for (p = env;; p++) {
		if (*p == '\0' || (*p == ' ' && quote == 0)) {
			*w++ = '\0';
			if (*word != '\0')
				out[n++] = word;
			word = w;
			if (*p == '\0')
				break;
		} else if ((*p == '"' || *p == '\'') && (quote == 0 || quote == *p)) {
			quote = quote ? 0 : *p;
		} else {
			*w++ = *p;
		}
	}
	for (i = 1; i < *argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	*argc = (int)n;
	return out;
}

/* ---- the command ----------------------------------------------------------------------- */

int modprobe_main(int argc, char *argv[])
{
	const char **config_paths = NULL, *root = NULL, *kversion = NULL;
	bool use_all = false, do_remove = false, show_cfg = false, show_versions = false;
	bool show_exp = false, use_syslog = false;
	char dirname_buf[PATH_MAX], **args;
	const char *dirname = NULL;
	size_t n_config_paths = 0, config_paths_capacity = 0;
	struct kmod_ctx *ctx = NULL;
	struct kmodns_ctx *ns_ctx = NULL;
	struct kmodns_kernel *kernel = NULL;
	struct loader_policy_source policy_source = { 0 };
	struct stat st;
	char **orig_argv = argv;
	int nargs, c, err = 0;

	argv = argv_with_env_options(&argc, argv);
	if (argv == NULL) {
		LOG_ERROR("Could not prepend options from environment\n");
		return EXIT_FAILURE;
	}
	while ((c = getopt_long(argc, argv, options_short, long_options, NULL)) != -1) {
		switch (c) {
		case 'a':
			opt.not_found_priority = LOG_WARNING;
			use_all = true;
			break;
		case 'r': do_remove = true; break;
		case OPT_REMOVE_HOLDERS: opt.remove_holders = true; break;
		case 'w': {
			char *end = NULL;
			opt.wait_msec = strtoull(optarg, &end, 0);
			if (*optarg == '\0' || *end != '\0') {
				LOG_ERROR("unexpected wait value '%s'.\n", optarg);
				err = -EINVAL;
				goto done;
			}
			break;
		}
		case OPT_FIRST_TIME: opt.first_time = true; break;
		case 'i': opt.ignore_commands = true; break;
		case 'b': opt.use_blacklist = true; break;
		case 'f': opt.force = true; break;
		case OPT_FORCE_MODVERSION: opt.force_modversion = true; break;
		case OPT_FORCE_VERMAGIC: opt.force_vermagic = true; break;
		case OPT_NO_NS_CHECK: opt.ns_check = false; break;
		case OPT_POLICY:
			if (loader_policy_source_add_file(&policy_source, optarg) < 0) {
				err = -ENOMEM;
				goto done;
			}
			break;
		case OPT_POLICY_ROOT: policy_source.root = optarg; break;
		case 'D':
			opt.ignore_loaded = opt.dry_run = opt.show_depends = true;
			break;
		case 'R': opt.lookup_only = true; break;
		case 'c': show_cfg = true; break;
		case OPT_DUMP_MODVERSIONS: show_versions = true; break;
		case OPT_SHOW_EXPORTS: show_exp = true; break;
		case 'n': opt.dry_run = true; break;
		case 'C':
			if (array_reserve((void **)&config_paths, &config_paths_capacity,
					  sizeof(*config_paths), n_config_paths + 2) < 0) {
				LOG_ERROR("out-of-memory\n");
				err = -ENOMEM;
				goto done;
			}
			config_paths[n_config_paths++] = optarg;
			config_paths[n_config_paths] = NULL;
			modprobe_options_append("-C");
			modprobe_options_append(optarg);
			break;
		case 'd': root = optarg; break;
		case 'S': kversion = optarg; break;
		case 's':
			modprobe_options_append("-s");
			use_syslog = true;
			break;
		case 'q':
			modprobe_options_append("-q");
			opt.verbose = LOG_EMERG;
			break;
		case 'v':
			modprobe_options_append("-v");
			opt.verbose++;
			break;
		case 'V':
			printf("kmodns version %s\n", PACKAGE_VERSION);
			goto done;
		case 'h':
			help();
			goto done;
		case '?':
			err = -EINVAL;
			goto done;
		default:
			LOG_ERROR("unexpected getopt_long() value '%c'.\n", c);
			err = -EINVAL;
			goto done;
		}
	}
	args = argv + optind;
	nargs = argc - optind;

	/* no usable stderr (started by the kernel's usermode helper): log to syslog */
	if (!use_syslog && (stderr == NULL || fileno(stderr) < 0 || fstat(fileno(stderr), &st) < 0))
		use_syslog = true;
	loader_log_open(use_syslog);
	if (!show_cfg && nargs == 0) {
		LOG_ERROR("missing parameters. See -h.\n");
		err = -EINVAL;
		goto done;
	}
	if (root != NULL || kversion != NULL) {
		struct utsname u;
		if (kversion == NULL) {
			if (uname(&u) < 0) {
				LOG_ERROR("uname() failed: %m\n");
				err = -errno;
				goto done;
			}
			kversion = u.release;
		}
		if ((size_t)snprintf(dirname_buf, sizeof(dirname_buf), "%s/lib/modules/%s", root ? root : "",
				     kversion) >= sizeof(dirname_buf)) {
			LOG_ERROR("bad directory %s/lib/modules/%s: path too long\n", root ? root : "", kversion);
			err = -ENAMETOOLONG;
			goto done;
		}
		dirname = dirname_buf;
	}

	ctx = loader_kmod_new(dirname, config_paths);
	ns_ctx = kmodns_new();
	if (ctx == NULL || ns_ctx == NULL) {
		LOG_ERROR("kmod_new() failed!\n");
		err = -ENOMEM;
		goto done;
	}
	loader_log_set_priority(opt.verbose);
	loader_log_setup_kmod(ctx, ns_ctx);
	/* Mapping every index up front (kmod's modprobe does) pays off over many lookups; for one
	 * module libkmod reading just the index nodes it needs costs less (bench/modprobe, -D:
	 * 1.03 -> 0.98 of kmod's time, peak RSS 1.00 -> 0.62). The output is the same either way. */
	if (use_all && nargs > 1)
		kmod_load_resources(ctx);

	if (show_cfg) {
		err = show_config(ctx, config_paths ? config_paths : default_config_paths);
	} else if (show_versions) {
		err = show_modversions(ctx, args[0]);
	} else if (show_exp) {
		err = show_exports(ctx, ns_ctx, args[0]);
	} else if (do_remove) {
		int i;
		for (i = 0; i < nargs; i++) {
			int r = remove_alias(ctx, args[i]);
			if (r < 0)
				err = r;
		}
	} else {
		/* -D and -R only list what would load: no verdicts, no kernel to judge by */
		if (opt.ns_check && !opt.show_depends && !opt.lookup_only)
			err = loader_kernel_new(ns_ctx, kversion, kmod_get_dirname(ctx), &policy_source, &kernel);
		if (err < 0) {
			LOG_ERROR("could not read the target kernel: %s\n", strerror(-err));
			goto done;
		}
		if (use_all) {
			int i;
			for (i = 0; i < nargs; i++) {
				int r = insert_alias(ctx, kernel, args[i], NULL);
				if (r < 0)
					err = r;
			}
		} else {
			_cleanup_free_ char *module_options = NULL;
			err = module_options_from_args(args + 1, nargs - 1, &module_options);
			if (err < 0)
				LOG_ERROR("could not gather module options: out-of-memory\n");
			else
				err = insert_alias(ctx, kernel, args[0], module_options);
		}
	}

done:
	kmodns_kernel_unref(kernel);
	loader_policy_source_release(&policy_source);
	kmodns_unref(ns_ctx);
	kmod_unref(ctx);
	loader_log_close();
	if (argv != orig_argv)
		free(argv);
	free(config_paths);
	return err >= 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
