// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmodns-trap.so: an LD_PRELOAD object that lets module tools (ours and Debian's kmod) load and
 * remove modules in a test root instead of the kernel, without privileges.
 *
 * With KMODNS_TRAP_ROOT=ROOT set:
 *  - paths under /sys/module, /proc/modules, /proc/cmdline, /proc/sys/kernel/osrelease,
 *    /lib/modules, /lib/modprobe.d, /lib/depmod.d, /usr/local/lib/modprobe.d, /etc, /run and
 *    /usr/lib are opened, stat'ed, listed and read as ROOT/<path>;
 *  - uname() reports the release KMODNS_TRAP_UNAME_R, else ROOT/proc/sys/kernel/osrelease;
 *  - finit_module, init_module (the glibc wrappers and syscall(2)) "load" a module: they create
 *    ROOT/sys/module/NAME (initstate, refcnt, coresize, holders/), add a holders link to every
 *    module it depends on and put its line at the top of ROOT/proc/modules, as the kernel lists
 *    them; delete_module undoes that, refusing as the kernel does;
 *  - KMODNS_TRAP_FAIL=NAME:ERRNO[,NAME:ERRNO...] makes loading NAME fail with that errno;
 *  - KMODNS_TRAP_FORCE_UNLOAD=1 acts as a kernel with CONFIG_MODULE_FORCE_UNLOAD (Debian's is
 *    not): delete_module with O_TRUNC then removes a module whose refcount is not 0;
 *  - KMODNS_TRAP_LOG=FILE gets one line per call, e.g. `finit_module NAME "PARAMS" -> 0`,
 *    `init_module NAME "PARAMS" -> -2 ENOENT`, `delete_module NAME O_NONBLOCK -> 0`.
 * Without KMODNS_TRAP_ROOT every call goes straight to the C library.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libkmod.h>

#include "libkmodns-util.h"

#define TRAP_EXPORT __attribute__((visibility("default")))

/* Entry points without a prototype in glibc's headers (fortified opens, pre-2.33 stat, the
 * module calls). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int finit_module(int fd, const char *params, int flags);
int init_module(void *image, unsigned long len, const char *params);
int delete_module(const char *name, unsigned flags);

/* The kernel's paths a module tool reads, by prefix on a path-component boundary. */
static const char *const redirected[] = {
	"/sys/module", "/proc/modules", "/proc/cmdline", "/proc/sys/kernel/osrelease",
	"/lib/modules", "/lib/modprobe.d", "/lib/depmod.d", "/usr/local/lib/modprobe.d",
	"/etc", "/run", "/usr/lib",
};

static const char *trap_root(void)
{
	const char *root = getenv("KMODNS_TRAP_ROOT");

	return root != NULL && root[0] == '/' ? root : NULL;
}

static bool has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* path as seen in the test root: buf, or path itself when it is not redirected */
static const char *redirect(const char *path, char buf[PATH_MAX])
{
	const char *root = trap_root();
	size_t i;

	if (root == NULL || path == NULL || path[0] != '/' || has_prefix(path, root))
		return path;
	for (i = 0; i < ARRAY_SIZE(redirected); i++)
		if (has_prefix(path, redirected[i])) {
			if (snprintf(buf, PATH_MAX, "%s%s", root, path) >= PATH_MAX)
				return path;
			return buf;
		}
	return path;
}

/* buf = ROOT + the formatted rest; paths beyond PATH_MAX are cut (and then not found) */
static void __attribute__((format(printf, 3, 4))) root_path(char buf[PATH_MAX], const char *root, const char *fmt, ...)
{
	va_list ap;
	size_t n = (size_t)snprintf(buf, PATH_MAX, "%s", root);

	if (n >= PATH_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, PATH_MAX - n, fmt, ap);
	va_end(ap);
}

