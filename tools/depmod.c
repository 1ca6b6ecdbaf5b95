// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * depmod - generate modules.dep and map files.
 *
 * A drop-in for kmod 30's depmod: the same options, configuration, warnings
 * and exit codes, and the same bytes in every file it writes. The story:
 * read the configuration, find the modules, put them in modules.order's
 * order, read them all (in parallel, with libkmodns), learn the kernel's own
 * symbols, resolve each module's undefined symbols to the module exporting
 * them, sort the dependencies, and write every file to a temporary name,
 * renaming them all only once all are complete.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "libkmodns.h"
#include "libkmodns-cache.h"
#include "libkmodns-index.h"
#include "depmod-config.h"
#include "tool-util.h"

#define DEFAULT_MODULE_DIR "/lib/modules"
/* Our cache of read modules, beside the indexes (Debian's kernel postrm removes modules.*). */
#define CACHE_NAME "modules.kmodns.cache"
/* What the last complete run wrote and from what: if nothing changed since, nothing is rewritten. */
#define STAMP_NAME "modules.kmodns.stamp"

static const char options_short[] = "aAb:o:m:C:E:F:euqrvnP:wVh";
static const struct option options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "quick", no_argument, NULL, 'A' },
	{ "basedir", required_argument, NULL, 'b' },
	{ "outdir", required_argument, NULL, 'o' },
	{ "moduledir", required_argument, NULL, 'm' },
	{ "config", required_argument, NULL, 'C' },
	{ "symvers", required_argument, NULL, 'E' },
	{ "filesyms", required_argument, NULL, 'F' },
	{ "errsyms", no_argument, NULL, 'e' },
	{ "unresolved-error", no_argument, NULL, 'u' }, /* deprecated, ignored */
	{ "quiet", no_argument, NULL, 'q' },            /* deprecated, ignored */
	{ "root", no_argument, NULL, 'r' },             /* deprecated, ignored */
	{ "verbose", no_argument, NULL, 'v' },
	{ "show", no_argument, NULL, 'n' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "symbol-prefix", required_argument, NULL, 'P' },
	{ "warn", no_argument, NULL, 'w' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ "ns-check", no_argument, NULL, 'N' },
	{ "no-cache", no_argument, NULL, 'K' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	printf("Usage:\n"
	       "\t%s -[aA] [options] [forced_version]\n"
	       "\n"
	       "If no arguments (except options) are given, \"depmod -a\" is assumed\n"
	       "\n"
	       "depmod will output a dependency list suitable for the modprobe utility.\n"
	       "\n"
	       "Options:\n"
	       "\t-a, --all            Probe all modules\n"
	       "\t-A, --quick          Only does the work if there's a new module\n"
	       "\t-e, --errsyms        Report not supplied symbols\n"
	       "\t-n, --show           Write the dependency file on stdout only\n"
	       "\t-P, --symbol-prefix  Architecture symbol prefix\n"
	       "\t-C, --config=PATH    Read configuration from PATH\n"
	       "\t-v, --verbose        Enable verbose mode\n"
	       "\t-w, --warn           Warn on duplicates\n"
	       "\t-V, --version        show version\n"
	       "\t-h, --help           show this help\n"
	       "\t    --ns-check       Report modules the kernel would refuse for namespaces\n"
	       "\t    --no-cache       Read every module, neither using nor writing " CACHE_NAME "\n"
	       "\n"
	       "The following options are useful for people managing distributions:\n"
	       "\t-b, --basedir=DIR    Use an image of a module tree.\n"
	       "\t-m, --moduledir=DIR  Module directory below the base directory (default " DEFAULT_MODULE_DIR ").\n"
	       "\t-o, --outdir=DIR     Output directory for generated files.\n"
	       "\t-F, --filesyms=FILE  Use the file instead of the\n"
	       "\t                     current kernel symbols.\n"
	       "\t-E, --symvers=FILE   Use Module.symvers file to check\n"
	       "\t                     symbol versions.\n",
	       program_invocation_short_name);
}

static bool verbose;


_printf_(1, 2) static void info(const char *fmt, ...)
{
	va_list args;

	if (!verbose)
		return;
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
}

/* ---- the modules ---------------------------------------------------------- */

struct mod {
	char *path;       /* to read it */
	char *relpath;    /* as modules.dep writes it */
	char *uncrelpath; /* relpath without the compression suffix, as modules.order has it */
	char *name;       /* kernel name: base name up to the first '.', '-' as '_' */
	struct kmodns_module *ns;
	long sort_idx;
	uint32_t name_bucket; /* in kmod's table of modules by name */
	size_t idx;
	struct mod **deps;
	size_t n_deps, deps_capacity;
	unsigned users;
	size_t dep_sort_idx;
	struct stat st;                   /* of the file, taken before reading it: the cache key */
	bool have_st;
	bool from_cache;                  /* ns came from the cache, not the file */
	bool read_tried;                  /* ns was read (or failed to be) before the loader ran */
	uint8_t digest[KMODNS_CACHE_DIGEST_SIZE]; /* of its cache entry, once written */
	bool have_digest;
	struct kmodns_requires *requires; /* namespaces its symbols need */
	char *ns_record;                  /* the record stored in modules.dep.bin */
};

struct depmod {
	struct cfg *cfg;
	struct kmodns_ctx *ctx;
	struct mod **mods;
	size_t n_mods, mods_capacity;
	struct strset mod_names; /* index i is mod_by_name[i] */
	struct mod **mod_by_name;
	size_t mod_by_name_capacity;
	/* symbols: index i of names owned by owners[i] (NULL = the kernel) */
	struct strset symbols;
	struct symbol_owner {
		struct mod *owner;
		const struct kmodns_export *export; /* a module's export, for its namespace */
		bool has_crc;
		uint32_t crc;
	} *owners;
	size_t owners_capacity;
	/* vmlinux's exports with their namespaces: -E, else build/Module.symvers, else the image */
	struct kmodns_symvers *vmlinux;
	char *vmlinux_image;       /* the kernel image they came from, if so: kept in the cache */
	struct stat vmlinux_image_st;
	pthread_t vmlinux_thread;  /* reads them while the modules are read, and more */
	bool vmlinux_threaded, vmlinux_done;
	bool vmlinux_ready;        /* set by that thread once they are read (atomic) */
	struct loader *loader;     /* of the modules, which that thread joins once done */
	bool ns_check;
	/* modules read by an earlier run, unless --no-cache */
	bool use_cache;
	struct kmodns_module_cache *cache;
	/* the last complete run's stamp, and this run's, when this run may have one */
	bool stamp_wanted;
	struct kmodns_run_stamp *stamp;
	uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE];
	/* the output directory, opened once: every file is created, renamed, dated and removed
	 * relative to it (-1 until then) */
	int outfd;
	const char *symvers_path, *system_map_path; /* -E, -F */
};

static void mod_free(struct mod *m)
{
	free(m->path);
	free(m->relpath);
	free(m->uncrelpath);
	free(m->name);
	free(m->deps);
	free(m->ns_record);
	kmodns_requires_unref(m->requires);
	kmodns_module_unref(m->ns);
	free(m);
}

static void depmod_release(struct depmod *dm)
{
	size_t i;

	/* a failed run may end while the kernel image is still being read */
	if (dm->vmlinux_threaded)
		pthread_join(dm->vmlinux_thread, NULL);
	free(dm->loader);
	for (i = 0; i < dm->n_mods; i++)
		mod_free(dm->mods[i]);
	free(dm->mods);
	strset_release(&dm->mod_names);
	free(dm->mod_by_name);
	strset_release(&dm->symbols);
	free(dm->owners);
	kmodns_symvers_unref(dm->vmlinux);
	free(dm->vmlinux_image);
	kmodns_module_cache_free(dm->cache);
	kmodns_run_stamp_free(dm->stamp);
	if (dm->outfd >= 0)
		close(dm->outfd);
	dm->outfd = -1;
}

static const char *const module_suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };

static size_t module_suffix_len(const char *name)
{
	size_t len = strlen(name), i;

	for (i = 0; i < ARRAY_SIZE(module_suffixes); i++) {
		size_t sl = strlen(module_suffixes[i]);
		if (len > sl && streq(name + len - sl, module_suffixes[i]))
			return sl;
	}
	return 0;
}

/* kmod's rule, shared with libkmodns and the tests: see modname_from_path. */
static char *modname_from_filename(const char *base)
{
	return modname_from_path_dup(base, strlen(base));
}

static bool path_is_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return strncmp(path, dir, len) == 0 && path[len] == '/';
}

/* An override names "<subdir>/<module>": kmod compares it with a module's directory under the
 * module dir and its file name cut to the length of its module name. */
static bool override_matches(const struct override *ov, const struct mod *m)
{
	const char *base = strrchr(m->relpath, '/');
	size_t dirlen = base ? (size_t)(base - m->relpath) : 0, namelen = strlen(m->name);

	return m->relpath[0] != '/' && base != NULL && dirlen == strlen(ov->subdir) &&
	       memcmp(m->relpath, ov->subdir, dirlen) == 0 && strlen(ov->modname) == namelen &&
	       memcmp(base + 1, ov->modname, namelen) == 0;
}

/* Whether the module found first (old) stays when a same-named one (new) turns up, by kmod
 * 30's rules: the last override line naming either decides; else the search lines rank them,
 * the first word written ranking highest, "external" standing for each external directory and
 * "built-in" for whatever no word names; a tie (or no search word for either) keeps the old one.
 * As in kmod, a path word that names the new module is not tried on the old one. */
static bool search_keeps_old(const struct cfg *cfg, const struct mod *old, const struct mod *new)
{
	long rank = 0, builtin = -1, old_rank = -1, new_rank = -1;
	size_t i, e;

	for (i = cfg->n_overrides; i-- > 0;) {
		if (override_matches(&cfg->overrides[i], new))
			return false;
		if (override_matches(&cfg->overrides[i], old))
			return true;
	}
	/* the last word written ranks 0 */
	for (i = cfg->n_searches; i-- > 0; rank++) {
		const struct search *se = &cfg->searches[i];

		if (se->external) {
			for (e = cfg->n_externals; e-- > 0; rank++) {
				if (path_is_under(new->path, cfg->externals[e]))
					new_rank = rank;
				if (path_is_under(old->path, cfg->externals[e]))
					old_rank = rank;
			}
		} else if (se->path == NULL) {
			builtin = rank;
		} else if (new->relpath[0] != '/' && path_is_under(new->relpath, se->path)) {
			new_rank = rank;
		} else if (old->relpath[0] != '/' && path_is_under(old->relpath, se->path)) {
			old_rank = rank;
		}
	}
	if (new_rank < 0)
		new_rank = builtin;
	if (old_rank < 0)
		old_rank = builtin;
	return new_rank <= old_rank;
}

