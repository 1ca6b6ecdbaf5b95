// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The load check: what a target kernel's finit_module will say to a module on
 * namespace grounds, decided before anything is loaded. The facts come from
 * depmod's namespace record (one index lookup, no ELF) or, when that is missing
 * or older than the file, from the module file; the rule itself is
 * kmodns_namespace_check()'s, judged for the target kernel's version.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "libkmodns-private.h"
#include "libkmodns-index.h"

#define ALLOW_MISSING_OPTION "CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS"
/* 6.13 made MODULE_IMPORT_NS() take a string literal. */
#define STRING_IMPORT_SINCE KMODNS_KERNEL_VERSION(6, 13, 0)
/* 5.4 brought namespaces: an older release names no kernel that judges them. */
#define NAMESPACES_SINCE KMODNS_KERNEL_VERSION(5, 4, 0)

struct kmodns_kernel {
	int refcount;
	struct kmodns_ctx *ctx;
	char *release;
	char *dirname;
	int dir_fd; /* dirname opened for lookups relative to it; -1 until then */
	unsigned version;
	int allow_missing; /* 1, 0, -ENOENT; INT_MIN until read */
	bool dep_index_tried;
	struct kmodns_index *dep_index;
	/* for modules judged from their files: who exports what */
	bool symvers_tried;
	struct kmodns_symvers *symvers; /* vmlinux's, from build/Module.symvers */
	struct kmodns_index *symbols_index;
	bool symbols_index_tried;
	struct kmodns_module **exporters; /* module files read to resolve symbols */
	size_t n_exporters, exporters_capacity;
	struct kmodns_policy *policy; /* the admin's, or NULL */
	kmodns_policy_reader_fn policy_reader; /* reads it at the first need; NULL once read */
	void *policy_reader_data;
	bool policy_unread; /* the reader failed in the last check that needed it */
};

/* One thing a module needs from a namespace, and the rule's verdict on it. */
struct problem {
	enum kmodns_verdict verdict;
	const char *ns, *symbol, *exporter;
};

struct kmodns_load_verdict {
	struct arena strings;
	const char *module;
	unsigned kernel_version;
	enum kmodns_load_status status;
	bool vmlinux_known, from_record;
	struct problem *problems; /* refused ones first: problems[0] is the reason */
	size_t n_problems, n_refused, capacity;
	struct policy_match *matches; /* strings in the arena */
	size_t n_matches, matches_capacity;
	long decision; /* of matches, the one that set the status; -1: the kernel's rule alone */
	const char **imports; /* in the arena */
	size_t n_imports;
	int traits; /* KMODNS_TRAIT_* bits, -1 when no rule needed them and the record had none */
};

KMODNS_EXPORT int kmodns_kernel_new(struct kmodns_ctx *ctx, const char *release, const char *dirname,
				    struct kmodns_kernel **out)
{
	struct kmodns_kernel *k = calloc(1, sizeof(*k));

	*out = NULL;
	if (k == NULL)
		return -ENOMEM;
	k->refcount = 1;
	k->ctx = kmodns_ref(ctx);
	k->release = strdup(release);
	k->dirname = strdup(dirname);
	k->version = kmodns_kernel_version_parse(release);
	/* a test tree or a custom name ("1.0.0-foo"): each module's own kernel decides */
	if (k->version < NAMESPACES_SINCE)
		k->version = 0;
	k->allow_missing = INT32_MIN;
	k->dir_fd = -1;
	if (k->release == NULL || k->dirname == NULL) {
		kmodns_kernel_unref(k);
		return -ENOMEM;
	}
	*out = k;
	return 0;
}

KMODNS_EXPORT struct kmodns_kernel *kmodns_kernel_unref(struct kmodns_kernel *k)
{
	size_t i;

	if (k == NULL || --k->refcount > 0)
		return NULL;
	if (k->dep_index)
		kmodns_index_close(k->dep_index);
	if (k->symbols_index)
		kmodns_index_close(k->symbols_index);
	kmodns_symvers_unref(k->symvers);
	kmodns_policy_unref(k->policy);
	if (k->dir_fd >= 0)
		close(k->dir_fd);
	for (i = 0; i < k->n_exporters; i++)
		kmodns_module_unref(k->exporters[i]);
	free(k->exporters);
	free(k->release);
	free(k->dirname);
	kmodns_unref(k->ctx);
	free(k);
	return NULL;
}

KMODNS_EXPORT unsigned kmodns_kernel_get_version(const struct kmodns_kernel *k)
{
	return k->version;
}

KMODNS_EXPORT void kmodns_kernel_set_policy(struct kmodns_kernel *k, struct kmodns_policy *policy)
{
	kmodns_policy_unref(k->policy);
	k->policy = kmodns_policy_ref(policy);
	k->policy_reader = NULL;
}