/* The next definition of a symbol (the C library's, or a sanitizer's interceptor). */
#define REAL(ret, name, ...)                                                    \
	static ret (*real_##name)(__VA_ARGS__);                                 \
	if (real_##name == NULL)                                                \
		real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);     \
	if (real_##name == NULL) {                                              \
		errno = ENOSYS;                                                 \
		return (ret)-1;                                                 \
	}

static bool open_has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* ---- the path wrappers ------------------------------------------------------------------- */

#define OPEN_WRAPPER(name)                                                      \
	TRAP_EXPORT int name(const char *path, int flags, ...)                  \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		mode_t mode = 0;                                                \
		REAL(int, name, const char *, int, ...);                        \
		if (open_has_mode(flags)) {                                     \
			va_list ap;                                             \
			va_start(ap, flags);                                    \
			mode = va_arg(ap, mode_t);                              \
			va_end(ap);                                             \
		}                                                               \
		return real_##name(redirect(path, buf), flags, mode);           \
	}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                    \
	TRAP_EXPORT int name(int dirfd, const char *path, int flags, ...)       \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		mode_t mode = 0;                                                \
		REAL(int, name, int, const char *, int, ...);                   \
		if (open_has_mode(flags)) {                                     \
			va_list ap;                                             \
			va_start(ap, flags);                                    \
			mode = va_arg(ap, mode_t);                              \
			va_end(ap);                                             \
		}                                                               \
		return real_##name(dirfd, redirect(path, buf), flags, mode);    \
	}
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

/* _FORTIFY_SOURCE's checked opens */
#define OPEN2_WRAPPER(name)                                                     \
	TRAP_EXPORT int name(const char *path, int flags)                       \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		REAL(int, name, const char *, int);                             \
		return real_##name(redirect(path, buf), flags);                 \
	}
OPEN2_WRAPPER(__open_2)
OPEN2_WRAPPER(__open64_2)

#define OPENAT2_WRAPPER(name)                                                   \
	TRAP_EXPORT int name(int dirfd, const char *path, int flags)            \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		REAL(int, name, int, const char *, int);                        \
		return real_##name(dirfd, redirect(path, buf), flags);          \
	}
OPENAT2_WRAPPER(__openat_2)
OPENAT2_WRAPPER(__openat64_2)

#define FOPEN_WRAPPER(name)                                                     \
	TRAP_EXPORT FILE *name(const char *path, const char *mode)              \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		static FILE *(*real)(const char *, const char *);               \
		if (real == NULL)                                               \
			real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, #name); \
		if (real == NULL) {                                             \
			errno = ENOSYS;                                         \
			return NULL;                                            \
		}                                                               \
		return real(redirect(path, buf), mode);                         \
	}
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

#define PATH_WRAPPER(ret, name, type2)                                          \
	TRAP_EXPORT ret name(const char *path, type2 arg)                       \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		REAL(ret, name, const char *, type2);                           \
		return real_##name(redirect(path, buf), arg);                   \
	}
PATH_WRAPPER(int, stat, struct stat *)
PATH_WRAPPER(int, stat64, struct stat64 *)
PATH_WRAPPER(int, lstat, struct stat *)
PATH_WRAPPER(int, lstat64, struct stat64 *)
PATH_WRAPPER(int, access, int)
PATH_WRAPPER(int, euidaccess, int)
PATH_WRAPPER(int, eaccess, int)
PATH_WRAPPER(int, mkdir, mode_t)

#define AT_WRAPPER(name, type3)                                                 \
	TRAP_EXPORT int name(int dirfd, const char *path, type3 arg, int flags) \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		REAL(int, name, int, const char *, type3, int);                 \
		return real_##name(dirfd, redirect(path, buf), arg, flags);     \
	}
AT_WRAPPER(fstatat, struct stat *)
AT_WRAPPER(fstatat64, struct stat64 *)
AT_WRAPPER(faccessat, int)

/* binaries built against glibc before 2.33 call the versioned stat entry points */
#define XSTAT_WRAPPER(name, type)                                               \
	TRAP_EXPORT int name(int ver, const char *path, type st)                \
	{                                                                       \
		char buf[PATH_MAX];                                             \
		REAL(int, name, int, const char *, type);                       \
		return real_##name(ver, redirect(path, buf), st);               \
	}