/* Adds a found module file, or lets it replace a same-named one of lower priority. */
/* st: the file's stat when the caller has one (the cache key), else NULL. */
static int depmod_add_module(struct depmod *dm, const char *path, const char *relpath,
			     const struct stat *st)
{
	const char *base = strrchr(path, '/');
	struct mod *m = calloc(1, sizeof(*m));
	long i;
	int r;

	if (m == NULL)
		return -ENOMEM;
	base = base ? base + 1 : path;
	m->path = strdup(path);
	m->relpath = strdup(relpath);
	m->uncrelpath = strndup(relpath, strlen(relpath) - module_suffix_len(relpath) + strlen(".ko"));
	m->name = modname_from_filename(base);
	if (!m->path || !m->relpath || !m->uncrelpath || !m->name) {
		mod_free(m);
		return -ENOMEM;
	}
	if (st != NULL) {
		m->st = *st;
		m->have_st = true;
	}
	i = strset_find(&dm->mod_names, m->name);
	if (i >= 0) {
		struct mod *old = dm->mod_by_name[i];
		bool replace = !search_keeps_old(dm->cfg, old, m);
		if (dm->cfg->warn_dups)
			tool_warn("%s: duplicate module %s, %s used", m->name, replace ? old->path : m->path,
				  replace ? m->path : old->path);
		if (!replace) {
			mod_free(m);
			return 0;
		}
		dm->mod_by_name[i] = m;
		for (size_t k = 0; k < dm->n_mods; k++)
			if (dm->mods[k] == old)
				dm->mods[k] = m;
		mod_free(old);
		return 0;
	}
	r = strset_add(&dm->mod_names, m->name);
	if (r >= 0)
		r = array_reserve((void **)&dm->mod_by_name, &dm->mod_by_name_capacity, sizeof(m),
				  dm->mod_names.count);
	if (r >= 0)
		r = array_reserve((void **)&dm->mods, &dm->mods_capacity, sizeof(m), dm->n_mods + 1);
	if (r < 0) {
		mod_free(m);
		return r;
	}
	dm->mod_by_name[dm->mod_names.count - 1] = m;
	m->sort_idx = (long)dm->n_mods;
	dm->mods[dm->n_mods++] = m;
	return 0;
}

/* Walks dir (path prefix rel for modules.dep: "" under the module dir, absolute for external ones). */
static int depmod_scan(struct depmod *dm, const char *dir, const char *rel, bool top)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int r = 0;

	if (d == NULL) {
		int err = errno;

		/* no module directory is an empty tree; any other failure is one */
		if (top && err == ENOENT)
			return 0;
		tool_err("could not open directory %s: %s", dir, strerror(err));
		return -err;
	}
	while ((de = readdir(d)) != NULL && r >= 0) {
		_cleanup_free_ char *path = NULL, *relpath = NULL;
		struct stat st;
		bool is_dir, have_st = false;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		/* the build and source links lead into the kernel's sources */
		if (streq(de->d_name, "build") || streq(de->d_name, "source"))
			continue;
		if (strset_find(&dm->cfg->excludes, de->d_name) >= 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0 ||
		    asprintf(&relpath, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0)
			return -ENOMEM;
		if (de->d_type == DT_DIR)
			is_dir = true;
		else if (de->d_type == DT_REG)
			is_dir = false;
		else if ((have_st = stat(path, &st) == 0))
			is_dir = S_ISDIR(st.st_mode);
		else
			continue;
		if (is_dir)
			r = depmod_scan(dm, path, relpath, false);
		else if (module_suffix_len(de->d_name) > 0)
			r = depmod_add_module(dm, path, relpath, have_st ? &st : NULL);
	}
	closedir(d);
	return r;
}

/* The module dir, then the external directories, the last written first, as kmod; a missing or
 * unreadable external directory is reported and skipped. */
static int depmod_scan_all(struct depmod *dm)
{
	const struct cfg *cfg = dm->cfg;
	int r = depmod_scan(dm, cfg->dirname, "", true);

	for (size_t i = cfg->n_externals; r >= 0 && i-- > 0;) {
		r = depmod_scan(dm, cfg->externals[i], cfg->externals[i], false);
		if (r < 0 && r != -ENOMEM)
			r = 0;
	}
	return r;
}

/* depmod VERSION FILE...: just these files, each an absolute path (kmod's FATAL errors). A file
 * under the module dir keeps its relative path in modules.dep, others their absolute one. */
