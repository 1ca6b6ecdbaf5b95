// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmodns-preload.so: modprobe's pre-load check for the loaders that call libkmod themselves
 * (systemd-udevd, systemd-modules-load). Preloaded, it defines libkmod's two insertion entry
 * points:
 *  - kmod_module_probe_insert_module() learns the whole load set from libkmod's own dry run,
 *    judges every module of it with kmodns_kernel_check_load_set() and, when one is refused,
 *    loads nothing, says why in one line on stderr and returns -EPERM;
 *  - kmod_module_insert_module() judges its one module the same way.
 * Everything else is libkmod's. A process that opens libkmod.so.2 with dlopen() and looks its
 * functions up with dlsym() (systemd 257) would get libkmod's own probe function: dlopen() of
 * libkmod.so.2 hands out this object instead, whose dependencies put libkmod right behind it,
 * so dlsym() finds these two functions here and every other one in libkmod.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <syslog.h>

#include <libkmod.h>

#include "libkmodns.h"
#include "libkmodns-util.h"

#define PRELOAD_EXPORT __attribute__((visibility("default")))
#define LIBKMOD_SONAME "libkmod.so.2"

typedef int (*probe_insert_fn)(struct kmod_module *mod, unsigned flags, const char *extra_options,
			       int (*run_install)(struct kmod_module *m, const char *cmd, void *data),
			       const void *data,
			       void (*print_action)(struct kmod_module *m, bool install,
						    const char *options));
typedef int (*insert_fn)(struct kmod_module *mod, unsigned flags, const char *options);
typedef void *(*dlopen_fn)(const char *file, int mode);

/* The modules one probe would insert, in order, as libkmod's dry run listed them. */
struct load_set {
	struct kmod_module **mods;
	const char **names, **paths;
	size_t count, capacity;
	bool failed;
};

/* print_action has no data pointer: the dry run of this thread collects here. */
static __thread struct load_set *collecting;
/* The set of the probe this thread is running: libkmod inserts its modules one by one through
 * kmod_module_insert_module(), already judged. */
static __thread const struct load_set *judged;

static void load_set_add(struct load_set *set, struct kmod_module *mod)
{
	if (set->count == set->capacity) {
		size_t n = set->capacity ? set->capacity * 2 : 8;
		struct kmod_module **mods = realloc(set->mods, n * sizeof(*mods));
		const char **names = mods ? realloc(set->names, n * sizeof(*names)) : NULL;
		const char **paths = names ? realloc(set->paths, n * sizeof(*paths)) : NULL;

		if (mods != NULL)
			set->mods = mods;
		if (names != NULL)
			set->names = names;
		if (paths == NULL) {
			set->failed = true;
			return;
		}
		set->paths = paths;
		set->capacity = n;
	}
	set->mods[set->count] = kmod_module_ref(mod);
	set->names[set->count] = kmod_module_get_name(mod);
	set->paths[set->count++] = kmod_module_get_path(mod);
}

static void load_set_release(struct load_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		kmod_module_unref(set->mods[i]);
	free(set->mods);
	free(set->names);
	free(set->paths);
	*set = (struct load_set){ 0 };
}

static bool load_set_has(const struct load_set *set, const struct kmod_module *mod)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		if (set->mods[i] == mod)
			return true;
	return false;
}

static void collect_action(struct kmod_module *m, bool install, const char *options)
{
	/* an install command runs its own modprobe, which checks what it loads; a built-in has no file */
	if (!install && kmod_module_get_path(m) != NULL && collecting != NULL)
		load_set_add(collecting, m);
}

/* ---- the target kernels, one per module directory, read again when depmod rewrote it ---------- */

struct tree {
	char *dirname;
	struct kmodns_kernel *kernel;
	struct timespec index_mtime; /* of its modules.dep.bin when the kernel was read */
};

static pthread_mutex_t trees_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmodns_ctx *ns_ctx;
static struct tree *trees;
static size_t n_trees;

_printf_(6, 0) static void log_to_stderr(void *data, int priority, const char *file, int line,
					 const char *fn, const char *format, va_list args)
{
	_cleanup_free_ char *msg = NULL;
	int n = vasprintf(&msg, format, args);

	if (n > 0)
		fprintf(stderr, "kmodns: %s%s", msg, msg[n - 1] == '\n' ? "" : "\n");
}

/* libkmod 30 gives no way from a module to its context: libkmod builds a module's path on its
 * context's directory, so that is the nearest directory above the file with a modules.dep. */