KMODNS_EXPORT void kmodns_kernel_set_policy_reader(struct kmodns_kernel *k, kmodns_policy_reader_fn fn,
						   void *data)
{
	k->policy = kmodns_policy_unref(k->policy);
	k->policy_reader = fn;
	k->policy_reader_data = data;
}

/* The policy to apply, read now if it was left to the first need. */
static int kernel_policy(struct kmodns_kernel *k)
{
	struct kmodns_policy *policy = NULL;
	int r;

	if (k->policy_reader == NULL)
		return 0;
	r = k->policy_reader(k->ctx, k->policy_reader_data, &policy);
	k->policy_unread = r < 0;
	if (r < 0)
		return r; /* the reader stays: no later check goes without the policy */
	k->policy = policy;
	k->policy_reader = NULL;
	return 0;
}

/* ---- the kernel's config ----------------------------------------------------------- */

/* 1/0 for "OPTION=y" / anything else in a config text; -ENOENT for no text. */
static int config_option_is_y(const char *text, size_t size, const char *option)
{
	size_t len = strlen(option);
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if ((size_t)(line_end - p) > len && memcmp(p, option, len) == 0 && p[len] == '=')
			return line_end - p == (long)len + 2 && p[len + 1] == 'y';
		p = line_end + 1;
	}
	return 0;
}

static bool is_running_kernel(const char *release)
{
	struct utsname u;

	return uname(&u) == 0 && streq(u.release, release);
}

/* The length of ROOT in a module directory ROOT/lib/modules/RELEASE ("" is the system's). */
static size_t root_length(const struct kmodns_kernel *k)
{
	size_t len = strlen(k->dirname), rel = strlen(k->release), tail = strlen("/lib/modules/") + rel;

	if (len < tail || strcmp(k->dirname + len - rel, k->release) != 0 ||
	    strncmp(k->dirname + len - tail, "/lib/modules/", strlen("/lib/modules/")) != 0)
		return SIZE_MAX;
	return len - tail;
}

/*
 * The config of the target kernel: its root's /boot/config-RELEASE, the module directory's
 * config, and for the running kernel of this system its gzip'd copy last.
 */
static int read_kernel_config(struct kmodns_kernel *k)
{
	_cleanup_free_ char *boot = NULL, *moddir = NULL;
	const char *candidates[3];
	size_t n = 0, i, root = root_length(k);

	if (asprintf(&moddir, "%s/config", k->dirname) < 0)
		return -ENOMEM;
	if (root != SIZE_MAX) {
		if (asprintf(&boot, "%.*s/boot/config-%s", (int)root, k->dirname, k->release) < 0)
			return -ENOMEM;
		candidates[n++] = boot;
	}
	candidates[n++] = moddir;
	if (root == 0 && is_running_kernel(k->release))
		candidates[n++] = "/proc/config.gz";
	for (i = 0; i < n; i++) {
		struct kmodns_image image = { 0 };
		int r;

		if (access(candidates[i], R_OK) != 0)
			continue;
		/* by magic, so a gzip'd /proc/config.gz and a plain file read alike */
		r = kmodns_image_load(k->ctx, candidates[i], NULL, 0, candidates[i], 0, &image);
		if (r < 0)
			continue;
		r = config_option_is_y(image.data, image.size, ALLOW_MISSING_OPTION);
		DBG(k->ctx, "%s: %s=%s", candidates[i], ALLOW_MISSING_OPTION, r ? "y" : "n");
		free(image.data);
		return r;
	}
	return -ENOENT;
}

KMODNS_EXPORT int kmodns_kernel_allows_missing_imports(struct kmodns_kernel *k)
{
	if (k->allow_missing == INT32_MIN)
		k->allow_missing = read_kernel_config(k);
	return k->allow_missing;
}

/* ---- resolving symbols for a module judged from its file ---------------------------- */

/* The module directory, opened once: modprobe stats every module of a load set, and a path
 * relative to it walks three components instead of ten. */