static int depmod_add_files(struct depmod *dm, char **files, size_t n_files)
{
	const struct cfg *cfg = dm->cfg;

	for (size_t i = 0; i < n_files; i++) {
		const char *path = files[i], *relpath = path;
		_cleanup_free_ char *name = NULL;
		struct stat st;
		long found;
		int r;

		if (path[0] != '/') {
			tool_fatal("%s: not absolute path.", path);
			return -EINVAL;
		}
		if (stat(path, &st) < 0) {
			r = -errno;
			tool_fatal("could not create module %s: %s", path, strerror(-r));
			return r;
		}
		name = modname_from_filename(path);
		if (name == NULL)
			return -ENOMEM;
		found = strset_find(&dm->mod_names, name);
		if (found >= 0) {
			/* kmod refuses a second file of one name */
			if (streq(dm->mod_by_name[found]->path, path)) {
				tool_err("hash_add_unique %s: %s", name, strerror(EEXIST));
				tool_fatal("could not add module %s: %s", path, strerror(EEXIST));
			} else {
				tool_fatal("could not create module %s: %s", path, strerror(EEXIST));
			}
			return -EEXIST;
		}
		if (path_is_under(path, cfg->dirname))
			relpath = path + cfg->dirnamelen + 1;
		r = depmod_add_module(dm, path, relpath, NULL);
		if (r < 0) {
			tool_fatal("could not add module %s: %s", path, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* kmod's hash tables, whose order shows in its files: modules by name, symbols. */
#define MODULES_BY_NAME_BUCKETS 512u
#define SYMBOLS_BUCKETS 2048u

/* SuperFastHash (Paul Hsieh), over 16-bit words in host order, as kmod's hash table uses. */
static uint32_t superfast_hash(const char *key, size_t len)
{
	uint32_t hash = (uint32_t)len, tmp;
	size_t rem = len & 3, n = len / 4;
	uint16_t w0, w1;

	for (; n > 0; n--, key += 4) {
		memcpy(&w0, key, 2);
		memcpy(&w1, key + 2, 2);
		hash += w0;
		tmp = ((uint32_t)w1 << 11) ^ hash;
		hash = (hash << 16) ^ tmp;
		hash += hash >> 11;
	}
	switch (rem) {
	case 3:
		memcpy(&w0, key, 2);
		hash += w0;
		hash ^= hash << 16;
		hash ^= (uint32_t)(int32_t)(signed char)key[2] << 18;
		hash += hash >> 11;
		break;
	case 2:
		memcpy(&w0, key, 2);
		hash += w0;
		hash ^= hash << 11;
		hash += hash >> 17;
		break;
	case 1:
		hash += (uint32_t)(int32_t)(signed char)*key;
		hash ^= hash << 10;
		hash += hash >> 1;
		break;
	}
	hash ^= hash << 3;
	hash += hash >> 5;
	hash ^= hash << 4;
	hash += hash >> 17;
	hash ^= hash << 25;
	hash += hash >> 6;
	return hash;
}

static int mod_sort_cmp(const void *a, const void *b)
{
	const struct mod *x = *(struct mod *const *)a, *y = *(struct mod *const *)b;

	if (x->sort_idx != y->sort_idx)
		return x->sort_idx < y->sort_idx ? -1 : 1;
	if (x->name_bucket != y->name_bucket)
		return x->name_bucket < y->name_bucket ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* modules.order first, in its order; the rest after in the order of kmod's table of modules by
 * name (512 buckets, each sorted by name), which is where kmod leaves them: for DKMS's modules,
 * never listed, that order decides modules.dep and the priorities in the indexes. */
static int depmod_sort(struct depmod *dm)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	_cleanup_free_ long *line_of = NULL;
	struct strset order = { 0 };
	size_t size, i, cap = 0;
	long line = 0;
	char *p, *nl;

	if (asprintf(&path, "%s/modules.order", dm->cfg->dirname) < 0)
		return -ENOMEM;
	if (read_file(path, &data, &size) == 0) {
		for (p = data; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
			*nl = '\0';
			line++;
			if (*p == '\0')
				continue;
			/* a module listed twice takes the place of its last listing, as in kmod */
			if (strset_add(&order, p) < 0 ||
			    array_reserve((void **)&line_of, &cap, sizeof(long), order.count) < 0) {
				strset_release(&order);
				return -ENOMEM;
			}
			line_of[strset_find(&order, p)] = line;
		}
	}
	for (i = 0; i < dm->n_mods; i++) {
		struct mod *m = dm->mods[i];
		long k = strset_find(&order, m->uncrelpath);
		m->sort_idx = k >= 0 ? line_of[k] - line - 1 : 0;
		m->name_bucket = superfast_hash(m->name, strlen(m->name)) & (MODULES_BY_NAME_BUCKETS - 1);
	}
	strset_release(&order);
	qsort(dm->mods, dm->n_mods, sizeof(*dm->mods), mod_sort_cmp);
	for (i = 0; i < dm->n_mods; i++)
		dm->mods[i]->idx = i;
	return 0;
}

/* ---- vmlinux's exports ----------------------------------------------------------- */

/* A file depmod may read vmlinux's exports from, if it is there. */
static bool vmlinux_source_exists(char *path, size_t size, const char *dir, const char *name,
				  const char *suffix, struct stat *st)
{
	return snprintf(path, size, "%s/%s%s", dir, name, suffix) < (int)size && stat(path, st) == 0 &&
	       S_ISREG(st->st_mode);
}

/* vmlinux's exports from a kernel image: from the cache when the image is unchanged, since
 * decompressing it takes longer than reading every module of a plain tree. */
static int depmod_load_vmlinux_image(struct depmod *dm, const char *path, const struct stat *st)
{
	int r = -ENOENT;

	if (dm->cache != NULL && kmodns_module_cache_get_vmlinux(dm->cache, path, st, &dm->vmlinux) == 0)
		info("depmod: vmlinux's exports of %s from the cache\n", path);
	else
		r = kmodns_symvers_new_from_vmlinuz(dm->ctx, path, &dm->vmlinux);
	if (dm->vmlinux == NULL)
		return r;
	dm->vmlinux_image = strdup(path);
	dm->vmlinux_image_st = *st;
	return 0;
}

/*
 * vmlinux's namespaces: -E FILE, else build/Module.symvers, else the kernel image
 * (<basedir>/boot/vmlinuz-<version>, then vmlinuz or vmlinuz.unsigned in the module
 * directory, where newer Debian kernels keep it); without any they stay unknown (NULL).
 */
static void depmod_find_vmlinux_namespaces(struct depmod *dm)
{
	const struct cfg *cfg = dm->cfg;
	const struct { const char *dir, *name, *suffix; } images[] = {
		{ cfg->basedir, "boot/vmlinuz-", cfg->kversion },
		{ cfg->dirname, "vmlinuz", "" },
		{ cfg->dirname, "vmlinuz.unsigned", "" },
	};
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	if (dm->vmlinux != NULL) {
		return; /* -E, read with the kernel's CRCs */
	} else if (vmlinux_source_exists(path, sizeof(path), cfg->dirname, "build/Module.symvers", "", &st)) {
		kmodns_symvers_new_from_file(dm->ctx, path, &dm->vmlinux);
	} else {
		/* an image that cannot be read has said why (through the library's log): try the next */
		for (i = 0; i < ARRAY_SIZE(images) && dm->vmlinux == NULL; i++)
			if (vmlinux_source_exists(path, sizeof(path), images[i].dir, images[i].name,
						  images[i].suffix, &st))
				depmod_load_vmlinux_image(dm, path, &st);
	}
}

/* ---- reading the modules, on all cores -------------------------------------- */

/*
 * Two threads each holding a big decompressed module (amdgpu is 47 MB) would
 * outgrow kmod's peak memory: big ones are read one at a time, biggest first,
 * while the other threads read the small ones. Sizes are guessed from the
 * file, compressed ones at xz's typical 1:8.
 */
#define BIG_MODULE_BYTES (8u << 20)

static off_t mod_size_guess(const struct mod *m)
{
	if (!m->have_st)
		return 0;
	return m->st.st_size * (module_suffix_len(m->path) > strlen(".ko") ? 8 : 1);
}

static int mod_size_cmp(const void *a, const void *b)
{
	off_t x = mod_size_guess(*(struct mod *const *)a), y = mod_size_guess(*(struct mod *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

struct loader {
	struct depmod *dm;
	struct mod **queue; /* biggest first */
	size_t n, next, from_cache;
	struct mod **deferred; /* big ones met while another was being read */
	size_t n_deferred;
	pthread_mutex_t lock;     /* over next, deferred, closed and the relief */
	pthread_mutex_t big_lock; /* held while reading a big module; taken after lock, or alone */
	bool closed;              /* all read: no relief any more */
	bool relief_started;      /* the worker the vmlinux thread adds, once done, to take its core */
	pthread_t relief;
	int cannot_read;          /* -errno: a module went unread for want of memory or a library */
};

static bool mod_is_big(const struct loader *ld, const struct mod *m)
{
	const struct depmod *dm = ld->dm;

	return mod_size_guess(m) >= (off_t)BIG_MODULE_BYTES &&
	       !(dm->cache && kmodns_module_cache_has(dm->cache, m->path, &m->st,
						     kmodns_run_stamp_get_fresh_digest(dm->stamp, m->path, &m->st)));
}

/* The next module to read, NULL when all are taken; *big: the caller holds big_lock for it. */
static struct mod *loader_next(struct loader *ld, bool *big)
{
	struct mod *m = NULL;

	*big = false;
	pthread_mutex_lock(&ld->lock);
	for (;;) {
		if (ld->n_deferred > 0 && pthread_mutex_trylock(&ld->big_lock) == 0) {
			m = ld->deferred[--ld->n_deferred];
			*big = true;
			break;
		}
		if (ld->next < ld->n) {
			m = ld->queue[ld->next++];
			if (!mod_is_big(ld, m))
				break;
			if (pthread_mutex_trylock(&ld->big_lock) == 0) {
				*big = true;
				break;
			}
			ld->deferred[ld->n_deferred++] = m;
			m = NULL;
			continue;
		}
		if (ld->n_deferred == 0)
			break;
		/* only big ones are left: wait for the one being read */
		pthread_mutex_unlock(&ld->lock);
		pthread_mutex_lock(&ld->big_lock);
		pthread_mutex_lock(&ld->lock);
		if (ld->n_deferred > 0) {
			m = ld->deferred[--ld->n_deferred];
			*big = true;
		} else {
			pthread_mutex_unlock(&ld->big_lock);
		}
		break;
	}
	pthread_mutex_unlock(&ld->lock);
	return m;
}

static void *load_worker(void *data)
{
	struct loader *ld = data;
	struct mod *m;
	bool big;

	while ((m = loader_next(ld, &big)) != NULL) {
		const struct depmod *dm = ld->dm;
		if (m->read_tried) {
			/* read already, when the run stamp was checked */
		} else if (m->have_st && dm->cache &&
			   kmodns_module_cache_get(dm->cache, m->path, &m->st,
						   kmodns_run_stamp_get_fresh_digest(dm->stamp, m->path, &m->st),
						   &m->ns) == 0) {
			m->from_cache = true;
			__atomic_add_fetch(&ld->from_cache, 1, __ATOMIC_RELAXED);
		} else {
			/* an unreadable or corrupt module is reported (by the log function) and left out;
			 * one left out for want of memory or of libelf would make every file wrong */
			int r = kmodns_module_new_from_path(dm->ctx, m->path, 0, &m->ns);
			if (r == -ENOMEM || r == -ELIBACC)
				__atomic_store_n(&ld->cannot_read, r, __ATOMIC_RELAXED);
		}
		if (big)
			pthread_mutex_unlock(&ld->big_lock);
	}
	return NULL;
}

/* vmlinux's exports on a core of their own, then, if modules are left, one more reader there. */
static void *vmlinux_loader(void *data)
{
	struct depmod *dm = data;
	struct loader *ld = dm->loader;

	depmod_find_vmlinux_namespaces(dm);
	__atomic_store_n(&dm->vmlinux_ready, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&ld->lock);
	if (!ld->closed && (ld->next < ld->n || ld->n_deferred > 0))
		ld->relief_started = pthread_create(&ld->relief, NULL, load_worker, ld) == 0;
	pthread_mutex_unlock(&ld->lock);
	return NULL;
}

/* vmlinux's exports, once read: a kernel image may still be decompressing in its thread. */
static void depmod_wait_vmlinux(struct depmod *dm)
{
	if (dm->vmlinux_done)
		return;
	if (dm->vmlinux_threaded)
		pthread_join(dm->vmlinux_thread, NULL);
	else
		depmod_find_vmlinux_namespaces(dm);
	dm->vmlinux_threaded = false;
	dm->vmlinux_done = true;
}

static int depmod_load_modules(struct depmod *dm)
{
	struct loader *ld = calloc(1, sizeof(*ld));
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[64];
	size_t n_threads = n < 1 ? 1 : n > 64 ? 64 : (size_t)n, started = 0, i;
	char path[PATH_MAX];

	if (ld == NULL)
		return -ENOMEM;
	dm->loader = ld;
	*ld = (struct loader){ .dm = dm, .n = dm->n_mods, .lock = PTHREAD_MUTEX_INITIALIZER,
			       .big_lock = PTHREAD_MUTEX_INITIALIZER };
	/* a missing, damaged or stale cache only costs time: every module is then read */
	if (dm->use_cache &&
	    snprintf(path, sizeof(path), "%s/%s", dm->cfg->outdir, CACHE_NAME) < (int)sizeof(path))
		kmodns_module_cache_open(dm->ctx, path, &dm->cache);
	/* the stamp knows the content of modules found unchanged, under their new keys, since */
	if (dm->cache && dm->stamp == NULL &&
	    snprintf(path, sizeof(path), "%s/%s", dm->cfg->outdir, STAMP_NAME) < (int)sizeof(path))
		kmodns_run_stamp_open(dm->ctx, path, &dm->stamp);
	/* the stat before the read is the cache key: a file changed meanwhile is read again next time */
	for (i = 0; i < dm->n_mods; i++)
		if (!dm->mods[i]->have_st)
			dm->mods[i]->have_st = stat(dm->mods[i]->path, &dm->mods[i]->st) == 0;
	ld->queue = malloc(dm->n_mods * sizeof(*ld->queue) + 1);
	ld->deferred = malloc(dm->n_mods * sizeof(*ld->deferred) + 1);
	if (ld->queue == NULL || ld->deferred == NULL) {
		free(ld->queue);
		free(ld->deferred);
		return -ENOMEM;
	}
	memcpy(ld->queue, dm->mods, dm->n_mods * sizeof(*ld->queue));
	qsort(ld->queue, ld->n, sizeof(*ld->queue), mod_size_cmp);
	/* vmlinux's exports meanwhile, on one core: a kernel image takes as long to decompress as
	 * a plain tree to read; that thread adds a reader when done, if any module is left */
	if (n_threads > 1)
		dm->vmlinux_threaded = pthread_create(&dm->vmlinux_thread, NULL, vmlinux_loader, dm) == 0;
	for (i = dm->vmlinux_threaded ? 2 : 1; i < n_threads; i++)
		if (pthread_create(&threads[started], NULL, load_worker, ld) == 0)
			started++;
	load_worker(ld);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_lock(&ld->lock);
	ld->closed = true;
	pthread_mutex_unlock(&ld->lock);
	if (ld->relief_started)
		pthread_join(ld->relief, NULL);
	free(ld->queue);
	free(ld->deferred);
	ld->queue = ld->deferred = NULL;
	if (ld->cannot_read < 0)
		return ld->cannot_read;
	if (dm->cache)
		info("depmod: %zu of %zu modules unchanged since the last run\n", ld->from_cache, dm->n_mods);
	return 0;
}

/* ---- symbols and dependencies ------------------------------------------------- */

static const char *skip_prefix(const struct depmod *dm, const char *name)
{
	return dm->cfg->sym_prefix && name[0] == dm->cfg->sym_prefix ? name + 1 : name;
}

/* A later owner replaces an earlier one: the last module in order owns a twice-exported symbol. */
static int depmod_add_symbol(struct depmod *dm, const char *name, struct mod *owner,
			     const struct kmodns_export *export, bool has_crc, uint32_t crc)
{
	int r = strset_add(&dm->symbols, name);
	long i;

	if (r < 0)
		return r;
	r = array_reserve((void **)&dm->owners, &dm->owners_capacity, sizeof(*dm->owners),
			  dm->symbols.count);
	if (r < 0)
		return r;
	i = strset_find(&dm->symbols, name);
	dm->owners[i] = (struct symbol_owner){ owner, export, has_crc, crc };
	return 0;
}

/* -F System.map: "__ksymtab_<sym>" lines are the kernel's exports. */
static int depmod_load_system_map(struct depmod *dm, const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[4096];

	if (f == NULL) {
		tool_err("could not open '%s': %m", path);
		return -errno;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *sym = strstr(line, " __ksymtab_");
		int r;
		if (sym == NULL || line[0] == '\0')
			continue;
		sym += strlen(" __ksymtab_");
		sym[strcspn(sym, "\r\n")] = '\0';
		if (startswith(sym, "strings") || *sym == '\0')
			continue;
		r = depmod_add_symbol(dm, skip_prefix(dm, sym), NULL, NULL, false, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* -E Module.symvers: the vmlinux rows are the kernel's exports, with their CRCs; the table is
 * kept as vmlinux's namespaces. */
static int depmod_load_symvers(struct depmod *dm, const char *path)
{
	struct kmodns_symvers *sv;
	size_t i;
	int r;

	if (access(path, R_OK) < 0) {
		r = -errno;
		tool_fatal("could not load %s: %s", path, strerror(-r));
		return r;
	}
	r = kmodns_symvers_new_from_file(dm->ctx, path, &sv);
	if (r < 0)
		return r;
	for (i = 0; i < kmodns_symvers_get_count(sv) && r >= 0; i++) {
		const struct kmodns_export *e = kmodns_symvers_get_export(sv, i);
		uint32_t crc = 0;
		bool has_crc = kmodns_export_get_crc(e, &crc);
		if (streq(kmodns_export_get_owner(e), "vmlinux"))
			r = depmod_add_symbol(dm, skip_prefix(dm, kmodns_export_get_symbol(e)), NULL,
					      NULL, has_crc, crc);
	}
	/* the same table gives vmlinux's namespaces */
	dm->vmlinux = sv;
	return r;
}

static int mod_add_dependency(struct mod *m, struct mod *dep)
{
	size_t i;
	int r;

	for (i = 0; i < m->n_deps; i++)
		if (m->deps[i] == dep)
			return 0;
	r = array_reserve((void **)&m->deps, &m->deps_capacity, sizeof(dep), m->n_deps + 1);
	if (r < 0)
		return r;
	m->deps[m->n_deps++] = dep;
	dep->users++;
	return 0;
}

/* One symbol m needs: its owner becomes a dependency; -e and -E warnings as kmod gives them. */
static int depmod_resolve_symbol(struct depmod *dm, struct mod *m, const char *symbol, uint32_t crc,
				 bool weak)
{
	const char *name = skip_prefix(dm, symbol);
	long at = strset_find(&dm->symbols, name);
	const struct symbol_owner *o = at >= 0 ? &dm->owners[at] : NULL;

	if (o == NULL) {
		if (!weak && dm->cfg->print_unknown)
			tool_warn("%s needs unknown symbol %s", m->path, name);
		return 0;
	}
	/* a CRC missing on either side counts as 0 */
	if (dm->cfg->print_unknown && dm->cfg->check_symvers && !weak && crc != (o->has_crc ? o->crc : 0))
		tool_warn("%s disagrees about version of symbol %s", m->path, name);
	if (o->owner != NULL && o->owner != m)
		return mod_add_dependency(m, o->owner);
	return 0;
}

static int depmod_resolve(struct depmod *dm)
{
	size_t i, k;
	int r;

	for (i = 0; i < dm->n_mods; i++) {
		struct mod *m = dm->mods[i];
		for (k = 0; m->ns && k < kmodns_module_get_export_count(m->ns); k++) {
			const struct kmodns_export *e = kmodns_module_get_export(m->ns, k);
			uint32_t crc = 0;
			bool has_crc = kmodns_export_get_crc(e, &crc);
			r = depmod_add_symbol(dm, skip_prefix(dm, kmodns_export_get_symbol(e)), m, e,
					      has_crc, crc);
			if (r < 0)
				return r;
		}
	}
	for (i = 0; i < dm->n_mods; i++) {
		struct mod *m = dm->mods[i];
		struct strset undefined = { 0 };
		r = 0;

		if (m->ns == NULL)
			continue;
		for (k = 0; k < kmodns_module_get_undefined_count(m->ns); k++) {
			const struct kmodns_symbol *s = kmodns_module_get_undefined(m->ns, k);
			uint32_t crc;
			if (!kmodns_symbol_get_crc(s, &crc))
				crc = 0;
			r = strset_add(&undefined, kmodns_symbol_get_name(s));
			if (r >= 0)
				r = depmod_resolve_symbol(dm, m, kmodns_symbol_get_name(s), crc,
							  kmodns_symbol_is_weak(s));
			if (r < 0)
				break;
		}
		/* like kmod: __versions entries without a symbol (module_layout) are needed symbols too */
		for (k = 0; r >= 0 && k < kmodns_module_get_version_count(m->ns); k++) {
			const char *name = kmodns_module_get_version_symbol(m->ns, k);
			if (strset_find(&undefined, name) < 0)
				r = depmod_resolve_symbol(dm, m, name, kmodns_module_get_version_crc(m->ns, k), false);
		}
		strset_release(&undefined);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- namespaces --------------------------------------------------------------- */

/* The export a module's undefined symbol resolves to: another module's, else vmlinux's. */
static const struct kmodns_export *depmod_find_export(void *data, const char *symbol)
{
	struct depmod *dm = data;
	long at = strset_find(&dm->symbols, skip_prefix(dm, symbol));

	if (at >= 0 && dm->owners[at].owner != NULL)
		return dm->owners[at].export;
	return dm->vmlinux ? kmodns_symvers_find(dm->vmlinux, symbol) : NULL;
}

/* What each module needs, imports, misses: once vmlinux's exports are read. */
static int depmod_compute_namespaces(struct depmod *dm)
{
	size_t i;
	int r;

	depmod_wait_vmlinux(dm);
	/* said only when asked (-v, --ns-check): kmod's depmod says nothing here, and neither may
	 * ours by default; not counted as a problem, since a default run is silent about it */
	if (dm->vmlinux == NULL && (verbose || dm->ns_check))
		fprintf(stderr, "%s: WARNING: no Module.symvers or kernel image for %s (use -E): namespaces of vmlinux's exports are unknown\n",
			program_invocation_short_name, dm->cfg->kversion);
	for (i = 0; i < dm->n_mods; i++) {
		struct mod *m = dm->mods[i];
		if (m->ns == NULL)
			continue;
		r = kmodns_module_get_requires(m->ns, depmod_find_export, dm, &m->requires);
		if (r >= 0)
			r = kmodns_ns_record_format(m->ns, m->requires, dm->vmlinux != NULL, &m->ns_record);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --ns-check: what finit_module would refuse, one modpost-style line per module, read from the
 * records stored in modules.dep.bin so that the check and the index cannot disagree. */
static int depmod_ns_check(struct depmod *dm)
{
	size_t i, k, refused = 0;
	int r;

	for (i = 0; i < dm->n_mods; i++) {
		const struct mod *m = dm->mods[i];
		struct kmodns_ns_record *rec;
		bool bad = false;
		if (m->ns_record == NULL)
			continue;
		r = kmodns_ns_record_new_from_text(m->ns_record, &rec);
		if (r < 0)
			return r;
		for (k = 0; !bad && k < kmodns_ns_record_get_import_count(rec); k++) {
			if (!kmodns_verdict_is_refused(kmodns_ns_record_get_import_verdict(rec, k)))
				continue;
			tool_err("%s: module %s explicitly imports namespace \"%s\", which is not allowed",
				 m->path, m->name, kmodns_ns_record_get_import(rec, k));
			bad = true;
		}
		for (k = 0; !bad && k < kmodns_ns_record_get_require_count(rec); k++) {
			if (!kmodns_verdict_is_refused(kmodns_ns_record_get_require_verdict(rec, k)))
				continue;
			tool_err("%s: module %s uses symbol %s from namespace %s, but does not import it.",
				 m->path, m->name, kmodns_ns_record_get_require_symbol(rec, k),
				 kmodns_ns_record_get_require_namespace(rec, k));
			bad = true;
		}
		kmodns_ns_record_unref(rec);
		refused += bad;
	}
	return refused > 0 ? -EINVAL : 0;
}

/*
 * The cycle report, in kmod's words and order (kmod 30's output, which kmod 34.2's testsuite
 * expects): the modules Kahn's algorithm could not place are taken in module order, each not
 * yet named in a reported cycle being a start; from a start, a depth-first walk (the last
 * dependency first) reports every path that comes back to the start, "Cycle detected: start
 * -> ... -> start". A module without dependencies is no start any more once walked through;
 * the modules of a reported path neither. The starts form a ring: the next start is the one
 * after the start last taken out of it, whether it was taken as a start or struck off (kmod's
 * list makes the element after a removed one its head). A module once walked through stays
 * so for later starts: a start already walked through is reported alone, as kmod does. Where
 * kmod's walk would go round a cycle that does not contain its start for ever, ours does not
 * enter a module already on the path. Then "Found N modules in dependency cycles!" with N the
 * modules named in some path before its last.
 */
struct cycle_starts {
	size_t *next, *prev;
	bool *in;
	size_t head, count; /* head: SIZE_MAX when empty */
};

static void cycle_starts_remove(struct cycle_starts *st, size_t mod)
{
	if (!st->in[mod])
		return;
	st->in[mod] = false;
	if (--st->count == 0) {
		st->head = SIZE_MAX;
		return;
	}
	st->next[st->prev[mod]] = st->next[mod];
	st->prev[st->next[mod]] = st->prev[mod];
	st->head = st->next[mod];
}
struct cycle_vertex {
	size_t mod;    /* index in dm->mods */
	size_t parent; /* index in the vertex pool, SIZE_MAX for the start */
};

static bool cycle_on_path(const struct cycle_vertex *pool, size_t v, size_t mod)
{
	for (; v != SIZE_MAX; v = pool[v].parent)
		if (pool[v].mod == mod)
			return true;
	return false;
}

static int depmod_report_one_cycle(struct depmod *dm, const struct cycle_vertex *pool, size_t v,
				   struct cycle_starts *start, bool *in_cycle, size_t *n_cycle_mods)
{
	_cleanup_free_ size_t *chain = NULL;
	size_t n = 0, cap = 0, p;
	char *line = NULL;
	size_t line_len = 0;
	FILE *mem;

	for (p = pool[v].parent; p != SIZE_MAX; p = pool[p].parent) {
		if (array_reserve((void **)&chain, &cap, sizeof(*chain), n + 1) < 0)
			return -ENOMEM;
		chain[n++] = pool[p].mod;
		if (!in_cycle[pool[p].mod]) {
			in_cycle[pool[p].mod] = true;
			(*n_cycle_mods)++;
		}
	}
	mem = open_memstream(&line, &line_len);
	if (mem == NULL)
		return -ENOMEM;
	while (n-- > 0) {
		fprintf(mem, "%s -> ", dm->mods[chain[n]]->name);
		cycle_starts_remove(start, chain[n]);
	}
	fputs(dm->mods[pool[v].mod]->name, mem);
	if (memstream_close(mem, &line) < 0)
		return -ENOMEM;
	tool_err("Cycle detected: %s", line);
	free(line);
	return 0;
}

static int depmod_report_cycles_from(struct depmod *dm, size_t root, struct cycle_starts *start, bool *visited,
				     bool *in_cycle, size_t *n_cycle_mods)
{
	_cleanup_free_ struct cycle_vertex *pool = NULL;
	_cleanup_free_ size_t *stack = NULL;
	size_t n_pool = 0, pool_cap = 0, n_stack = 0, stack_cap = 0, k;
	int r;

	if (array_reserve((void **)&pool, &pool_cap, sizeof(*pool), 1) < 0 ||
	    array_reserve((void **)&stack, &stack_cap, sizeof(*stack), 1) < 0)
		return -ENOMEM;
	pool[n_pool++] = (struct cycle_vertex){ root, SIZE_MAX };
	stack[n_stack++] = 0;
	while (n_stack > 0) {
		size_t v = stack[--n_stack], mi = pool[v].mod;
		const struct mod *m = dm->mods[mi];

		if (visited[mi] && mi == root) {
			r = depmod_report_one_cycle(dm, pool, v, start, in_cycle, n_cycle_mods);
			if (r < 0)
				return r;
			continue;
		}
		visited[mi] = true;
		if (m->n_deps == 0) {
			cycle_starts_remove(start, mi);
			continue;
		}
		for (k = 0; k < m->n_deps; k++) {
			size_t d = m->deps[k]->idx;
			if (d != root && cycle_on_path(pool, v, d))
				continue;
			if (array_reserve((void **)&pool, &pool_cap, sizeof(*pool), n_pool + 1) < 0 ||
			    array_reserve((void **)&stack, &stack_cap, sizeof(*stack), n_stack + 1) < 0)
				return -ENOMEM;
			pool[n_pool] = (struct cycle_vertex){ d, v };
			stack[n_stack++] = n_pool++;
		}
	}
	return 0;
}

static void depmod_report_cycles(struct depmod *dm, const unsigned *users)
{
	size_t n = dm->n_mods ? dm->n_mods : 1, n_cycle_mods = 0, i, first = SIZE_MAX, last = 0;
	_cleanup_free_ size_t *next = calloc(n, sizeof(size_t));
	_cleanup_free_ size_t *prev = calloc(n, sizeof(size_t));
	_cleanup_free_ bool *in = calloc(n, sizeof(bool));
	_cleanup_free_ bool *visited = calloc(n, sizeof(bool));
	_cleanup_free_ bool *in_cycle = calloc(n, sizeof(bool));
	struct cycle_starts start = { next, prev, in, SIZE_MAX, 0 };

	if (next == NULL || prev == NULL || in == NULL || visited == NULL || in_cycle == NULL) {
		tool_err("No memory to report cycles");
		return;
	}
	/* the ring of starts: the modules left unplaced, in module order */
	for (i = 0; i < dm->n_mods; i++) {
		if (users[i] == 0)
			continue;
		if (first == SIZE_MAX) {
			first = i;
		} else {
			next[last] = i;
			prev[i] = last;
		}
		in[i] = true;
		last = i;
		start.count++;
	}
	if (first != SIZE_MAX) {
		next[last] = first;
		prev[first] = last;
		start.head = first;
	}
	while (start.head != SIZE_MAX) {
		size_t root = start.head;

		cycle_starts_remove(&start, root);
		if (depmod_report_cycles_from(dm, root, &start, visited, in_cycle, &n_cycle_mods) < 0) {
			tool_err("No memory to report cycles");
			return;
		}
	}
	tool_err("Found %zu modules in dependency cycles!", n_cycle_mods);
}

/* Kahn's algorithm, a LIFO of modules without users seeded in module order: dep_sort_idx. */
static int depmod_sort_dependencies(struct depmod *dm)
{
	_cleanup_free_ unsigned *users = calloc(dm->n_mods ? dm->n_mods : 1, sizeof(unsigned));
	_cleanup_free_ size_t *roots = calloc(dm->n_mods ? dm->n_mods : 1, sizeof(size_t));
	size_t i, n_roots = 0, n_sorted = 0;

	if (users == NULL || roots == NULL)
		return -ENOMEM;
	for (i = 0; i < dm->n_mods; i++) {
		users[i] = dm->mods[i]->users;
		if (users[i] == 0)
			roots[n_roots++] = i;
	}
	while (n_roots > 0) {
		struct mod *src = dm->mods[roots[--n_roots]];
		src->dep_sort_idx = n_sorted++;
		for (i = 0; i < src->n_deps; i++)
			if (--users[src->deps[i]->idx] == 0)
				roots[n_roots++] = src->deps[i]->idx;
	}
	if (n_sorted < dm->n_mods) {
		depmod_report_cycles(dm, users);
		return -EINVAL;
	}
	return 0;
}

static void mod_collect_deps(const struct mod *m, const struct mod **all, size_t *n, bool *in)
{
	size_t i;

	for (i = 0; i < m->n_deps; i++) {
		const struct mod *d = m->deps[i];
		if (in[d->idx])
			continue;
		in[d->idx] = true;
		all[(*n)++] = d;
		mod_collect_deps(d, all, n, in);
	}
}

static int dep_sort_cmp(const void *a, const void *b)
{
	const struct mod *x = *(const struct mod *const *)a, *y = *(const struct mod *const *)b;

	return x->dep_sort_idx < y->dep_sort_idx ? -1 : x->dep_sort_idx > y->dep_sort_idx;
}

/* The modules.dep line of m, without newline (caller frees). */
static char *mod_dep_line(const struct depmod *dm, const struct mod *m, const struct mod **all,
			  bool *in)
{
	char *line = NULL;
	size_t len = 0, n = 0, i;
	FILE *mem = open_memstream(&line, &len);

	if (mem == NULL)
		return NULL;
	fprintf(mem, "%s:", m->relpath);
	mod_collect_deps(m, all, &n, in);
	qsort(all, n, sizeof(*all), dep_sort_cmp);
	for (i = 0; i < n; i++) {
		fprintf(mem, " %s", all[i]->relpath);
		in[all[i]->idx] = false;
	}
	if (memstream_close(mem, &line) < 0)
		return NULL;
	return line;
}

/* ---- the files ------------------------------------------------------------------ */

#define NS_RECORD_PRIORITY 0xffffffffu

static int output_deps(struct depmod *dm, FILE *out, struct kmodns_index_builder *idx)
{
	_cleanup_free_ const struct mod **all = calloc(dm->n_mods ? dm->n_mods : 1, sizeof(*all));
	_cleanup_free_ bool *in = calloc(dm->n_mods ? dm->n_mods : 1, sizeof(bool));
	size_t i;
	int r = 0;

	if (all == NULL || in == NULL)
		return -ENOMEM;
	for (i = 0; i < dm->n_mods && r >= 0; i++) {
		const struct mod *m = dm->mods[i];
		_cleanup_free_ char *line = mod_dep_line(dm, m, all, in);
		if (line == NULL)
			return -ENOMEM;
		if (out)
			fprintf(out, "%s\n", line);
		if (idx)
			r = kmodns_index_builder_add(idx, m->name, line, (unsigned)i);
		/* after the real line, with a larger priority: stock libkmod reads only the first */
		if (idx && r >= 0 && m->ns_record)
			r = kmodns_index_builder_add(idx, m->name, m->ns_record, NS_RECORD_PRIORITY);
	}
	return r;
}

static bool modinfo_is(const struct mod *m, size_t k, const char *key)
{
	return streq(kmodns_module_get_modinfo_key(m->ns, k), key);
}

static int output_aliases(struct depmod *dm, FILE *out, struct kmodns_index_builder *idx)
{
	struct strset seen = { 0 };
	size_t i, k;
	int r = 0;

	if (out)
		fputs("# Aliases extracted from modules themselves.\n", out);
	for (i = 0; i < dm->n_mods; i++) {
		const struct mod *m = dm->mods[i];
		for (k = 0; m->ns && k < kmodns_module_get_modinfo_count(m->ns) && r >= 0; k++) {
			const char *v = kmodns_module_get_modinfo_value(m->ns, k);
			if (!modinfo_is(m, k, "alias"))
				continue;
			if (out)
				fprintf(out, "alias %s %s\n", v, m->name);
			if (idx) {
				_cleanup_free_ char *key = alias_normalize(v);
				/* like kmod: the text keeps it, the index cannot */
				if (key == NULL) {
					tool_warn("Unmatched bracket in %s", v);
					continue;
				}
				/* -w: the same alias twice for one module, as kmod reports it */
				if (dm->cfg->warn_dups) {
					_cleanup_free_ char *pair = NULL;
					if (asprintf(&pair, "%s %s", key, m->name) < 0) {
						r = -ENOMEM;
						continue;
					}
					if (strset_add(&seen, pair) == 0)
						tool_warn("duplicate module alias:\n%s", pair);
				}
				r = kmodns_index_builder_add(idx, key, m->name, (unsigned)i);
				if (r == -EINVAL)
					tool_err("%s: alias '%s' is not 7-bit ASCII", m->path, v);
			}
		}
	}
	strset_release(&seen);
	return r;
}

static int output_softdeps(struct depmod *dm, FILE *out, const char *key, const char *header,
			   const char *directive)
{
	size_t i, k;

	fputs(header, out);
	for (i = 0; i < dm->n_mods; i++) {
		const struct mod *m = dm->mods[i];
		for (k = 0; m->ns && k < kmodns_module_get_modinfo_count(m->ns); k++)
			if (modinfo_is(m, k, key))
				fprintf(out, "%s %s %s\n", directive, m->name,
					kmodns_module_get_modinfo_value(m->ns, k));
	}
	return 0;
}

struct symbol_row {
	uint32_t bucket;
	const char *name;
	const struct mod *owner;
};

static int symbol_row_cmp(const void *a, const void *b)
{
	const struct symbol_row *x = a, *y = b;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* In the order of kmod's 2048-bucket hash table: bucket, then name. */
static int output_symbols(struct depmod *dm, FILE *out, struct kmodns_index_builder *idx)
{
	_cleanup_free_ struct symbol_row *rows = calloc(dm->symbols.count + 1, sizeof(*rows));
	size_t i, n = 0;
	int r = 0;

	if (rows == NULL)
		return -ENOMEM;
	for (i = 0; i < dm->symbols.count; i++) {
		const char *name = dm->symbols.items[i];
		if (dm->owners[i].owner == NULL)
			continue;
		rows[n++] = (struct symbol_row){ superfast_hash(name, strlen(name)) & (SYMBOLS_BUCKETS - 1), name,
						 dm->owners[i].owner };
	}
	qsort(rows, n, sizeof(*rows), symbol_row_cmp);
	if (out)
		fputs("# Aliases for symbols, used by symbol_request().\n", out);
	for (i = 0; i < n && r >= 0; i++) {
		if (out)
			fprintf(out, "alias symbol:%s %s\n", rows[i].name, rows[i].owner->name);
		if (idx) {
			_cleanup_free_ char *key = NULL;
			if (asprintf(&key, "symbol:%s", rows[i].name) < 0)
				return -ENOMEM;
			r = kmodns_index_builder_add(idx, key, rows[i].owner->name, (unsigned)rows[i].owner->idx);
		}
	}
	return r;
}

static int output_devname(struct depmod *dm, FILE *out)
{
	bool empty = true;
	size_t i, k;

	for (i = 0; i < dm->n_mods; i++) {
		const struct mod *m = dm->mods[i];
		const char *devname = NULL;
		unsigned major = 0, minor = 0, maj, min;
		char type = '\0';

		for (k = 0; m->ns && k < kmodns_module_get_modinfo_count(m->ns); k++) {
			const char *v = kmodns_module_get_modinfo_value(m->ns, k);
			if (!modinfo_is(m, k, "alias"))
				continue;
			if (startswith(v, "devname:"))
				devname = v + strlen("devname:");
			else if (sscanf(v, "char-major-%u-%u", &maj, &min) == 2)
				type = 'c', major = maj, minor = min;
			else if (sscanf(v, "block-major-%u-%u", &maj, &min) == 2)
				type = 'b', major = maj, minor = min;
			if (type != '\0' && devname != NULL)
				break;
		}
		if (devname == NULL)
			continue;
		if (type == '\0') {
			tool_err("Module '%s' has devname (%s) but lacks major and minor information. Ignoring.",
				 m->name, devname);
			continue;
		}
		if (empty)
			fputs("# Device nodes to trigger on-demand module loading.\n", out);
		empty = false;
		fprintf(out, "%s %s %c%u:%u\n", m->name, devname, type, major, minor);
	}
	return 0;
}

/* An index callback's answer when its input file is missing: kmod then writes an empty file. */
#define NO_INPUT 1

/* A file of the kernel build beside the modules; a missing one is warned about as kmod does. */
static int read_tree_file(const struct depmod *dm, const char *name, char **data, size_t *size)
{
	_cleanup_free_ char *path = NULL;
	int r;

	if (asprintf(&path, "%s/%s", dm->cfg->dirname, name) < 0)
		return -ENOMEM;
	r = read_file(path, data, size);
	if (r == -ENOMEM) {
		tool_err("could not read %s at %s: %s", name, dm->cfg->dirname, strerror(-r));
		return r;
	}
	if (r < 0) {
		tool_warn("could not open %s at %s: %s", name, dm->cfg->dirname, strerror(-r));
		return NO_INPUT;
	}
	return 0;
}

/* modules.builtin: one "kernel/path/name.ko" per line; the key is the module name. */
static int output_builtin(struct depmod *dm, struct kmodns_index_builder *idx)
{
	_cleanup_free_ char *data = NULL;
	size_t size;
	char *p, *nl;
	int r = read_tree_file(dm, "modules.builtin", &data, &size);

	if (r != 0)
		return r;
	for (p = data; r >= 0 && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		const char *base;
		_cleanup_free_ char *name = NULL;
		/* kmod takes only lines that start with a letter, and says so with the raw line */
		if (!isalpha((unsigned char)*p)) {
			tool_err("Invalid modules.builtin line: %.*s", (int)(nl - p + 1), p);
			continue;
		}
		*nl = '\0';
		base = strrchr(p, '/');
		name = modname_from_filename(base ? base + 1 : p);
		r = name ? kmodns_index_builder_add(idx, name, "", 0) : -ENOMEM;
	}
	return r;
}

/* modules.builtin.modinfo: NUL-separated "module.key=value"; the alias records. */
static int output_builtin_alias(struct depmod *dm, struct kmodns_index_builder *idx)
{
	_cleanup_free_ char *data = NULL;
	size_t size;
	char *p, *end;
	int r = read_tree_file(dm, "modules.builtin.modinfo", &data, &size);

	if (r != 0)
		return r;
	for (p = data, end = data + size; p < end && r >= 0; p += strlen(p) + 1) {
		char *dot = strchr(p, '.'), *eq;
		if (dot == NULL || !startswith(dot + 1, "alias="))
			continue;
		eq = strchr(dot, '=');
		if (eq[1] == '\0' || dot == p)
			continue;
		*dot = '\0';
		{
			_cleanup_free_ char *key = alias_normalize(eq + 1);
			if (key == NULL)
				tool_warn("Unmatched bracket in %s", eq + 1);
			else
				r = kmodns_index_builder_add(idx, key, p, 0);
		}
		*dot = '.';
	}
	return r;
}

/* modules.namespaces: the records for people and grep (format in modules.namespaces(5)). */
static int output_namespaces(struct depmod *dm, FILE *out)
{
	size_t i, k;
	int r;

	fprintf(out, "# Symbol namespaces of modules: imports, exports, requirements.\n"
		     "# vmlinux namespaces %s\n", dm->vmlinux ? "known" : "unknown");
	for (i = 0; i < dm->n_mods; i++) {
		const struct mod *m = dm->mods[i];
		struct kmodns_ns_record *rec;
		if (m->ns_record == NULL)
			continue;
		r = kmodns_ns_record_new_from_text(m->ns_record, &rec);
		if (r < 0)
			return r;
		for (k = 0; k < kmodns_ns_record_get_import_count(rec); k++)
			fprintf(out, "%s %s %s\n", m->name,
				kmodns_verdict_is_refused(kmodns_ns_record_get_import_verdict(rec, k)) ?
					"refused-import" : "import",
				kmodns_ns_record_get_import(rec, k));
		for (k = 0; k < kmodns_ns_record_get_export_count(rec); k++)
			fprintf(out, "%s export %s\n", m->name, kmodns_ns_record_get_export(rec, k));
		for (k = 0; k < kmodns_ns_record_get_require_count(rec); k++)
			fprintf(out, "%s %s %s %s %s\n", m->name,
				kmodns_verdict_is_refused(kmodns_ns_record_get_require_verdict(rec, k)) ?
					"missing" : "require",
				kmodns_ns_record_get_require_namespace(rec, k),
				kmodns_ns_record_get_require_exporter(rec, k),
				kmodns_ns_record_get_require_symbol(rec, k));
		/* with vmlinux unknown, an import vmlinux serves would look unused */
		for (k = 0; kmodns_ns_record_vmlinux_known(rec) &&
			    k < kmodns_ns_record_get_unused_count(rec); k++)
			fprintf(out, "%s unused %s\n", m->name, kmodns_ns_record_get_unused(rec, k));
		kmodns_ns_record_unref(rec);
	}
	return 0;
}

enum output_kind { TEXT, INDEX, CACHE };

static int output_cache(struct depmod *dm, FILE *out)
{
	struct kmodns_module_cache_writer *w = kmodns_module_cache_writer_new();
	size_t i;
	int r = w ? 0 : -ENOMEM;

	for (i = 0; i < dm->n_mods && r >= 0; i++) {
		struct mod *m = dm->mods[i];
		if (m->from_cache)
			r = kmodns_module_cache_writer_add_cached(w, dm->cache, m->path, &m->st, m->digest);
		else if (m->ns != NULL && m->have_st)
			r = kmodns_module_cache_writer_add(w, m->ns, &m->st, m->digest);
		else
			continue;
		m->have_digest = r >= 0;
	}
	if (r >= 0 && dm->vmlinux_image != NULL)
		r = kmodns_module_cache_writer_set_vmlinux(w, dm->vmlinux_image, &dm->vmlinux_image_st, dm->vmlinux);
	if (r >= 0)
		r = kmodns_module_cache_writer_write(w, out);
	kmodns_module_cache_writer_free(w);
	return r;
}

struct output {
	const char *name;
	enum output_kind kind;
	bool ours; /* not written by kmod 30: left out of -n, whose output is kmod's */
	bool needs_namespaces; /* written once vmlinux's exports are read (the rest meanwhile) */
	int (*text)(struct depmod *dm, FILE *out);
	int (*index)(struct depmod *dm, struct kmodns_index_builder *idx);
};

static int text_deps(struct depmod *dm, FILE *out) { return output_deps(dm, out, NULL); }
static int index_deps(struct depmod *dm, struct kmodns_index_builder *idx) { return output_deps(dm, NULL, idx); }
static int text_aliases(struct depmod *dm, FILE *out) { return output_aliases(dm, out, NULL); }
static int index_aliases(struct depmod *dm, struct kmodns_index_builder *idx) { return output_aliases(dm, NULL, idx); }
static int text_symbols(struct depmod *dm, FILE *out) { return output_symbols(dm, out, NULL); }
static int index_symbols(struct depmod *dm, struct kmodns_index_builder *idx) { return output_symbols(dm, NULL, idx); }
static int text_softdeps(struct depmod *dm, FILE *out)
{
	return output_softdeps(dm, out, "softdep", "# Soft dependencies extracted from modules themselves.\n", "softdep");
}
static int text_weakdeps(struct depmod *dm, FILE *out)
{
	return output_softdeps(dm, out, "weakdep", "# Weak dependencies extracted from modules themselves.\n", "weakdep");
}

/* What kmod 30 writes, in its order, and modules.weakdep as kmod 33 added it. */
static const struct output outputs[] = {
	{ "modules.dep", TEXT, false, false, text_deps, NULL },
	{ "modules.dep.bin", INDEX, false, true, NULL, index_deps }, /* with the namespace records */
	{ "modules.alias", TEXT, false, false, text_aliases, NULL },
	{ "modules.alias.bin", INDEX, false, false, NULL, index_aliases },
	{ "modules.softdep", TEXT, false, false, text_softdeps, NULL },
	{ "modules.weakdep", TEXT, true, false, text_weakdeps, NULL }, /* kmod 33+; kmod 30 ignores it */
	{ "modules.symbols", TEXT, false, false, text_symbols, NULL },
	{ "modules.symbols.bin", INDEX, false, false, NULL, index_symbols },
	{ "modules.builtin.bin", INDEX, false, false, NULL, output_builtin },
	{ "modules.builtin.alias.bin", INDEX, false, false, NULL, output_builtin_alias },
	{ "modules.devname", TEXT, false, false, output_devname, NULL },
	{ "modules.namespaces", TEXT, true, true, output_namespaces, NULL },
	{ CACHE_NAME, CACHE, true, true, output_cache, NULL }, /* with vmlinux's exports from an image */
};

static int write_output(struct depmod *dm, const struct output *o, FILE *out)
{
	struct kmodns_index_builder *idx;
	int r;

	if (o->kind != INDEX)
		return o->text(dm, out);
	idx = kmodns_index_builder_new();
	if (idx == NULL)
		return -ENOMEM;
	r = o->index(dm, idx);
	if (r == NO_INPUT)
		r = 0; /* nothing at all, not even a header */
	else if (r >= 0)
		r = kmodns_index_builder_write(idx, out);
	kmodns_index_builder_free(idx);
	return r;
}

/* One output being written to its temporary file. */
struct output_job {
	struct depmod *dm;
	const struct output *o;
	char tmp[PATH_MAX];
	FILE *f;
	int r;
	struct stat st; /* of the complete file, before it is renamed */
	pthread_t thread;
	bool threaded;
};

/* The output directory, opened on first use; fd or -errno (not reported). */
static int depmod_outdir_fd(struct depmod *dm)
{
	if (dm->outfd < 0)
		dm->outfd = tool_dir_open(dm->cfg->outdir);
	return dm->outfd;
}

/* A new temporary file for the job's output in the output directory (job->tmp: its name there). */
static int output_job_open(struct output_job *job)
{
	const char *outdir = job->dm->cfg->outdir;
	int dirfd = depmod_outdir_fd(job->dm), fd;

	job->tmp[0] = '\0';
	if (dirfd < 0) {
		tool_err("could not open directory %s: %s", outdir, strerror(-dirfd));
		return dirfd;
	}
	fd = tool_tmpfile_at(dirfd, job->o->name, job->tmp, sizeof(job->tmp));
	if (fd < 0) {
		tool_err("could not create temporary file %s/.%s.XXXXXX: %s", outdir, job->o->name,
			 strerror(-fd));
		return fd;
	}
	job->f = fdopen(fd, "w");
	if (job->f == NULL) {
		int r = -errno;
		tool_err("could not create temporary file %s/%s: %m", outdir, job->tmp);
		close(fd);
		unlinkat(dirfd, job->tmp, 0);
		job->tmp[0] = '\0';
		return r;
	}
	return 0;
}

static void *output_job_write(void *data)
{
	struct output_job *job = data;

	job->r = write_output(job->dm, job->o, job->f);
	if (ferror(job->f))
		job->r = -EIO;
	return NULL;
}

/* Waits for the job's thread, if any; closes the file and, if asked, reports a failure by name. */
static int output_job_finish(struct output_job *job, bool report)
{
	if (job->threaded)
		pthread_join(job->thread, NULL);
	job->threaded = false;
	if (job->f == NULL)
		return 0;
	if (fclose(job->f) != 0 && job->r >= 0)
		job->r = -errno;
	job->f = NULL;
	if (job->r >= 0 && fstatat(job->dm->outfd, job->tmp, &job->st, 0) < 0)
		job->r = -errno;
	if (job->r < 0 && report)
		tool_err("could not write %s/%s: %s", job->dm->cfg->outdir, job->o->name, strerror(-job->r));
	return job->r;
}

/* Writes, one after another, the outputs but the cache whose needs_namespaces is as given;
 * stops at the first failure (reported). */
static int output_jobs_write(struct output_job *jobs, bool needs_namespaces)
{
	size_t i;
	int r = 0;

	for (i = 0; i < ARRAY_SIZE(outputs) && r >= 0; i++) {
		if (outputs[i].needs_namespaces != needs_namespaces || outputs[i].kind == CACHE)
			continue;
		r = output_job_open(&jobs[i]);
		if (r >= 0) {
			output_job_write(&jobs[i]);
			r = output_job_finish(&jobs[i], true);
		}
	}
	return r;
}

/* ---- the run stamp: a rerun that would write the same bytes writes nothing ---- */

/* Modules found changed beyond this are read by the parallel loader, not one by one here. */
#define STAMP_REREAD_MAX 64

/* Feeds md with path and its key (size, mtime, inode), or zeroes when it is not there. */
static void digest_file_key(EVP_MD_CTX *md, const char *path)
{
	struct stat st;
	uint64_t key[4] = { 0 };

	if (stat(path, &st) == 0) {
		key[0] = (uint64_t)st.st_size;
		key[1] = (uint64_t)st.st_mtim.tv_sec;
		key[2] = (uint64_t)st.st_mtim.tv_nsec;
		key[3] = (uint64_t)st.st_ino;
	}
	EVP_DigestUpdate(md, path, strlen(path) + 1);
	EVP_DigestUpdate(md, key, sizeof(key));
}

/*
 * Everything but the modules that the outputs are made of: this program, the
 * options, the configuration files read, the tree's modules.order and
 * modules.builtin*, and every place vmlinux's exports may come from, each by its key.
 */
static int depmod_inputs_digest(struct depmod *dm)
{
	static const char *const tree_files[] = {
		"modules.order", "modules.builtin", "modules.builtin.modinfo",
		"build/Module.symvers", "vmlinuz", "vmlinuz.unsigned",
	};
	const struct cfg *cfg = dm->cfg;
	const char flags[] = { cfg->sym_prefix, cfg->print_unknown, cfg->check_symvers, cfg->warn_dups };
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char path[PATH_MAX];
	ssize_t len;
	size_t i;
	int r = -ENOMEM;

	if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	EVP_DigestUpdate(md, PACKAGE_VERSION, sizeof(PACKAGE_VERSION));
	/* a rebuilt or updated depmod may write other bytes (without /proc: all zero, as before) */
	len = readlink("/proc/self/exe", path, sizeof(path) - 1);
	path[len > 0 ? len : 0] = '\0';
	digest_file_key(md, path);
	EVP_DigestUpdate(md, cfg->dirname, strlen(cfg->dirname) + 1);
	EVP_DigestUpdate(md, flags, sizeof(flags));
	for (i = 0; i < cfg->config_files.count; i++)
		digest_file_key(md, cfg->config_files.items[i]);
	r = -ENAMETOOLONG;
	for (i = 0; i < ARRAY_SIZE(tree_files); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", cfg->dirname, tree_files[i]) >= (int)sizeof(path))
			goto out;
		digest_file_key(md, path);
	}
	if (snprintf(path, sizeof(path), "%s/boot/vmlinuz-%s", cfg->basedir, cfg->kversion) >= (int)sizeof(path))
		goto out;
	digest_file_key(md, path);
	digest_file_key(md, dm->symvers_path ? dm->symvers_path : "");
	digest_file_key(md, dm->system_map_path ? dm->system_map_path : "");
	r = EVP_DigestFinal_ex(md, dm->inputs, NULL) == 1 ? 0 : -EIO;
out:
	EVP_MD_CTX_free(md);
	return r;
}

static int output_path(const struct depmod *dm, const char *name, char *path, size_t size)
{
	return snprintf(path, size, "%s/%s", dm->cfg->outdir, name) < (int)size ? 0 : -ENAMETOOLONG;
}

/*
 * Writes this run's stamp: keys[i], the key of outputs[i] as this run left it (taken
 * from its own file, not the name: another depmod may have renamed its own in since),
 * and each module's key and digest.
 */
static int depmod_write_stamp(struct depmod *dm, const struct stat *keys)
{
	static const struct output stamp_output = { STAMP_NAME, CACHE, true, false, NULL, NULL };
	struct output_job job = { .dm = dm, .o = &stamp_output };
	struct kmodns_run_stamp_writer *w = kmodns_run_stamp_writer_new(dm->inputs);
	char path[PATH_MAX];
	size_t i;
	int r = w ? 0 : -ENOMEM;

	for (i = 0; i < ARRAY_SIZE(outputs) && r >= 0; i++) {
		if (outputs[i].kind == CACHE)
			continue;
		r = output_path(dm, outputs[i].name, path, sizeof(path));
		if (r >= 0)
			r = kmodns_run_stamp_writer_add(w, path, &keys[i], NULL);
	}
	for (i = 0; i < dm->n_mods && r >= 0; i++)
		r = kmodns_run_stamp_writer_add(w, dm->mods[i]->path, &dm->mods[i]->st, dm->mods[i]->digest);
	if (r < 0) {
		tool_err("could not write %s/%s: %s", dm->cfg->outdir, STAMP_NAME, strerror(-r));
	} else if ((r = output_job_open(&job)) >= 0) {
		job.r = kmodns_run_stamp_writer_write(w, job.f);
		r = output_job_finish(&job, true);
		if (r >= 0 && renameat(dm->outfd, job.tmp, dm->outfd, STAMP_NAME) < 0) {
			r = -errno;
			tool_err("could not rename %s/%s to %s/%s: %m", dm->cfg->outdir, job.tmp,
				 dm->cfg->outdir, STAMP_NAME);
		}
		if (r < 0 && job.tmp[0] != '\0')
			unlinkat(dm->outfd, job.tmp, 0);
	}
	kmodns_run_stamp_writer_free(w);
	return r;
}

/* Whether a stamp may stand for this run's outputs: every module read and kept in the cache,
 * nothing said (a rerun that skips the work would not say it again), vmlinux's exports known
 * (a rerun with -v says when they are not). */
static bool depmod_may_stamp(const struct depmod *dm)
{
	size_t i;

	if (!dm->stamp_wanted || tool_problem_count() > 0 || dm->vmlinux == NULL)
		return false;
	for (i = 0; i < dm->n_mods; i++)
		if (!dm->mods[i]->have_digest)
			return false;
	return true;
}

/*
 * Whether the last run's outputs still stand: its stamp has this run's inputs, every
 * output is as it was written, and every module is the same file (key) or has the same
 * content (digest, of the few re-read here).
 */
static bool depmod_outputs_unchanged(struct depmod *dm)
{
	char path[PATH_MAX];
	size_t n_outputs = 0, i, k, unchanged = 0, reread = 0;
	struct stat st;

	if (!dm->stamp_wanted || tool_problem_count() > 0 || depmod_inputs_digest(dm) < 0 ||
	    depmod_outdir_fd(dm) < 0 || output_path(dm, STAMP_NAME, path, sizeof(path)) < 0 ||
	    kmodns_run_stamp_open(dm->ctx, path, &dm->stamp) < 0 ||
	    !kmodns_run_stamp_inputs_equal(dm->stamp, dm->inputs))
		return false;
	for (i = 0; i < ARRAY_SIZE(outputs); i++) {
		if (outputs[i].kind == CACHE)
			continue;
		k = n_outputs++;
		if (k >= kmodns_run_stamp_get_count(dm->stamp) || output_path(dm, outputs[i].name, path, sizeof(path)) < 0 ||
		    !streq(kmodns_run_stamp_get_path(dm->stamp, k), path) ||
		    fstatat(dm->outfd, outputs[i].name, &st, 0) < 0 ||
		    !kmodns_run_stamp_key_matches(dm->stamp, k, &st))
			return false;
	}
	if (kmodns_run_stamp_get_count(dm->stamp) != n_outputs + dm->n_mods)
		return false;
	for (i = 0; i < dm->n_mods; i++) {
		struct mod *m = dm->mods[i];
		const uint8_t *was = kmodns_run_stamp_get_digest(dm->stamp, n_outputs + i);
		k = n_outputs + i;
		if (was == NULL || !streq(kmodns_run_stamp_get_path(dm->stamp, k), m->path))
			return false;
		if (!m->have_st && !(m->have_st = stat(m->path, &m->st) == 0))
			return false;
		if (kmodns_run_stamp_key_matches(dm->stamp, k, &m->st)) {
			unchanged++;
		} else {
			/* a new file: the same content? (kept if not, for the loader) */
			if (++reread > STAMP_REREAD_MAX)
				return false;
			m->read_tried = true;
			if (kmodns_module_new_from_path(dm->ctx, m->path, 0, &m->ns) < 0 ||
			    kmodns_module_cache_digest(m->ns, m->digest) < 0 ||
			    memcmp(m->digest, was, KMODNS_CACHE_DIGEST_SIZE) != 0)
				return false;
		}
		memcpy(m->digest, was, KMODNS_CACHE_DIGEST_SIZE);
		m->have_digest = true;
	}
	info("depmod: %zu of %zu modules unchanged since the last run\n", unchanged, dm->n_mods);
	return true;
}

/* The outputs stand: they are dated now, as if written (depmod -A compares modules.dep's
 * date with the modules'), and the stamp takes the new keys. */
static int depmod_touch_outputs(struct depmod *dm)
{
	struct stat keys[ARRAY_SIZE(outputs)];
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(outputs); i++) {
		_cleanup_close_ int fd = -1;
		if (outputs[i].kind == CACHE || output_path(dm, outputs[i].name, path, sizeof(path)) < 0)
			continue;
		fd = openat(dm->outfd, outputs[i].name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || futimens(fd, NULL) < 0 || fstat(fd, &keys[i]) < 0) {
			int r = -errno;
			tool_err("could not update %s: %m", path);
			return r;
		}
	}
	info("depmod: the files in %s are up to date: not rewritten\n", dm->cfg->outdir);
	return depmod_write_stamp(dm, keys);
}

/* Whether name is one of our temporary files (".<output>.XXXXXX", tool_tmpfile_at). */
static bool is_temporary_output(const char *name)
{
	size_t i, len;

	if (name[0] != '.')
		return false;
	for (i = 0; i <= ARRAY_SIZE(outputs); i++) {
		const char *o = i < ARRAY_SIZE(outputs) ? outputs[i].name : STAMP_NAME;
		len = strlen(o);
		if (strncmp(name + 1, o, len) == 0 && name[1 + len] == '.' && strlen(name + 2 + len) == 6)
			return true;
	}
	return false;
}

/*
 * Takes the output directory for this run (another depmod writing there waits), and removes
 * the temporary files a killed run left: under the lock, no living run owns one.
 */
static int depmod_lock_outdir(struct depmod *dm)
{
	int fd = depmod_outdir_fd(dm), dfd;
	struct dirent *de;
	DIR *d;

	if (fd < 0) {
		tool_err("could not open directory %s: %s", dm->cfg->outdir, strerror(-fd));
		return fd;
	}
	if (flock(fd, LOCK_EX) < 0) {
		int r = -errno;
		tool_err("could not lock directory %s: %m", dm->cfg->outdir);
		return r;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd < 0 ? NULL : fdopendir(dfd);
	if (d == NULL) {
		int r = -errno;
		tool_err("could not list directory %s: %m", dm->cfg->outdir);
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	while ((de = readdir(d)) != NULL)
		if (is_temporary_output(de->d_name))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	return 0;
}

/*
 * Every file goes to a temporary name in the output directory; only when all
 * are complete are they renamed, so a failed or killed run leaves the
 * previous set as it was. Those that need no namespaces are written while a
 * kernel image may still be decompressing; our cache, the biggest file and
 * read by no other output, by a second thread while the others are (the
 * last ones, when an image was being read).
 */
static int depmod_output(struct depmod *dm, FILE *to_stdout)
{
	struct output_job jobs[ARRAY_SIZE(outputs)];
	bool image_pending;
	size_t i;
	int r = 0;

	/* -n: kmod 30 shows its text files only */
	if (to_stdout) {
		r = depmod_compute_namespaces(dm);
		for (i = 0; i < ARRAY_SIZE(outputs) && r >= 0; i++)
			if (outputs[i].kind == TEXT && !outputs[i].ours)
				r = write_output(dm, &outputs[i], to_stdout);
		return r;
	}
	r = depmod_lock_outdir(dm);
	if (r < 0)
		return r;
	for (i = 0; i < ARRAY_SIZE(outputs); i++)
		jobs[i] = (struct output_job){ .dm = dm, .o = &outputs[i] };
	/* first what needs no namespaces while a kernel image is still decompressing, if it is */
	image_pending = !dm->vmlinux_done && !__atomic_load_n(&dm->vmlinux_ready, __ATOMIC_ACQUIRE);
	if (image_pending)
		r = output_jobs_write(jobs, false);
	if (r >= 0)
		r = depmod_compute_namespaces(dm);
	/* then the rest, the cache (the biggest file, read by no other output) in its own thread */
	for (i = 0; i < ARRAY_SIZE(outputs) && r >= 0; i++) {
		if (outputs[i].kind != CACHE || !dm->use_cache)
			continue;
		r = output_job_open(&jobs[i]);
		if (r >= 0)
			jobs[i].threaded = pthread_create(&jobs[i].thread, NULL, output_job_write, &jobs[i]) == 0;
		if (r >= 0 && !jobs[i].threaded)
			output_job_write(&jobs[i]);
	}
	if (r >= 0 && !image_pending)
		r = output_jobs_write(jobs, false);
	if (r >= 0)
		r = output_jobs_write(jobs, true);
	for (i = 0; i < ARRAY_SIZE(outputs); i++) {
		/* one error line: the first failure's */
		int rj = output_job_finish(&jobs[i], r >= 0);
		if (r >= 0)
			r = rj;
	}
	/* the last run's stamp no longer stands for what is in place */
	if (dm->outfd >= 0)
		unlinkat(dm->outfd, STAMP_NAME, 0);
	for (i = 0; i < ARRAY_SIZE(outputs); i++) {
		if (jobs[i].tmp[0] == '\0')
			continue;
		if (r < 0) {
			unlinkat(dm->outfd, jobs[i].tmp, 0);
		} else if (renameat(dm->outfd, jobs[i].tmp, dm->outfd, outputs[i].name) < 0) {
			r = -errno;
			tool_err("could not rename %s/%s to %s/%s: %m", dm->cfg->outdir, jobs[i].tmp,
				 dm->cfg->outdir, outputs[i].name);
		}
	}
	if (r >= 0 && depmod_may_stamp(dm)) {
		struct stat keys[ARRAY_SIZE(outputs)];
		for (i = 0; i < ARRAY_SIZE(outputs); i++)
			keys[i] = jobs[i].st;
		r = depmod_write_stamp(dm, keys);
	}
	return r;
}

/* -A: nothing to do when modules.dep is newer than every module (and the config). */
static bool depmod_is_up_to_date(struct depmod *dm)
{
	char path[PATH_MAX];
	struct stat dep, st;
	size_t i;

	if (snprintf(path, sizeof(path), "%s/modules.dep", dm->cfg->outdir) >= (int)sizeof(path) ||
	    stat(path, &dep) < 0)
		return false;
	for (i = 0; i < dm->n_mods; i++)
		if (stat(dm->mods[i]->path, &st) < 0 || st.st_mtime > dep.st_mtime)
			return false;
	return true;
}

/* mkdir -p, for -o's output directory. */
static int mkdir_parents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *s;

	if (p == NULL)
		return -ENOMEM;
	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		{
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
			*s = c;
		}
		if (*s == '\0')
			return 0;
	}
}

/* -b and -o as kmod takes them: a relative path is taken from the current directory, once, so
 * that messages name files by absolute paths. NULL without memory or current directory. */
static char *path_absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;
	char *abs;

	if (path[0] == '/' || path[0] == '\0')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (cwd == NULL || asprintf(&abs, "%s/%s", cwd, path) < 0)
		return NULL;
	return abs;
}

static bool looks_like_version(const char *s)
{
	unsigned a, b;

	return sscanf(s, "%u.%u", &a, &b) == 2;
}

int main(int argc, char *argv[])
{
	const char *basedir = "", *outdir = NULL, *moduledir = DEFAULT_MODULE_DIR;
	_cleanup_free_ char *basedir_abs = NULL, *outdir_abs = NULL;
	const char *symvers = NULL, *system_map = NULL;
	char **config_paths = NULL;
	size_t n_config_paths = 0, cap = 0;
	bool all = false, quick = false, to_stdout = false;
	char **files;
	size_t n_files;
	struct cfg cfg = { 0 };
	struct depmod dm = { .cfg = &cfg, .use_cache = true, .outfd = -1 };
	struct utsname u;
	int c, r, outdir_len = 0;

	/* A decompressed module's buffer is freed just before the next is allocated: glibc would
	 * hand big ones back to the kernel each time, and every page of the next fault again. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 8 << 20);

	while ((c = getopt_long(argc, argv, options_short, options, NULL)) != -1) {
		switch (c) {
		case 'a': all = true; break;
		case 'A': quick = true; break;
		case 'b':
			free(basedir_abs);
			basedir = basedir_abs = path_absolute(optarg);
			if (basedir == NULL) {
				tool_err("invalid image path %s", optarg);
				return EXIT_FAILURE;
			}
			break;
		case 'o':
			free(outdir_abs);
			outdir = outdir_abs = path_absolute(optarg);
			if (outdir == NULL) {
				tool_err("invalid output directory %s", optarg);
				return EXIT_FAILURE;
			}
			break;
		case 'm': moduledir = optarg; break;
		case 'C':
			if (array_reserve((void **)&config_paths, &cap, sizeof(char *), n_config_paths + 1) < 0)
				return EXIT_FAILURE;
			config_paths[n_config_paths++] = optarg;
			break;
		case 'E': symvers = dm.symvers_path = optarg; cfg.check_symvers = true; break;
		case 'F': system_map = dm.system_map_path = optarg; break;
		case 'e': cfg.print_unknown = true; break;
		case 'u': case 'q': case 'r':
			tool_warn("Ignored deprecated option -%c", c);
			break;
		case 'v': verbose = true; break;
		case 'n': to_stdout = true; break;
		case 'P':
			if (optarg[0] == '\0' || optarg[1] != '\0') {
				tool_err("-P only takes a single char");
				return EXIT_FAILURE;
			}
			cfg.sym_prefix = optarg[0];
			break;
		case 'w': cfg.warn_dups = true; break;
		case 'N': dm.ns_check = true; break;
		case 'K': dm.use_cache = false; break;
		case 'V':
			printf("kmodns version %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		case 'h':
			help();
			return EXIT_SUCCESS;
		case '?':
			return EXIT_FAILURE;
		default:
			tool_err("unexpected getopt_long() value '%c'.", c);
			return EXIT_FAILURE;
		}
	}
	if (optind < argc) {
		if (!looks_like_version(argv[optind])) {
			tool_err("Bad version passed %s", argv[optind]);
			free(config_paths);
			return EXIT_FAILURE;
		}
		cfg.kversion = argv[optind++];
	} else {
		if (uname(&u) < 0) {
			tool_err("uname() failed: %m");
			return EXIT_FAILURE;
		}
		cfg.kversion = u.release;
	}
	/* as kmod 34: the module directory is always below the base (or output) directory, a
	 * relative one too ("-m foo" is <basedir>/foo) */
	while (moduledir[0] == '/')
		moduledir++;
	/* "-o /out/" writes to /out/lib/modules/VERSION */
	if (outdir != NULL) {
		size_t len = strlen(outdir);
		while (len > 0 && outdir[len - 1] == '/')
			len--;
		outdir_len = (int)len;
	}
	if (snprintf(cfg.dirname, sizeof(cfg.dirname), "%s/%s/%s", basedir, moduledir, cfg.kversion) >=
		    (int)sizeof(cfg.dirname) ||
	    snprintf(cfg.outdir, sizeof(cfg.outdir), "%.*s/%s/%s", outdir ? outdir_len : (int)strlen(basedir),
		     outdir ? outdir : basedir, moduledir, cfg.kversion) >= (int)sizeof(cfg.outdir)) {
		tool_err("path too long: %s/%s/%s", basedir, moduledir, cfg.kversion);
		return EXIT_FAILURE;
	}
	cfg.dirnamelen = strlen(cfg.dirname);
	/* module files after the version: only those are indexed, unless -a */
	files = argv + optind;
	n_files = all ? 0 : (size_t)(argc - optind);
	cfg.basedir = basedir;

	if (cfg.print_unknown && symvers == NULL && system_map == NULL) {
		tool_warn("-e needs -E or -F");
		cfg.print_unknown = false;
	}
	r = cfg_load(&cfg, config_paths, n_config_paths);
	free(config_paths);
	if (r < 0) {
		tool_err("could not read the configuration: %s", strerror(-r));
		cfg_release(&cfg);
		return EXIT_FAILURE;
	}

	/* libcrypto set up now, where a failure can be told: OpenSSL 3 crashes in its first
	 * digest when its own lazy set-up ran out of memory (and its init reports no failure) */
	dm.ctx = OPENSSL_init_crypto(0, NULL) == 1 && OSSL_LIB_CTX_get0_global_default() != NULL ?
		 kmodns_new() : NULL;
	if (dm.ctx == NULL) {
		tool_err("%s", strerror(ENOMEM));
		cfg_release(&cfg);
		return EXIT_FAILURE;
	}
	kmodns_set_log_fn(dm.ctx, tool_log_kmodns, NULL);
	if (verbose)
		kmodns_set_log_priority(dm.ctx, LOG_INFO);

	/* 1. find the modules: the files named, or the module dir then the external dirs */
	if (n_files > 0)
		r = depmod_add_files(&dm, files, n_files);
	else
		r = depmod_scan_all(&dm);
	if (r < 0)
		goto out;
	if (quick && depmod_is_up_to_date(&dm)) {
		info("depmod: %s is up to date\n", cfg.outdir);
		goto out;
	}
	/* 2. modules.order's order */
	r = depmod_sort(&dm);
	if (r < 0)
		goto out;
	/* the usual rerun (a kernel or DKMS install) finds its output standing */
	dm.stamp_wanted = dm.use_cache && !to_stdout && n_files == 0 && !dm.ns_check;
	if (depmod_outputs_unchanged(&dm)) {
		r = depmod_touch_outputs(&dm);
		goto out;
	}
	/* 3. the kernel's own symbols, then every module, in parallel */
	if (r >= 0 && system_map)
		r = depmod_load_system_map(&dm, system_map);
	if (r >= 0 && symvers)
		r = depmod_load_symvers(&dm, symvers);
	if (r < 0)
		goto out;
	r = depmod_load_modules(&dm);
	if (r < 0)
		goto out;
	/* 4. dependencies, their order, cycles */
	r = depmod_resolve(&dm);
	if (r >= 0)
		r = depmod_sort_dependencies(&dm);
	/* 5. the files, and the namespaces (what each module needs, imports, misses) once the
	 * kernel image is read; with --ns-check, written all the same, then the verdict */
	if (r >= 0 && outdir && !to_stdout && (r = mkdir_parents(cfg.outdir)) < 0)
		tool_err("could not create directory %s: %s", cfg.outdir, strerror(-r));
	if (r >= 0)
		r = depmod_output(&dm, to_stdout ? stdout : NULL);
	if (r >= 0 && dm.ns_check)
		r = depmod_ns_check(&dm);
out:
	/* a failure nothing has explained yet (no memory, mostly) still gets its line */
	if (r < 0 && tool_error_count() == 0)
		tool_err("%s", strerror(-r));
	depmod_release(&dm);
	kmodns_unref(dm.ctx);
	cfg_release(&cfg);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