static char *module_dir_of(const char *path)
{
	char *dir = strdup(path), *slash, probe[PATH_MAX];

	while (dir != NULL && (slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if ((snprintf(probe, sizeof(probe), "%s/modules.dep.bin", dir) < (int)sizeof(probe) &&
		     access(probe, F_OK) == 0) ||
		    (snprintf(probe, sizeof(probe), "%s/modules.dep", dir) < (int)sizeof(probe) &&
		     access(probe, F_OK) == 0))
			return dir;
	}
	free(dir);
	return NULL;
}

/* A module file outside any tree (insmod's kind) is judged for the running kernel. */
static char *running_module_dir(void)
{
	struct utsname u;
	char *dir;

	if (uname(&u) < 0 || asprintf(&dir, "/lib/modules/%s", u.release) < 0)
		return NULL;
	return dir;
}

/* The kernel of a module directory, judging with the installed policy (kmodns.d(5)) as modprobe. */
static int kernel_new(const char *dirname, struct kmodns_kernel **kernel)
{
	const char *release = strrchr(dirname, '/') + 1;
	struct kmodns_policy *policy = NULL;
	int r;

	if (ns_ctx == NULL) {
		ns_ctx = kmodns_new();
		if (ns_ctx == NULL)
			return -ENOMEM;
		kmodns_set_log_priority(ns_ctx, LOG_WARNING);
		kmodns_set_log_fn(ns_ctx, log_to_stderr, NULL);
	}
	r = kmodns_kernel_new(ns_ctx, release, dirname, kernel);
	if (r < 0)
		return r;
	/* a malformed line is logged and the rest applies, as in modprobe */
	r = kmodns_policy_new_installed(ns_ctx, NULL, &policy);
	if (r < 0) {
		fprintf(stderr, "kmodns: could not read the namespace policy: %s; the kernel's rule alone applies\n",
			strerror(-r));
		return 0;
	}
	kmodns_kernel_set_policy(*kernel, policy);
	kmodns_policy_unref(policy);
	return 0;
}

static struct timespec index_mtime(const char *dirname)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/modules.dep.bin", dirname) >= (int)sizeof(path) ||
	    stat(path, &st) < 0)
		return (struct timespec){ 0 };
	return st.st_mtim;
}

/* A daemon outlives a depmod run: a tree whose index changed is read again, as libkmod does. */
static int tree_refresh(struct tree *tree)
{
	struct timespec now = index_mtime(tree->dirname);
	struct kmodns_kernel *kernel;
	int r;

	if (now.tv_sec == tree->index_mtime.tv_sec && now.tv_nsec == tree->index_mtime.tv_nsec)
		return 0;
	r = kernel_new(tree->dirname, &kernel);
	if (r < 0)
		return r;
	kmodns_kernel_unref(tree->kernel);
	tree->kernel = kernel;
	tree->index_mtime = now;
	return 0;
}

static struct tree *tree_find(const char *path, bool below)
{
	size_t i;

	for (i = 0; i < n_trees; i++) {
		size_t len = strlen(trees[i].dirname);

		if (strncmp(path, trees[i].dirname, len) == 0 && path[len] == (below ? '/' : '\0'))
			return &trees[i];
	}
	return NULL;
}

/* The target kernel of the module at path; trees_lock held. */
static int kernel_of(const char *path, struct kmodns_kernel **kernel)
{
	_cleanup_free_ char *dirname = NULL;
	struct tree *tree = tree_find(path, true), *grown;
	int r;

	if (tree == NULL) {
		dirname = module_dir_of(path);
		if (dirname == NULL)
			dirname = running_module_dir();
		if (dirname == NULL)
			return -ENOMEM;
		tree = tree_find(dirname, false);
	}
	if (tree == NULL) {
		grown = realloc(trees, (n_trees + 1) * sizeof(*trees));
		if (grown == NULL)
			return -ENOMEM;
		trees = grown;
		tree = &trees[n_trees];
		r = kernel_new(dirname, &tree->kernel);
		if (r < 0)
			return r;
		tree->dirname = TAKE_PTR(dirname);
		tree->index_mtime = index_mtime(tree->dirname);
		n_trees++;
	} else {
		r = tree_refresh(tree);
		if (r < 0)
			return r;
	}
	*kernel = tree->kernel;
	return 0;
}

/* ---- the check ------------------------------------------------------------------------------ */

static void report(const struct kmodns_load_verdict *v)
{
	enum kmodns_load_status status = kmodns_load_verdict_get_status(v);
	_cleanup_free_ char *why = NULL;

	if (status == KMODNS_LOAD_ALLOWED)
		return;
	why = kmodns_load_verdict_describe(v);
	if (why == NULL)
		return;
	if (status == KMODNS_LOAD_REFUSED)
		fprintf(stderr, "kmodns: could not insert '%s': it %s\n",
			kmodns_load_verdict_get_module(v), why);
	else if (kmodns_load_verdict_get_policy_decision(v) >= 0)
		fprintf(stderr, "kmodns: '%s' %s\n", kmodns_load_verdict_get_module(v), why);
	else
		fprintf(stderr, "kmodns: '%s' %s; the kernel loads it anyway (CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y)\n",
			kmodns_load_verdict_get_module(v), why);
}