XSTAT_WRAPPER(__xstat, struct stat *)
XSTAT_WRAPPER(__lxstat, struct stat *)
XSTAT_WRAPPER(__xstat64, struct stat64 *)
XSTAT_WRAPPER(__lxstat64, struct stat64 *)

TRAP_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	char buf[PATH_MAX];
	REAL(int, __fxstatat, int, int, const char *, struct stat *, int);
	return real___fxstatat(ver, dirfd, redirect(path, buf), st, flags);
}

TRAP_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *st)
{
	char buf[PATH_MAX];
	REAL(int, statx, int, const char *, int, unsigned, struct statx *);
	return real_statx(dirfd, redirect(path, buf), flags, mask, st);
}

TRAP_EXPORT DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);
	char buf[PATH_MAX];

	if (real == NULL)
		real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	if (real == NULL) {
		errno = ENOSYS;
		return NULL;
	}
	return real(redirect(path, buf));
}

TRAP_EXPORT ssize_t readlink(const char *path, char *out, size_t size)
{
	char buf[PATH_MAX];
	REAL(ssize_t, readlink, const char *, char *, size_t);
	return real_readlink(redirect(path, buf), out, size);
}

TRAP_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *out, size_t size)
{
	char buf[PATH_MAX];
	REAL(ssize_t, readlinkat, int, const char *, char *, size_t);
	return real_readlinkat(dirfd, redirect(path, buf), out, size);
}

TRAP_EXPORT int uname(struct utsname *u)
{
	const char *root = trap_root(), *release = getenv("KMODNS_TRAP_UNAME_R");
	char path[PATH_MAX], file_release[sizeof(u->release)];
	int r;
	REAL(int, uname, struct utsname *);

	r = real_uname(u);
	if (r < 0 || root == NULL)
		return r;
	if (release == NULL || release[0] == '\0') {
		FILE *f;

		root_path(path, root, "/proc/sys/kernel/osrelease");
		f = fopen(path, "re");
		if (f == NULL)
			return r;
		if (fgets(file_release, sizeof(file_release), f) != NULL) {
			file_release[strcspn(file_release, "\n")] = '\0';
			release = file_release;
		}
		fclose(f);
		if (release == NULL)
			return r;
	}
	snprintf(u->release, sizeof(u->release), "%s", release);
	return r;
}

/* ---- the module state in ROOT ------------------------------------------------------------ */