static int kernel_dir_fd(struct kmodns_kernel *k)
{
	if (k->dir_fd < 0)
		k->dir_fd = open(k->dirname, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return k->dir_fd >= 0 ? k->dir_fd : AT_FDCWD;
}

/* path relative to kernel_dir_fd() when it lies under the module directory, else itself */
static const char *kernel_dir_relative(const struct kmodns_kernel *k, const char *path)
{
	size_t len = strlen(k->dirname);

	if (k->dir_fd >= 0 && strncmp(path, k->dirname, len) == 0 && path[len] == '/')
		return path + len + 1;
	return path;
}

static struct kmodns_index *kernel_index(struct kmodns_kernel *k, const char *file, bool *tried,
					 struct kmodns_index **idx)
{
	int r;

	if (*tried)
		return *idx;
	*tried = true;
	r = kmodns_index_open_at(kernel_dir_fd(k), file, idx);
	if (r < 0) {
		/* a missing index is a tree depmod has not run on; anything else is damage, named */
		if (r != -ENOENT)
			ERR(k->ctx, "%s/%s: %s", k->dirname, file,
			    r == -EBADMSG ? "not a kmod index" : strerror(-r));
		*idx = NULL;
	}
	return *idx;
}

static struct kmodns_index *dep_index(struct kmodns_kernel *k)
{
	return kernel_index(k, "modules.dep.bin", &k->dep_index_tried, &k->dep_index);
}

static const struct kmodns_symvers *vmlinux_exports(struct kmodns_kernel *k)
{
	_cleanup_free_ char *path = NULL;

	if (k->symvers_tried)
		return k->symvers;
	k->symvers_tried = true;
	if (asprintf(&path, "%s/build/Module.symvers", k->dirname) < 0 || access(path, R_OK) != 0)
		return NULL;
	if (kmodns_symvers_new_from_file(k->ctx, path, &k->symvers) < 0)
		k->symvers = NULL;
	return k->symvers;
}

static int take_first_value(void *data, const char *value, unsigned priority)
{
	const char **first = data;

	if (*first == NULL)
		*first = value;
	return 0;
}

/* The tree's file of module modname, from modules.dep.bin ("path: deps"); NULL if none. */
static char *module_path_in_tree(struct kmodns_kernel *k, const char *modname)
{
	struct kmodns_index *idx = dep_index(k);
	const char *line = NULL, *colon;
	char *path = NULL;

	if (idx == NULL || kmodns_index_lookup(idx, modname, take_first_value, &line) <= 0)
		return NULL;
	colon = strchr(line, ':');
	if (colon == NULL)
		return NULL;
	if (line[0] == '/')
		path = strndup(line, (size_t)(colon - line));
	else if (asprintf(&path, "%s/%.*s", k->dirname, (int)(colon - line), line) < 0)
		path = NULL;
	return path;
}

static const struct kmodns_export *module_export(const struct kmodns_module *mod, const char *symbol)
{
	size_t i;

	for (i = 0; i < mod->n_exports; i++)
		if (streq(mod->exports[i].symbol, symbol))
			return &mod->exports[i];
	return NULL;
}

/* A module exporting symbol, by modules.symbols.bin; its file read once per kernel object. */
static const struct kmodns_export *tree_export(struct kmodns_kernel *k, const char *symbol)
{
	struct kmodns_index *idx = kernel_index(k, "modules.symbols.bin", &k->symbols_index_tried,
						&k->symbols_index);
	_cleanup_free_ char *key = NULL, *path = NULL;
	const char *owner = NULL;
	struct kmodns_module *mod = NULL;
	size_t i;

	if (idx == NULL || asprintf(&key, "symbol:%s", symbol) < 0 ||
	    kmodns_index_lookup(idx, key, take_first_value, &owner) <= 0)
		return NULL;
	for (i = 0; i < k->n_exporters; i++)
		if (streq(k->exporters[i]->name, owner))
			return module_export(k->exporters[i], symbol);
	path = module_path_in_tree(k, owner);
	if (path == NULL || kmodns_module_new_from_path(k->ctx, path, 0, &mod) < 0)
		return NULL;
	if (array_reserve((void **)&k->exporters, &k->exporters_capacity, sizeof(mod),
			  k->n_exporters + 1) < 0) {
		kmodns_module_unref(mod);
		return NULL;
	}
	k->exporters[k->n_exporters++] = mod;
	return module_export(mod, symbol);
}

/* As the kernel resolves: vmlinux first, then the modules. */
static const struct kmodns_export *kernel_lookup(void *data, const char *symbol)
{
	struct kmodns_kernel *k = data;
	const struct kmodns_symvers *sv = vmlinux_exports(k);
	const struct kmodns_export *e = sv ? kmodns_symvers_find(sv, symbol) : NULL;

	return e ? e : tree_export(k, symbol);
}

/* ---- the verdict --------------------------------------------------------------------- */

static int verdict_add(struct kmodns_load_verdict *v, enum kmodns_verdict verdict, const char *ns,
		       const char *symbol, const char *exporter)
{
	struct problem *p;

	if (array_reserve((void **)&v->problems, &v->capacity, sizeof(*p), v->n_problems + 1) < 0)
		return -ENOMEM;
	p = &v->problems[v->n_problems++];
	p->verdict = verdict;
	p->ns = arena_strdup(&v->strings, ns);
	p->symbol = symbol ? arena_strdup(&v->strings, symbol) : NULL;
	p->exporter = exporter ? arena_strdup(&v->strings, exporter) : NULL;
	if (p->ns == NULL || (symbol && p->symbol == NULL) || (exporter && p->exporter == NULL))
		return -ENOMEM;
	return 0;
}

/*
 * The facts both sources give: imports, then (namespace, symbol, exporter) needed. When the
 * target kernel is unknown, the kernel the module was built for judges: the module file gives
 * its version, the record the verdicts depmod reached with it.
 */
struct facts {
	const char *const *imports;
	size_t n_imports;
	size_t n_needs;
	const char *(*need)(const void *src, size_t i, const char **symbol, const char **exporter);
	const void *src;
	unsigned built_for;
	enum kmodns_verdict (*import_verdict_built_for)(const void *src, size_t i);
	enum kmodns_verdict (*need_verdict_built_for)(const void *src, size_t i);
};

static enum kmodns_verdict import_verdict(const struct kmodns_kernel *k, const struct facts *f,
					  size_t i)
{
	if (k->version == 0 && f->import_verdict_built_for)
		return f->import_verdict_built_for(f->src, i);
	return kmodns_import_check(f->imports[i], k->version ? k->version : f->built_for);
}

static enum kmodns_verdict need_verdict(const struct kmodns_kernel *k, const struct facts *f,
					const char *module, size_t i, const char *ns)
{
	if (k->version == 0 && f->need_verdict_built_for)
		return f->need_verdict_built_for(f->src, i);
	return kmodns_namespace_check(module, f->imports, f->n_imports, ns,
				      k->version ? k->version : f->built_for);
}

static enum kmodns_verdict record_import_verdict(const void *src, size_t i)
{
	return kmodns_ns_record_get_import_verdict(src, i);
}

static enum kmodns_verdict record_need_verdict(const void *src, size_t i)
{
	return kmodns_ns_record_get_require_verdict(src, i);
}

static const char *record_need(const void *src, size_t i, const char **symbol, const char **exporter)
{
	*symbol = kmodns_ns_record_get_require_symbol(src, i);
	*exporter = kmodns_ns_record_get_require_exporter(src, i);
	return kmodns_ns_record_get_require_namespace(src, i);
}

static const char *requires_need(const void *src, size_t i, const char **symbol, const char **exporter)
{
	const struct kmodns_export *e = kmodns_requires_get_export(src, i);

	*symbol = e->symbol;
	*exporter = e->owner_name;
	return kmodns_requires_get_namespace(src, i);
}

static int verdict_add_match(struct kmodns_load_verdict *v, const struct policy_match *m)
{
	struct policy_match *copy;

	if (array_reserve((void **)&v->matches, &v->matches_capacity, sizeof(*m), v->n_matches + 1) < 0)
		return -ENOMEM;
	copy = &v->matches[v->n_matches];
	*copy = *m;
	copy->ns = arena_strdup(&v->strings, m->ns);
	copy->file = arena_strdup(&v->strings, m->file);
	copy->rule = arena_strdup(&v->strings, m->rule);
	if (copy->ns == NULL || copy->file == NULL || copy->rule == NULL)
		return -ENOMEM;
	v->n_matches++;
	return 0;
}

static const enum kmodns_load_status status_of_action[] = {
	[KMODNS_POLICY_ALLOW] = KMODNS_LOAD_ALLOWED,
	[KMODNS_POLICY_WARN] = KMODNS_LOAD_WARNED,
	[KMODNS_POLICY_REFUSE] = KMODNS_LOAD_REFUSED,
};

/* Asks the policy about namespace ns of the module: a matching rule may only raise the status. */
static int police_namespace(struct kmodns_kernel *k, struct kmodns_load_verdict *v,
			    struct policy_subject *s, const char *ns)
{
	struct policy_match m;
	size_t i;
	int r;

	for (i = 0; i < v->n_matches; i++)
		if (streq(v->matches[i].ns, ns))
			return 0; /* the namespace was asked about already */
	r = kmodns_policy_match(k->policy, s, ns, &m);
	if (r <= 0)
		return r;
	r = verdict_add_match(v, &m);
	if (r < 0)
		return r;
	if (status_of_action[m.action] > v->status) {
		v->status = status_of_action[m.action];
		v->decision = (long)v->n_matches - 1;
	}
	return 0;
}

/*
 * The policy after the kernel's rule: a missing-import line replaces what the kernel's config
 * would do with a missing import, then each namespace the module imports or needs is asked.
 */
static int police(struct kmodns_kernel *k, struct kmodns_load_verdict *v, const struct facts *f,
		  struct policy_subject *s, bool refused_module_import)
{
	struct policy_match m;
	size_t i;
	int r;

	if (v->n_refused > 0 && !refused_module_import &&
	    kmodns_policy_missing_import(k->policy, v->problems[0].ns, &m)) {
		r = verdict_add_match(v, &m);
		if (r < 0)
			return r;
		v->status = status_of_action[m.action];
		v->decision = (long)v->n_matches - 1;
	}
	for (i = 0; i < f->n_imports; i++) {
		r = police_namespace(k, v, s, f->imports[i]);
		if (r < 0)
			return r;
	}
	for (i = 0; i < v->n_problems; i++) {
		r = police_namespace(k, v, s, v->problems[i].ns);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Judges the facts by the rule of the target kernel, when it is known, then by the policy. */
static int judge(struct kmodns_kernel *k, struct kmodns_load_verdict *v, const struct facts *f,
		 struct policy_subject *s)
{
	size_t i, refused_module_imports = 0;
	int r;

	v->imports = calloc(f->n_imports + 1, sizeof(char *));
	if (v->imports == NULL)
		return -ENOMEM;
	for (i = 0; i < f->n_imports; i++) {
		v->imports[i] = arena_strdup(&v->strings, f->imports[i]);
		if (v->imports[i] == NULL)
			return -ENOMEM;
		v->n_imports++;
	}
	for (i = 0; i < f->n_imports; i++) {
		if (import_verdict(k, f, i) != KMODNS_REFUSED_MODULE_IMPORT)
			continue;
		r = verdict_add(v, KMODNS_REFUSED_MODULE_IMPORT, f->imports[i], NULL, NULL);
		if (r < 0)
			return r;
		refused_module_imports++;
	}
	for (i = 0; i < f->n_needs; i++) {
		const char *symbol, *exporter, *ns = f->need(f->src, i, &symbol, &exporter);
		enum kmodns_verdict verdict = need_verdict(k, f, v->module, i, ns);

		r = verdict_add(v, verdict, ns, symbol, exporter);
		if (r < 0)
			return r;
	}
	/* refused ones first, in their order, so problems[0] is the reason given */
	for (i = 0; i < v->n_problems; i++) {
		if (!kmodns_verdict_is_refused(v->problems[i].verdict))
			continue;
		if (i != v->n_refused) {
			struct problem p = v->problems[i];
			memmove(&v->problems[v->n_refused + 1], &v->problems[v->n_refused],
				(i - v->n_refused) * sizeof(p));
			v->problems[v->n_refused] = p;
		}
		v->n_refused++;
	}
	if (refused_module_imports > 0)
		v->status = KMODNS_LOAD_REFUSED; /* EPERM, whatever the config says */
	else if (v->n_refused > 0)
		v->status = kmodns_kernel_allows_missing_imports(k) == 1 ? KMODNS_LOAD_WARNED :
									    KMODNS_LOAD_REFUSED;
	/* every policy line names a namespace: a module that uses none meets no line */
	r = f->n_imports > 0 || f->n_needs > 0 ? kernel_policy(k) : 0;
	if (r >= 0 && k->policy != NULL)
		r = police(k, v, f, s, refused_module_imports > 0);
	v->traits = s->traits;
	return r;
}

/* The record is current when the module file is no newer than modules.dep.bin. */
static bool record_is_current(struct kmodns_kernel *k, const char *path)
{
	struct timespec indexed;
	struct stat st;

	if (dep_index(k) == NULL ||
	    fstatat(kernel_dir_fd(k), kernel_dir_relative(k, path), &st, 0) < 0)
		return false;
	indexed = kmodns_index_get_mtime(k->dep_index);
	/*
	 * The same whole second (an initramfs keeps no more) counts as current: mkinitramfs
	 * copies the modules and runs depmod in one second, and boot must not read every file.
	 */
	if (st.st_mtim.tv_sec != indexed.tv_sec)
		return st.st_mtim.tv_sec < indexed.tv_sec;
	return st.st_mtim.tv_nsec <= indexed.tv_nsec;
}

/* A module's traits from its file, for a record that does not carry them. */
struct traits_source {
	struct kmodns_kernel *kernel;
	const char *path;
};

static int module_traits(const struct kmodns_module *mod)
{
	return (kmodns_module_is_intree(mod) ? KMODNS_TRAIT_INTREE : 0) |
	       (kmodns_module_has_signature(mod) ? KMODNS_TRAIT_SIGNED : 0);
}

static int traits_from_file(void *data)
{
	const struct traits_source *src = data;
	struct kmodns_module *mod = NULL;
	int r;

	if (src->path == NULL)
		return -ENOENT;
	r = kmodns_module_new_from_path(src->kernel->ctx, src->path, 0, &mod);
	if (r < 0)
		return r;
	r = module_traits(mod);
	kmodns_module_unref(mod);
	return r;
}

static int judge_record(struct kmodns_kernel *k, struct kmodns_load_verdict *v,
			const struct kmodns_ns_record *rec, const char *path)
{
	struct traits_source src = { k, path };
	struct policy_subject subject = {
		.name = v->module,
		.path = path,
		.moddir = k->dirname,
		.traits = kmodns_ns_record_get_traits(rec),
		.get_traits = traits_from_file,
		.data = &src,
	};
	_cleanup_free_ const char **imports = NULL;
	struct facts f = {
		.n_imports = kmodns_ns_record_get_import_count(rec),
		.n_needs = kmodns_ns_record_get_require_count(rec),
		.need = record_need,
		.src = rec,
		.import_verdict_built_for = record_import_verdict,
		.need_verdict_built_for = record_need_verdict,
	};
	size_t i;

	imports = calloc(f.n_imports + 1, sizeof(*imports));
	if (imports == NULL)
		return -ENOMEM;
	for (i = 0; i < f.n_imports; i++)
		imports[i] = kmodns_ns_record_get_import(rec, i);
	f.imports = imports;
	v->vmlinux_known = kmodns_ns_record_vmlinux_known(rec);
	v->from_record = true;
	return judge(k, v, &f, &subject);
}

static int check_from_record(struct kmodns_kernel *k, struct kmodns_load_verdict *v,
			     const char *name, const char *path)
{
	struct kmodns_ns_record *rec = NULL;
	int r = kmodns_ns_record_lookup_in(k->ctx, k->dep_index, k->dirname, name, &rec);

	if (r < 0)
		return r;
	r = judge_record(k, v, rec, path);
	kmodns_ns_record_unref(rec);
	return r;
}

static int check_from_file(struct kmodns_kernel *k, struct kmodns_load_verdict *v, const char *path)
{
	struct kmodns_module *mod = NULL;
	struct kmodns_requires *req = NULL;
	struct policy_subject subject = { .name = v->module, .path = path, .moddir = k->dirname };
	struct facts f;
	int r = kmodns_module_new_from_path(k->ctx, path, 0, &mod);

	if (r < 0)
		return r;
	subject.traits = module_traits(mod);
	r = kmodns_module_get_requires(mod, kernel_lookup, k, &req);
	if (r >= 0) {
		f = (struct facts){
			.imports = (const char *const *)mod->imports.items,
			.n_imports = mod->imports.count,
			.n_needs = kmodns_requires_get_count(req),
			.need = requires_need,
			.src = req,
			.built_for = kmodns_module_get_kernel_version(mod),
		};
		if (v->kernel_version == 0)
			v->kernel_version = f.built_for;
		v->vmlinux_known = k->symvers != NULL;
		r = judge(k, v, &f, &subject);
	}
	kmodns_requires_unref(req);
	kmodns_module_unref(mod);
	return r;
}

static struct kmodns_load_verdict *verdict_new(const struct kmodns_kernel *k, const char *name)
{
	struct kmodns_load_verdict *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v->kernel_version = k->version;
	v->decision = -1;
	v->module = arena_strdup(&v->strings, name);
	if (v->module == NULL)
		return kmodns_load_verdict_unref(v);
	return v;
}

KMODNS_EXPORT int kmodns_kernel_check_module(struct kmodns_kernel *k, const char *name,
					     const char *path, unsigned flags,
					     struct kmodns_load_verdict **out)
{
	struct kmodns_load_verdict *v = verdict_new(k, name);
	int r = -ENOENT;

	*out = NULL;
	if (v == NULL)
		return -ENOMEM;
	if (!(flags & KMODNS_CHECK_READ_FILE) && record_is_current(k, path))
		r = check_from_record(k, v, name, path);
	if (r == -ENOENT) {
		DBG(k->ctx, "%s: no current namespace record, reading %s", name, path);
		r = check_from_file(k, v, path);
	}
	if (r < 0) {
		kmodns_load_verdict_unref(v);
		return r;
	}
	*out = v;
	return 0;
}

KMODNS_EXPORT int kmodns_kernel_check_load_set(struct kmodns_kernel *k, const char *const *names,
					       const char *const *paths, size_t count, unsigned flags,
					       struct kmodns_load_verdict **verdicts)
{
	size_t i, refused = 0;

	for (i = 0; i < count; i++) {
		int r;

		k->policy_unread = false;
		r = kmodns_kernel_check_module(k, names[i], paths[i], flags, &verdicts[i]);
		/* without the policy no module goes on unjudged by it */
		if (r == -ENOMEM || (r < 0 && k->policy_unread)) {
			while (i-- > 0)
				verdicts[i] = kmodns_load_verdict_unref(verdicts[i]);
			return r;
		}
		/* the kernel reads the file too: it gives its own error */
		if (r < 0)
			WARN(k->ctx, "could not check the namespaces of '%s': %s; left to the kernel\n",
			     names[i], strerror(-r));
		else if (verdicts[i]->status == KMODNS_LOAD_REFUSED)
			refused++;
	}
	return (int)refused;
}

KMODNS_EXPORT int kmodns_kernel_check_record(struct kmodns_kernel *k, const char *name,
					     const struct kmodns_ns_record *rec,
					     struct kmodns_load_verdict **out)
{
	struct kmodns_load_verdict *v = verdict_new(k, name);
	int r;

	*out = NULL;
	if (v == NULL)
		return -ENOMEM;
	r = judge_record(k, v, rec, NULL);
	if (r < 0) {
		kmodns_load_verdict_unref(v);
		return r;
	}
	*out = v;
	return 0;
}

KMODNS_EXPORT struct kmodns_load_verdict *kmodns_load_verdict_unref(struct kmodns_load_verdict *v)
{
	if (v == NULL)
		return NULL;
	free(v->problems);
	free(v->matches);
	free(v->imports);
	arena_release(&v->strings);
	free(v);
	return NULL;
}

KMODNS_EXPORT enum kmodns_load_status kmodns_load_verdict_get_status(const struct kmodns_load_verdict *v)
{
	return v->status;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_module(const struct kmodns_load_verdict *v)
{
	return v->module;
}

static const struct problem *reason(const struct kmodns_load_verdict *v)
{
	return v->n_refused > 0 ? &v->problems[0] : NULL;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_load_verdict_get_reason(const struct kmodns_load_verdict *v)
{
	return reason(v) ? reason(v)->verdict : KMODNS_ALLOWED_NO_NAMESPACE;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_namespace(const struct kmodns_load_verdict *v)
{
	return reason(v) ? reason(v)->ns : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_symbol(const struct kmodns_load_verdict *v)
{
	return reason(v) ? reason(v)->symbol : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_exporter(const struct kmodns_load_verdict *v)
{
	return reason(v) ? reason(v)->exporter : NULL;
}

KMODNS_EXPORT size_t kmodns_load_verdict_get_problem_count(const struct kmodns_load_verdict *v)
{
	return v->n_refused;
}

KMODNS_EXPORT bool kmodns_load_verdict_vmlinux_known(const struct kmodns_load_verdict *v)
{
	return v->vmlinux_known;
}

KMODNS_EXPORT bool kmodns_load_verdict_from_record(const struct kmodns_load_verdict *v)
{
	return v->from_record;
}

/* The line a module's source needs: bare before 6.13, a string literal since. */
static void put_import_line(FILE *f, const char *ns, unsigned kernel_version)
{
	if (kernel_version != 0 && kernel_version < STRING_IMPORT_SINCE)
		fprintf(f, "MODULE_IMPORT_NS(%s)", ns);
	else
		fprintf(f, "MODULE_IMPORT_NS(\"%s\")", ns);
}

/*
 * Whether a refused use of p->ns was refused by the module-list rule. With the version unknown
 * (depmod's verdict, reached with the module's own), a list that names the module yet refused
 * it can only have been an ordinary name to an older kernel.
 */
static bool refused_by_module_list(const struct kmodns_load_verdict *v, const struct problem *p)
{
	if (!kmodns_namespace_is_module_list(p->ns, v->kernel_version))
		return false;
	return v->kernel_version != 0 ||
	       kmodns_namespace_check(v->module, NULL, 0, p->ns, 0) != KMODNS_ALLOWED_MODULE_PATTERN;
}

static void describe_refusal(FILE *f, const struct kmodns_load_verdict *v)
{
	const struct problem *p = reason(v);

	if (p->verdict == KMODNS_REFUSED_MODULE_IMPORT) {
		fprintf(f, "imports namespace %s, which the kernel refuses: a \"module:\" namespace "
			   "is granted by its exporter's list of modules, never by an import; remove ",
			p->ns);
		put_import_line(f, p->ns, v->kernel_version);
	} else if (refused_by_module_list(v, p)) {
		fprintf(f, "uses %s, which %s exports only to the modules %s names; no import can "
			   "grant it",
			p->symbol, p->exporter, p->ns);
	} else {
		fprintf(f, "uses %s from namespace %s (exported by %s) but does not import it; add ",
			p->symbol, p->ns, p->exporter);
		put_import_line(f, p->ns, v->kernel_version);
		fputs(" to its source", f);
	}
	if (v->n_refused > 1)
		fprintf(f, " (and %zu more namespace%s)", v->n_refused - 1, v->n_refused > 2 ? "s" : "");
}

static const struct policy_match *decision(const struct kmodns_load_verdict *v)
{
	return v->decision >= 0 ? &v->matches[v->decision] : NULL;
}

static void describe_policy_rule(FILE *f, const struct policy_match *m)
{
	fprintf(f, "uses namespace %s, %s by policy %s:%u (%s)", m->ns,
		m->action == KMODNS_POLICY_REFUSE ? "refused to it" : "warned about", m->file, m->line,
		m->rule);
}

static void describe_allowed(FILE *f, const struct kmodns_load_verdict *v)
{
	size_t i;

	fputs("allowed:", f);
	for (i = 0; i < v->n_problems; i++) {
		const struct problem *p = &v->problems[i];
		fprintf(f, "%s %s %s (%s from %s)", i ? "," : "", p->ns,
			p->verdict == KMODNS_ALLOWED_MODULE_PATTERN ? "names it" : "imported",
			p->symbol, p->exporter);
	}
	if (v->n_problems == 0)
		fputs(" no namespaced symbol used", f);
}

KMODNS_EXPORT size_t kmodns_load_verdict_get_import_count(const struct kmodns_load_verdict *v)
{
	return v->n_imports;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_import(const struct kmodns_load_verdict *v, size_t i)
{
	return i < v->n_imports ? v->imports[i] : NULL;
}

KMODNS_EXPORT size_t kmodns_load_verdict_get_requirement_count(const struct kmodns_load_verdict *v)
{
	return v->n_problems;
}

static const struct problem *problem_at(const struct kmodns_load_verdict *v, size_t i)
{
	return i < v->n_problems ? &v->problems[i] : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_requirement_namespace(const struct kmodns_load_verdict *v,
									 size_t i)
{
	return problem_at(v, i) ? problem_at(v, i)->ns : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_requirement_symbol(const struct kmodns_load_verdict *v,
								      size_t i)
{
	return problem_at(v, i) ? problem_at(v, i)->symbol : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_requirement_exporter(const struct kmodns_load_verdict *v,
									size_t i)
{
	return problem_at(v, i) ? problem_at(v, i)->exporter : NULL;
}

KMODNS_EXPORT enum kmodns_verdict
kmodns_load_verdict_get_requirement_verdict(const struct kmodns_load_verdict *v, size_t i)
{
	return problem_at(v, i) ? problem_at(v, i)->verdict : KMODNS_ALLOWED_NO_NAMESPACE;
}

KMODNS_EXPORT int kmodns_load_verdict_get_traits(const struct kmodns_load_verdict *v)
{
	return v->traits;
}

KMODNS_EXPORT size_t kmodns_load_verdict_get_policy_match_count(const struct kmodns_load_verdict *v)
{
	return v->n_matches;
}

static const struct policy_match *match_at(const struct kmodns_load_verdict *v, size_t i)
{
	return i < v->n_matches ? &v->matches[i] : NULL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_policy_match_namespace(const struct kmodns_load_verdict *v,
									  size_t i)
{
	return match_at(v, i) ? match_at(v, i)->ns : NULL;
}

KMODNS_EXPORT enum kmodns_policy_action
kmodns_load_verdict_get_policy_match_action(const struct kmodns_load_verdict *v, size_t i)
{
	return match_at(v, i) ? match_at(v, i)->action : KMODNS_POLICY_KERNEL;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_policy_match_file(const struct kmodns_load_verdict *v,
								     size_t i)
{
	return match_at(v, i) ? match_at(v, i)->file : NULL;
}

KMODNS_EXPORT unsigned kmodns_load_verdict_get_policy_match_line(const struct kmodns_load_verdict *v, size_t i)
{
	return match_at(v, i) ? match_at(v, i)->line : 0;
}

KMODNS_EXPORT const char *kmodns_load_verdict_get_policy_match_rule(const struct kmodns_load_verdict *v,
								     size_t i)
{
	return match_at(v, i) ? match_at(v, i)->rule : NULL;
}

KMODNS_EXPORT long kmodns_load_verdict_get_policy_decision(const struct kmodns_load_verdict *v)
{
	return v->decision;
}

KMODNS_EXPORT char *kmodns_load_verdict_describe(const struct kmodns_load_verdict *v)
{
	const struct policy_match *m = decision(v);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	if (m != NULL && !m->missing_import) {
		describe_policy_rule(f, m);
	} else if (v->n_refused > 0) {
		describe_refusal(f, v);
		if (m != NULL)
			fprintf(f, " (policy %s:%u: %s)", m->file, m->line, m->rule);
	} else {
		describe_allowed(f, v);
	}
	/* a policy rule decided on what the module says it uses: vmlinux's namespaces do not matter */
	if (!v->vmlinux_known && (m == NULL || m->missing_import))
		fputs("; namespaces of vmlinux's exports unknown, left to the kernel", f);
	if (memstream_close(f, &buf) < 0)
		return NULL;
	return buf;
}