/* 0 when every module of set may load, -EPERM when one is refused (each refusal said). */
static int judge(const struct load_set *set)
{
	_cleanup_free_ struct kmodns_load_verdict **verdicts = calloc(set->count, sizeof(*verdicts));
	struct kmodns_kernel *kernel;
	size_t i;
	int r;

	if (verdicts == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&trees_lock);
	/* a set comes from one context: any of its modules names the kernel */
	r = kernel_of(set->paths[0], &kernel);
	if (r < 0) {
		fprintf(stderr, "kmodns: could not read the target kernel of '%s': %s; left to the kernel\n",
			set->names[0], strerror(-r));
		r = 0;
	} else {
		r = kmodns_kernel_check_load_set(kernel, set->names, set->paths, set->count, 0, verdicts);
	}
	pthread_mutex_unlock(&trees_lock);
	if (r < 0)
		return r;
	for (i = 0; i < set->count; i++) {
		if (verdicts[i] != NULL)
			report(verdicts[i]);
		kmodns_load_verdict_unref(verdicts[i]);
	}
	return r > 0 ? -EPERM : 0;
}

/* ---- libkmod's entry points ----------------------------------------------------------------- */

static void *next_symbol(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (sym == NULL)
		fprintf(stderr, "kmodns: %s not found after the preload: %s\n", name, dlerror());
	return sym;
}

PRELOAD_EXPORT int kmod_module_probe_insert_module(
	struct kmod_module *mod, unsigned flags, const char *extra_options,
	int (*run_install)(struct kmod_module *m, const char *cmd, void *data), const void *data,
	void (*print_action)(struct kmod_module *m, bool install, const char *options))
{
	static probe_insert_fn real;
	const struct load_set *outer = judged;
	struct load_set set = { 0 };
	int err;

	if (real == NULL && (real = (probe_insert_fn)next_symbol(__func__)) == NULL)
		return -ENOSYS;
	if (mod == NULL || (flags & KMOD_PROBE_DRY_RUN))
		return real(mod, flags, extra_options, run_install, data, print_action);

	collecting = &set;
	err = real(mod, flags | KMOD_PROBE_DRY_RUN, extra_options, run_install, data, collect_action);
	collecting = NULL;
	if (set.failed)
		err = -ENOMEM;
	/* nothing to load, or an error the real pass returns itself */
	else if (err == 0 && set.count > 0)
		err = judge(&set);
	else
		err = 0;
	if (err == 0) {
		judged = &set;
		err = real(mod, flags, extra_options, run_install, data, print_action);
		judged = outer;
	}
	load_set_release(&set);
	return err;
}

PRELOAD_EXPORT int kmod_module_insert_module(struct kmod_module *mod, unsigned flags,
					     const char *options)
{
	static insert_fn real;
	struct load_set set = { 0 };
	int err = 0;

	if (real == NULL && (real = (insert_fn)next_symbol(__func__)) == NULL)
		return -ENOSYS;
	if (mod == NULL || kmod_module_get_path(mod) == NULL || (judged != NULL && load_set_has(judged, mod)))
		return real(mod, flags, options);
	load_set_add(&set, mod);
	err = set.failed ? -ENOMEM : judge(&set);
	load_set_release(&set);
	return err < 0 ? err : real(mod, flags, options);
}

/* ---- dlopen("libkmod.so.2") ----------------------------------------------------------------- */

static bool is_libkmod(const char *file)
{
	const char *base = strrchr(file, '/');

	return streq(base != NULL ? base + 1 : file, LIBKMOD_SONAME);
}

/* This object, opened again: its dependency list puts libkmod right behind it. */
static __attribute__((noinline)) void *open_self(dlopen_fn real, int mode)
{
	Dl_info self;

	if (dladdr((void *)kmod_module_insert_module, &self) == 0 || self.dli_fname == NULL)
		return NULL;
	return real(self.dli_fname, mode | RTLD_NOLOAD);
}

PRELOAD_EXPORT void *dlopen(const char *file, int mode)
{
	static dlopen_fn real;

	if (real == NULL && (real = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen")) == NULL)
		return NULL;
	if (file != NULL && is_libkmod(file)) {
		void *handle = open_self(real, mode);

		if (handle != NULL)
			return handle;
	}
	/* a tail call: glibc takes the caller's return address for its search path and namespace */
	return real(file, mode);
}