static void trap_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trap_log(const char *fmt, ...)
{
	const char *file = getenv("KMODNS_TRAP_LOG");
	va_list ap;
	FILE *f;

	if (file == NULL || file[0] == '\0')
		return;
	f = fopen(file, "ae");
	if (f == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* " -> 0" or " -> -22 EINVAL" */
static void log_result(const char *call, const char *name, const char *detail, int err)
{
	if (err == 0)
		trap_log("%s %s %s -> 0\n", call, name, detail);
	else
		trap_log("%s %s %s -> -%d %s\n", call, name, detail, err,
			 strerrorname_np(err) ? strerrorname_np(err) : "?");
}

static int write_text(const char *path, const char *text)
{
	_cleanup_fclose_ FILE *f = fopen(path, "we");

	if (f == NULL || fputs(text, f) < 0)
		return -EIO;
	return fflush(f) == 0 ? 0 : -EIO;
}

static long read_number(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	long n = 0;

	if (f == NULL || fscanf(f, "%ld", &n) != 1)
		return 0;
	return n;
}

#ifndef MODULE_NAME_MAX
#define MODULE_NAME_MAX 64
#endif

/* One line of /proc/modules: "name size refcount users state address". */
struct proc_line {
	char name[MODULE_NAME_MAX];
	unsigned long size;
	long refcnt;
	char users[4096]; /* "a,b," or "" for the kernel's "-" */
	char state[16];
	char addr[32];
};

struct proc_modules {
	struct proc_line *lines;
	size_t count;
};

static void proc_modules_release(struct proc_modules *pm)
{
	free(pm->lines);
	pm->lines = NULL;
	pm->count = 0;
}

static int proc_modules_read(const char *root, struct proc_modules *pm)
{
	char path[PATH_MAX], users[4096];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	*pm = (struct proc_modules){ 0 };
	root_path(path, root, "/proc/modules");
	f = fopen(path, "re");
	if (f == NULL)
		return errno == ENOENT ? 0 : -errno;
	while (getline(&line, &cap, f) > 0) {
		struct proc_line *l, *grown = realloc(pm->lines, (pm->count + 1) * sizeof(*l));

		if (grown == NULL) {
			proc_modules_release(pm);
			return -ENOMEM;
		}
		pm->lines = grown;
		l = &pm->lines[pm->count];
		*l = (struct proc_line){ 0 };
		if (sscanf(line, "%63s %lu %ld %4095s %15s %31s", l->name, &l->size, &l->refcnt, users,
			   l->state, l->addr) < 5)
			continue;
		snprintf(l->users, sizeof(l->users), "%s", streq(users, "-") ? "" : users);
		if (l->addr[0] == '\0')
			snprintf(l->addr, sizeof(l->addr), "0x0000000000000000");
		pm->count++;
	}
	return 0;
}

static int proc_modules_write(const char *root, const struct proc_modules *pm)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	size_t i;

	root_path(path, root, "/proc/modules");
	root_path(tmp, root, "/proc/.modules.%d", (int)getpid());
	f = fopen(tmp, "we");
	if (f == NULL)
		return -errno;
	for (i = 0; i < pm->count; i++) {
		const struct proc_line *l = &pm->lines[i];

		fprintf(f, "%s %lu %ld %s %s %s\n", l->name, l->size, l->refcnt,
			l->users[0] ? l->users : "-", l->state, l->addr);
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

static struct proc_line *proc_modules_find(struct proc_modules *pm, const char *name)
{
	size_t i;

	for (i = 0; i < pm->count; i++)
		if (streq(pm->lines[i].name, name))
			return &pm->lines[i];
	return NULL;
}

/* A module's name for the kernel, as libkmod reads it from .modinfo, and its dependencies. */
struct module_facts {
	char name[MODULE_NAME_MAX];
	char *depends; /* "a,b" */
};

static void quiet_log(void *data, int priority, const char *file, int line, const char *fn,
		      const char *format, va_list args)
{
}

/* path: what libkmod reads (/proc/self/fd/N); file_name: the module's file, for its name when
 * .modinfo has no name= (libkmod's rule: the base name up to its first '.', '-' as '_'). */
static int module_facts_read(const char *path, const char *file_name, struct module_facts *facts)
{
	static const char *no_config = NULL;
	struct kmod_list *info = NULL, *l;
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx;
	int r;

	*facts = (struct module_facts){ 0 };
	ctx = kmod_new("/nonexistent", &no_config);
	if (ctx == NULL)
		return -ENOMEM;
	kmod_set_log_fn(ctx, quiet_log, NULL);
	r = kmod_module_new_from_path(ctx, path, &mod);
	if (r >= 0)
		r = kmod_module_get_info(mod, &info);
	if (r >= 0) {
		const char *base = strrchr(file_name, '/');
		char *c;

		snprintf(facts->name, sizeof(facts->name), "%s",
			 base != NULL ? base + 1 : file_name[0] ? file_name : kmod_module_get_name(mod));
		for (c = facts->name; *c != '\0'; c++)
			if (*c == '.')
				*c = '\0';
			else if (*c == '-')
				*c = '_';
		kmod_list_foreach(l, info) {
			const char *key = kmod_module_info_get_key(l), *value = kmod_module_info_get_value(l);

			if (value == NULL)
				continue;
			if (streq(key, "name"))
				snprintf(facts->name, sizeof(facts->name), "%s", value);
			else if (streq(key, "depends") && facts->depends == NULL)
				facts->depends = strdup(value);
		}
		/* .modinfo may spell a dependency with '-'; the kernel's names have '_' */
		for (c = facts->depends; c != NULL && *c != '\0'; c++)
			if (*c == '-')
				*c = '_';
		r = 0;
	}
	kmod_module_info_free_list(info);
	kmod_module_unref(mod);
	kmod_unref(ctx);
	/* the kernel refuses what is no module file */
	return r < 0 ? -ENOEXEC : 0;
}

/* KMODNS_TRAP_FAIL=name:ERRNO,...: the errno loading name must fail with, or 0. */
static int injected_failure(const char *name)
{
	const char *spec = getenv("KMODNS_TRAP_FAIL");
	_cleanup_free_ char *copy = NULL;
	char *item, *save = NULL;

	if (spec == NULL || (copy = strdup(spec)) == NULL)
		return 0;
	for (item = strtok_r(copy, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		int e;

		if (colon == NULL)
			continue;
		*colon = '\0';
		if (!streq(item, name))
			continue;
		for (e = 1; e < 4096; e++)
			if (strerrorname_np(e) != NULL && streq(strerrorname_np(e), colon + 1))
				return e;
		e = atoi(colon + 1);
		return e > 0 ? e : EINVAL;
	}
	return 0;
}

/* Loads the module file at path (size bytes; its name is path or else file_name) into ROOT;
 * 0 or a positive errno. */
static int load_module(const char *root, const char *path, const char *file_name, off_t size,
		       struct module_facts *facts)
{
	char dir[PATH_MAX], file[PATH_MAX];
	struct proc_modules pm = { 0 };
	struct proc_line *added;
	_cleanup_free_ char *deps = NULL;
	char *dep, *save = NULL;
	int r;

	r = module_facts_read(path, file_name, facts);
	if (r < 0)
		return -r;
	r = injected_failure(facts->name);
	if (r > 0)
		return r;
	r = proc_modules_read(root, &pm);
	if (r < 0)
		return -r;
	if (proc_modules_find(&pm, facts->name) != NULL) {
		proc_modules_release(&pm);
		return EEXIST;
	}
	/* the kernel resolves symbols against loaded modules: a missing provider is ENOENT */
	deps = strdup(facts->depends ? facts->depends : "");
	for (dep = strtok_r(deps, ",", &save); dep != NULL; dep = strtok_r(NULL, ",", &save))
		if (proc_modules_find(&pm, dep) == NULL) {
			proc_modules_release(&pm);
			return ENOENT;
		}

	root_path(dir, root, "/sys/module/%s", facts->name);
	root_path(file, root, "/sys/module/%s/holders", facts->name);
	if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || (mkdir(file, 0755) < 0 && errno != EEXIST)) {
		r = errno;
		proc_modules_release(&pm);
		return r;
	}
	root_path(file, root, "/sys/module/%s/initstate", facts->name);
	write_text(file, "live\n");
	root_path(file, root, "/sys/module/%s/refcnt", facts->name);
	write_text(file, "0\n");
	root_path(file, root, "/sys/module/%s/coresize", facts->name);
	{
		char text[32];

		snprintf(text, sizeof(text), "%lu\n", ((unsigned long)size + 4095) & ~4095UL);
		write_text(file, text);
	}

	/* each provider gains a holder, a reference and (first) a user in /proc/modules */
	free(deps);
	deps = strdup(facts->depends ? facts->depends : "");
	save = NULL;
	for (dep = strtok_r(deps, ",", &save); dep != NULL; dep = strtok_r(NULL, ",", &save)) {
		struct proc_line *l = proc_modules_find(&pm, dep);
		char link[PATH_MAX], target[PATH_MAX], users[sizeof(l->users)];

		root_path(link, root, "/sys/module/%s/holders/%s", dep, facts->name);
		snprintf(target, sizeof(target), "../../%s", facts->name);
		symlink(target, link);
		l->refcnt++;
		root_path(link, root, "/sys/module/%s/refcnt", dep);
		snprintf(target, sizeof(target), "%ld\n", l->refcnt);
		write_text(link, target);
		if (strlen(facts->name) + 1 + strlen(l->users) < sizeof(users)) {
			strcpy(users, facts->name);
			strcat(users, ",");
			strcat(users, l->users);
			memcpy(l->users, users, sizeof(users));
		}
	}

	/* the kernel lists the newest module first */
	added = realloc(pm.lines, (pm.count + 1) * sizeof(*pm.lines));
	if (added == NULL) {
		proc_modules_release(&pm);
		return ENOMEM;
	}
	pm.lines = added;
	memmove(pm.lines + 1, pm.lines, pm.count * sizeof(*pm.lines));
	pm.count++;
	added = &pm.lines[0];
	*added = (struct proc_line){ .refcnt = 0 };
	snprintf(added->name, sizeof(added->name), "%s", facts->name);
	added->size = ((unsigned long)size + 4095) & ~4095UL;
	snprintf(added->state, sizeof(added->state), "Live");
	snprintf(added->addr, sizeof(added->addr), "0x0000000000000000");
	r = proc_modules_write(root, &pm);
	proc_modules_release(&pm);
	return -r;
}

static int remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d == NULL)
		return unlink(path);
	while ((e = readdir(d)) != NULL) {
		char sub[PATH_MAX];

		if (streq(e->d_name, ".") || streq(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			remove_tree(sub);
		else
			unlink(sub);
	}
	closedir(d);
	return rmdir(path);
}

static bool dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (d == NULL)
		return true;
	while ((e = readdir(d)) != NULL)
		if (!streq(e->d_name, ".") && !streq(e->d_name, "..")) {
			empty = false;
			break;
		}
	closedir(d);
	return empty;
}

/* Removes name from ROOT; 0 or a positive errno, as the kernel's delete_module. */
static int unload_module(const char *root, const char *name, unsigned flags)
{
	char path[PATH_MAX];
	struct proc_modules pm = { 0 };
	struct proc_line *self;
	size_t i;
	int r;

	r = proc_modules_read(root, &pm);
	if (r < 0)
		return -r;
	self = proc_modules_find(&pm, name);
	if (self == NULL) {
		proc_modules_release(&pm);
		return ENOENT;
	}
	/* other modules use it: they go first */
	root_path(path, root, "/sys/module/%s/holders", name);
	if (self->users[0] != '\0' || !dir_is_empty(path)) {
		proc_modules_release(&pm);
		return EWOULDBLOCK;
	}
	if (!streq(self->state, "Live")) {
		proc_modules_release(&pm);
		return EBUSY;
	}
	root_path(path, root, "/sys/module/%s/refcnt", name);
	if ((self->refcnt > 0 || read_number(path) > 0) &&
	    !((flags & O_TRUNC) && getenv("KMODNS_TRAP_FORCE_UNLOAD") != NULL &&
	      streq(getenv("KMODNS_TRAP_FORCE_UNLOAD"), "1"))) {
		proc_modules_release(&pm);
		return EWOULDBLOCK;
	}

	/* it no longer holds the modules it used */
	for (i = 0; i < pm.count; i++) {
		struct proc_line *l = &pm.lines[i];
		char link[PATH_MAX], users[sizeof(l->users)] = "", *u, *save = NULL;
		bool held = false;

		root_path(link, root, "/sys/module/%s/holders/%s", l->name, name);
		if (unlink(link) == 0)
			held = true;
		for (u = strtok_r(l->users, ",", &save); u != NULL; u = strtok_r(NULL, ",", &save)) {
			if (streq(u, name)) {
				held = true;
				continue;
			}
			strncat(users, u, sizeof(users) - strlen(users) - 2);
			strcat(users, ",");
		}
		memcpy(l->users, users, sizeof(users));
		if (held && l->refcnt > 0) {
			char text[32];

			l->refcnt--;
			root_path(link, root, "/sys/module/%s/refcnt", l->name);
			snprintf(text, sizeof(text), "%ld\n", l->refcnt);
			write_text(link, text);
		}
	}
	i = (size_t)(self - pm.lines);
	memmove(pm.lines + i, pm.lines + i + 1, (pm.count - i - 1) * sizeof(*pm.lines));
	pm.count--;
	r = proc_modules_write(root, &pm);
	proc_modules_release(&pm);
	root_path(path, root, "/sys/module/%s", name);
	remove_tree(path);
	return -r;
}

/* ---- the module calls -------------------------------------------------------------------- */

static int trap_finit_module(int fd, const char *params, int flags)
{
	const char *root = trap_root();
	struct module_facts facts = { 0 };
	char fdpath[64], path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int err;

	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	/* the file's own path, so that a module without name= is named after it, as libkmod does */
	n = readlink(fdpath, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (fstat(fd, &st) < 0)
		err = EBADF;
	else
		err = load_module(root, fdpath, path, st.st_size, &facts);
	{
		_cleanup_free_ char *detail = NULL;

		if (asprintf(&detail, "\"%s\"", params ? params : "") >= 0)
			log_result("finit_module", facts.name[0] ? facts.name : "?", detail, err);
	}
	free(facts.depends);
	errno = err;
	return err == 0 ? 0 : -1;
}

static int trap_init_module(const void *image, unsigned long len, const char *params)
{
	const char *root = trap_root();
	struct module_facts facts = { 0 };
	_cleanup_free_ char *detail = NULL;
	char path[64];
	int fd, err = 0;

	/* the image goes through a file so that libkmod can read its .modinfo */
	fd = memfd_create("kmodns-trap-module", MFD_CLOEXEC);
	if (fd < 0 || write(fd, image, len) != (ssize_t)len)
		err = ENOMEM;
	if (err == 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		err = load_module(root, path, "", (off_t)len, &facts);
	}
	if (fd >= 0)
		close(fd);
	if (asprintf(&detail, "\"%s\"", params ? params : "") >= 0)
		log_result("init_module", facts.name[0] ? facts.name : "?", detail, err);
	free(facts.depends);
	errno = err;
	return err == 0 ? 0 : -1;
}

static int trap_delete_module(const char *name, unsigned flags)
{
	char detail[96] = "";
	unsigned rest = flags & ~(unsigned)(O_NONBLOCK | O_TRUNC);
	int err = unload_module(trap_root(), name, flags);

	if (flags & O_NONBLOCK)
		strcat(detail, "O_NONBLOCK");
	if (flags & O_TRUNC)
		strcat(detail, detail[0] ? "|O_TRUNC" : "O_TRUNC");
	if (rest != 0 || flags == 0)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "%s%#x",
			 detail[0] ? "|" : "", rest);
	log_result("delete_module", name, detail, err);
	errno = err;
	return err == 0 ? 0 : -1;
}

TRAP_EXPORT int finit_module(int fd, const char *params, int flags)
{
	if (trap_root() == NULL)
		return (int)syscall(SYS_finit_module, fd, params, flags);
	return trap_finit_module(fd, params, flags);
}

TRAP_EXPORT int init_module(void *image, unsigned long len, const char *params)
{
	REAL(int, init_module, void *, unsigned long, const char *);
	if (trap_root() == NULL)
		return real_init_module(image, len, params);
	return trap_init_module(image, len, params);
}

TRAP_EXPORT int delete_module(const char *name, unsigned flags)
{
	REAL(int, delete_module, const char *, unsigned);
	if (trap_root() == NULL)
		return real_delete_module(name, flags);
	return trap_delete_module(name, flags);
}

TRAP_EXPORT long syscall(long number, ...)
{
	long a[6];
	va_list ap;
	int i;
	REAL(long, syscall, long, ...);

	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (trap_root() != NULL) {
		switch (number) {
		case SYS_finit_module:
			return trap_finit_module((int)a[0], (const char *)a[1], (int)a[2]);
		case SYS_init_module:
			return trap_init_module((const void *)a[0], (unsigned long)a[1], (const char *)a[2]);
		case SYS_delete_module:
			return trap_delete_module((const char *)a[0], (unsigned)a[1]);
		}
	}
	return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
