// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * modinfo - show information about kernel modules.
 *
 * Without --namespaces it is kmod's modinfo, output byte for byte: libkmod
 * finds the module and reads its .modinfo records and signature. With
 * --namespaces it reports what libkmodns reads: imported and exported
 * namespaces, and — when the exports of the kernel are known — the namespaces
 * the module requires and the imports it is missing.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <libkmod.h>

#include "libkmodns.h"
#include "tool-util.h"

static char separator = '\n';
static const char *field;
/* libkmodns, for namespaces and for checking files before libkmod reads them. */
static struct kmodns_ctx *ns_ctx;

static const char options_short[] = "adlpn0mF:k:b:E:Vh";
enum { OPT_NAMESPACES = 0x100, OPT_JSON };
static const struct option options[] = {
	{ "author", no_argument, NULL, 'a' },
	{ "description", no_argument, NULL, 'd' },
	{ "license", no_argument, NULL, 'l' },
	{ "parameters", no_argument, NULL, 'p' },
	{ "filename", no_argument, NULL, 'n' },
	{ "null", no_argument, NULL, '0' },
	{ "modname", no_argument, NULL, 'm' },
	{ "field", required_argument, NULL, 'F' },
	{ "set-version", required_argument, NULL, 'k' },
	{ "basedir", required_argument, NULL, 'b' },
	{ "namespaces", no_argument, NULL, OPT_NAMESPACES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "symvers", required_argument, NULL, 'E' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	printf("Usage:\n"
	       "\t%s [options] <modulename|filename> [args]\n"
	       "Options:\n"
	       "\t-a, --author                Print only 'author'\n"
	       "\t-d, --description           Print only 'description'\n"
	       "\t-l, --license               Print only 'license'\n"
	       "\t-p, --parameters            Print only 'parm'\n"
	       "\t-n, --filename              Print only 'filename'\n"
	       "\t-0, --null                  Use \\0 instead of \\n\n"
	       "\t-m, --modname               Handle argument as module name instead of alias or filename\n"
	       "\t-F, --field=FIELD           Print only provided FIELD\n"
	       "\t-k, --set-version=VERSION   Use VERSION instead of `uname -r`\n"
	       "\t-b, --basedir=DIR           Use DIR as filesystem root for /lib/modules\n"
	       "\t    --namespaces            Print imported, exported, required and missing namespaces\n"
	       "\t    --json                  With --namespaces: one JSON object per module\n"
	       "\t-E, --symvers=FILE          With --namespaces: the kernel's exports from this Module.symvers\n"
	       "\t-V, --version               Show version\n"
	       "\t-h, --help                  Show this help\n",
	       program_invocation_short_name);
}

/* ---- kmod's output -------------------------------------------------------- */

/* parm and parmtype records merge into one line per parameter. */
struct param {
	struct param *next;
	const char *name, *desc, *type;
	int namelen, desclen, typelen;
};

static int param_add(struct param **list, const char *key, const char *value)
{
	const char *colon = strchr(value, ':');
	struct param *p;
	int namelen;

	if (colon == NULL)
		return -EINVAL; /* not "name:text": kmod skips it */
	namelen = (int)(colon - value);
	for (p = *list; p; p = p->next)
		if (p->namelen == namelen && strncmp(p->name, value, (size_t)namelen) == 0)
			break;
	if (p == NULL) {
		/* New parameters go first: kmod prints them in reverse order of appearance. */
		p = calloc(1, sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		p->name = value;
		p->namelen = namelen;
		p->next = *list;
		*list = p;
	}
	if (streq(key, "parm")) {
		p->desc = colon + 1;
		p->desclen = (int)strlen(colon + 1);
	} else {
		p->type = colon + 1;
		p->typelen = (int)strlen(colon + 1);
	}
	return 0;
}

static void params_print_and_free(struct param *list, bool print)
{
	while (list) {
		struct param *p = list;
		list = p->next;
		if (print && p->desc == NULL)
			printf("%-16s%.*s:%.*s%c", "parm:", p->namelen, p->name, p->typelen, p->type,
			       separator);
		else if (print && p->type != NULL)
			printf("%-16s%.*s:%.*s (%.*s)%c", "parm:", p->namelen, p->name, p->desclen,
			       p->desc, p->typelen, p->type, separator);
		else if (print)
			printf("%-16s%.*s:%.*s%c", "parm:", p->namelen, p->name, p->desclen, p->desc,
			       separator);
		free(p);
	}
}

/* `-p`: only parameters, as "name:desc (type)" without the "parm:" key. */
static void params_print_field(struct kmod_list *info)
{
	struct param *list = NULL, *p;
	struct kmod_list *l;

	kmod_list_foreach(l, info) {
		const char *key = kmod_module_info_get_key(l);
		if (streq(key, "parm") || streq(key, "parmtype"))
			param_add(&list, key, kmod_module_info_get_value(l));
	}
	for (p = list; p; p = p->next) {
		/* kmod's -p shows a parameter without description as "name: (type)". */
		if (p->desc == NULL)
			printf("%.*s: (%.*s)%c", p->namelen, p->name, p->typelen, p->type, separator);
		else if (p->type != NULL)
			printf("%.*s:%.*s (%.*s)%c", p->namelen, p->name, p->desclen, p->desc,
			       p->typelen, p->type, separator);
		else
			printf("%.*s:%.*s%c", p->namelen, p->name, p->desclen, p->desc, separator);
	}
	params_print_and_free(list, false);
}

static int modinfo_records(struct kmod_module *mod)
{
	const char *filename = kmod_module_get_path(mod);
	struct kmod_list *info = NULL, *l;
	struct param *params = NULL;
	bool builtin = filename == NULL;
	int r;

	if (builtin) {
		printf("%-16s%s%c", "name:", kmod_module_get_name(mod), separator);
		filename = "(builtin)";
	}
	if (field != NULL && streq(field, "filename")) {
		printf("%s%c", filename, separator);
		return 0;
	}
	if (field == NULL)
		printf("%-16s%s%c", "filename:", filename, separator);

	/* libkmod 30 trusts the ELF header (it asserts on a bad one): look first. */
	if (!builtin && (r = kmodns_file_check_header(ns_ctx, filename)) < 0)
		return r;
	r = kmod_module_get_info(mod, &info);
	if (r < 0) {
		/* An old kernel without modules.builtin.modinfo: nothing more to say. */
		if (builtin && r == -ENOENT)
			return 0;
		tool_err("could not get modinfo from '%s': %s", kmod_module_get_name(mod), strerror(-r));
		return r;
	}
	if (field != NULL && streq(field, "parm")) {
		params_print_field(info);
		kmod_module_info_free_list(info);
		return 0;
	}
	kmod_list_foreach(l, info) {
		const char *key = kmod_module_info_get_key(l);
		const char *value = kmod_module_info_get_value(l);
		int pad;

		if (field != NULL) {
			if (streq(field, key))
				printf("%s%c", value, separator);
			continue;
		}
		if (streq(key, "parm") || streq(key, "parmtype")) {
			r = param_add(&params, key, value);
			if (r == -ENOMEM)
				break;
			continue;
		}
		if (separator == '\0') {
			printf("%s=%s%c", key, value, separator);
			continue;
		}
		/* Values start at column 16; a longer key is followed by as many spaces as it overflows. */
		pad = 15 - (int)strlen(key);
		printf("%s:%*s%s%c", key, pad < 0 ? -pad : pad, "", value, separator);
	}
	params_print_and_free(params, r != -ENOMEM);
	kmod_module_info_free_list(info);
	return r == -ENOMEM ? r : 0;
}

/* ---- --namespaces ---------------------------------------------------------- */

/* Where the kernel's exports come from: a Module.symvers, or depmod's output of the tree. */
struct exporters {
	struct kmodns_ctx *ns_ctx;
	struct kmod_ctx *kmod_ctx;
	struct kmodns_symvers *symvers;
	bool use_depmod;         /* modules.symbols of the tree, vmlinux unknown */
	struct kmodns_module **loaded; /* exporting modules read so far */
	size_t n_loaded, loaded_capacity;
};

static void exporters_release(struct exporters *ex)
{
	size_t i;

	for (i = 0; i < ex->n_loaded; i++)
		kmodns_module_unref(ex->loaded[i]);
	free(ex->loaded);
	kmodns_symvers_unref(ex->symvers);
}

static const struct kmodns_export *module_find_export(const struct kmodns_module *mod,
						      const char *symbol)
{
	size_t i;

	for (i = 0; i < kmodns_module_get_export_count(mod); i++) {
		const struct kmodns_export *e = kmodns_module_get_export(mod, i);
		if (streq(kmodns_export_get_symbol(e), symbol))
			return e;
	}
	return NULL;
}

/* depmod's modules.symbols names the owner; the owner's file says the namespace. Slow: trees
 * indexed by kmodns' depmod answer from their namespace records instead. */
static const struct kmodns_export *depmod_lookup(struct exporters *ex, const char *symbol)
{
	_cleanup_free_ char *alias = NULL;
	struct kmod_list *list = NULL, *l;
	const struct kmodns_export *found = NULL;

	if (asprintf(&alias, "symbol:%s", symbol) < 0)
		return NULL;
	if (kmod_module_new_from_lookup(ex->kmod_ctx, alias, &list) < 0)
		return NULL;
	kmod_list_foreach(l, list) {
		struct kmod_module *km = kmod_module_get_module(l);
		const char *path = kmod_module_get_path(km);
		struct kmodns_module *owner = NULL;
		size_t i;

		for (i = 0; path && i < ex->n_loaded && owner == NULL; i++)
			if (streq(kmodns_module_get_path(ex->loaded[i]), path))
				owner = ex->loaded[i];
		if (owner == NULL && path &&
		    kmodns_module_new_from_path(ex->ns_ctx, path, 0, &owner) >= 0 &&
		    array_reserve((void **)&ex->loaded, &ex->loaded_capacity, sizeof(owner),
				  ex->n_loaded + 1) >= 0)
			ex->loaded[ex->n_loaded++] = owner;
		if (owner)
			found = module_find_export(owner, symbol);
		kmod_module_unref(km);
		if (found)
			break;
	}
	kmod_module_unref_list(list);
	return found;
}

static const struct kmodns_export *exporters_lookup(void *data, const char *symbol)
{
	struct exporters *ex = data;

	if (ex->symvers)
		return kmodns_symvers_find(ex->symvers, symbol);
	if (ex->use_depmod)
		return depmod_lookup(ex, symbol);
	return NULL;
}

static bool exporters_known(const struct exporters *ex)
{
	return ex->symvers != NULL || ex->use_depmod;
}

/* -E FILE, else <moduledir>/build/Module.symvers, else the tree's depmod output. */
static int exporters_open(struct exporters *ex, const char *symvers_path)
{
	const char *dir = kmod_get_dirname(ex->kmod_ctx);
	_cleanup_free_ char *path = NULL;
	struct stat st;

	if (symvers_path != NULL)
		return kmodns_symvers_new_from_file(ex->ns_ctx, symvers_path, &ex->symvers);
	if (asprintf(&path, "%s/build/Module.symvers", dir) < 0)
		return -ENOMEM;
	if (stat(path, &st) == 0)
		return kmodns_symvers_new_from_file(ex->ns_ctx, path, &ex->symvers);
	free(path);
	path = NULL; /* a failed asprintf leaves it as it was */
	if (asprintf(&path, "%s/modules.symbols.bin", dir) < 0)
		return -ENOMEM;
	ex->use_depmod = stat(path, &st) == 0;
	return 0;
}

static void print_requirement(const char *key, const struct kmodns_ns_record *rec, size_t i)
{
	printf("%-16s%s %s %s%c", key, kmodns_ns_record_get_require_namespace(rec, i),
	       kmodns_ns_record_get_require_exporter(rec, i),
	       kmodns_ns_record_get_require_symbol(rec, i), separator);
}

/* "export_ns: NS total (gpl GPL)" per namespace of the exports, "-" for those without. */
static void print_export_namespaces(const struct kmodns_module *mod)
{
	size_t i, k;

	for (i = 0; i < kmodns_module_get_export_namespace_count(mod); i++) {
		const char *ns = kmodns_module_get_export_namespace(mod, i);
		size_t total = 0, gpl = 0;

		for (k = 0; k < kmodns_module_get_export_count(mod); k++) {
			const struct kmodns_export *e = kmodns_module_get_export(mod, k);
			if (streq(kmodns_export_get_namespace(e), ns)) {
				total++;
				gpl += kmodns_export_is_gpl(e);
			}
		}
		printf("%-16s%s %zu (%zu GPL)%c", "export_ns:", ns[0] ? ns : "-", total, gpl, separator);
	}
}

/* An import the kernel refuses outright (a "module:" one) is refused, not merely unused. */
static bool import_is_refused(const struct kmodns_ns_record *rec, const char *ns)
{
	size_t i;

	for (i = 0; i < kmodns_ns_record_get_import_count(rec); i++)
		if (streq(kmodns_ns_record_get_import(rec, i), ns))
			return kmodns_ns_record_get_import_verdict(rec, i) == KMODNS_REFUSED_MODULE_IMPORT;
	return false;
}

/*
 * rec: the module's requirements as a namespace record, NULL when the kernel's exports are
 * unknown; verdict: rec judged as modprobe judges it.
 */
static void report_text(const struct kmodns_module *mod, const struct kmodns_ns_record *rec,
			const char *verdict)
{
	size_t i;

	printf("%-16s%s%c", "filename:", kmodns_module_get_path(mod), separator);
	printf("%-16s%s%c", "name:", kmodns_module_get_name(mod), separator);
	for (i = 0; i < kmodns_module_get_import_count(mod); i++)
		printf("%-16s%s%c", "import_ns:", kmodns_module_get_import(mod, i), separator);
	print_export_namespaces(mod);
	if (rec == NULL) {
		printf("%-16s%s%c", "require_ns:", "unknown (no Module.symvers; use -E)", separator);
		return;
	}
	for (i = 0; i < kmodns_ns_record_get_require_count(rec); i++)
		print_requirement("require_ns:", rec, i);
	for (i = 0; i < kmodns_ns_record_get_require_count(rec); i++)
		if (kmodns_verdict_is_refused(kmodns_ns_record_get_require_verdict(rec, i)))
			print_requirement("missing_ns:", rec, i);
	for (i = 0; i < kmodns_ns_record_get_import_count(rec); i++)
		if (kmodns_ns_record_get_import_verdict(rec, i) == KMODNS_REFUSED_MODULE_IMPORT)
			printf("%-16s%s%c", "refused_ns:", kmodns_ns_record_get_import(rec, i), separator);
	for (i = 0; i < kmodns_ns_record_get_unused_count(rec); i++)
		if (!import_is_refused(rec, kmodns_ns_record_get_unused(rec, i)))
			printf("%-16s%s%c", "unused_ns:", kmodns_ns_record_get_unused(rec, i), separator);
	if (!kmodns_ns_record_vmlinux_known(rec) && kmodns_ns_record_get_unresolved_count(rec) > 0)
		printf("%-16s%s%c", "require_ns:",
		       "unknown for symbols of vmlinux (no Module.symvers; use -E)", separator);
	if (verdict != NULL)
		printf("%-16s%s%c", "verdict:", verdict, separator);
}

static void report_json(const struct kmodns_module *mod, const struct kmodns_ns_record *rec,
			const char *verdict)
{
	size_t i, n;

	printf("{\"module\":");
	json_write_string(stdout, kmodns_module_get_name(mod));
	printf(",\"filename\":");
	json_write_string(stdout, kmodns_module_get_path(mod));
	printf(",\"imports\":[");
	for (i = 0; i < kmodns_module_get_import_count(mod); i++) {
		if (i)
			putchar(',');
		json_write_string(stdout, kmodns_module_get_import(mod, i));
	}
	printf("],\"imports_raw\":%zu,\"exports\":[", kmodns_module_get_import_raw_count(mod));
	for (i = 0; i < kmodns_module_get_export_count(mod); i++) {
		const struct kmodns_export *e = kmodns_module_get_export(mod, i);
		printf("%s{\"symbol\":", i ? "," : "");
		json_write_string(stdout, kmodns_export_get_symbol(e));
		printf(",\"namespace\":");
		json_write_string(stdout, kmodns_export_get_namespace(e));
		printf(",\"gpl\":%s}", kmodns_export_is_gpl(e) ? "true" : "false");
	}
	putchar(']');
	if (rec != NULL) {
		printf(",\"requires\":[");
		for (i = 0; i < kmodns_ns_record_get_require_count(rec); i++) {
			enum kmodns_verdict v = kmodns_ns_record_get_require_verdict(rec, i);

			printf("%s{\"namespace\":", i ? "," : "");
			json_write_string(stdout, kmodns_ns_record_get_require_namespace(rec, i));
			printf(",\"exporter\":");
			json_write_string(stdout, kmodns_ns_record_get_require_exporter(rec, i));
			printf(",\"symbol\":");
			json_write_string(stdout, kmodns_ns_record_get_require_symbol(rec, i));
			printf(",\"imported\":%s,\"allowed\":%s}",
			       v == KMODNS_ALLOWED_IMPORTED ? "true" : "false",
			       kmodns_verdict_is_refused(v) ? "false" : "true");
		}
		printf("],\"refused_imports\":[");
		for (i = 0, n = 0; i < kmodns_ns_record_get_import_count(rec); i++) {
			if (kmodns_ns_record_get_import_verdict(rec, i) != KMODNS_REFUSED_MODULE_IMPORT)
				continue;
			printf("%s", n++ ? "," : "");
			json_write_string(stdout, kmodns_ns_record_get_import(rec, i));
		}
		printf("],\"unused_imports\":[");
		for (i = 0, n = 0; i < kmodns_ns_record_get_unused_count(rec); i++) {
			if (import_is_refused(rec, kmodns_ns_record_get_unused(rec, i)))
				continue;
			printf("%s", n++ ? "," : "");
			json_write_string(stdout, kmodns_ns_record_get_unused(rec, i));
		}
		printf("],\"unresolved_symbols\":%zu", kmodns_ns_record_get_unresolved_count(rec));
	}
	if (verdict != NULL) {
		printf(",\"verdict\":");
		json_write_string(stdout, verdict);
	}
	printf("}\n");
}

struct ns_options {
	bool json;
	struct exporters exporters;
	struct kmodns_kernel *kernel; /* -k's; without -k each module's own vermagic judges */
};

/*
 * The module's requirements, as the namespace record depmod would store: resolved with -E's or
 * build/'s Module.symvers when there is one, else taken from the record depmod stored for the
 * tree's module record_name (no other module file read), else resolved with the tree's
 * modules.symbols. NULL when none of these can say.
 */
static int namespace_record(struct ns_options *o, const struct kmodns_module *mod,
			    const char *record_name, struct kmodns_ns_record **rec)
{
	struct exporters *ex = &o->exporters;
	struct kmodns_requires *req = NULL;
	_cleanup_free_ char *text = NULL;
	int r;

	*rec = NULL;
	/* a corrupt record is reported by the lookup; the modules themselves still answer */
	if (ex->symvers == NULL && record_name != NULL &&
	    kmodns_ns_record_lookup(ns_ctx, kmod_get_dirname(ex->kmod_ctx), record_name, rec) >= 0)
		return 0;
	if (!exporters_known(ex))
		return 0;
	r = kmodns_module_get_requires(mod, exporters_lookup, ex, &req);
	if (r >= 0)
		r = kmodns_ns_record_format(mod, req, ex->symvers != NULL, &text);
	if (r >= 0)
		r = kmodns_ns_record_new_from_text(text, rec);
	kmodns_requires_unref(req);
	return r;
}

/* record_name: the tree's name for the module at path, NULL when path is not the tree's file. */
static int modinfo_namespaces_of_file(struct ns_options *o, const char *path, const char *record_name)
{
	struct kmodns_module *mod = NULL;
	struct kmodns_ns_record *rec = NULL;
	struct kmodns_load_verdict *verdict = NULL;
	_cleanup_free_ char *verdict_line = NULL;
	int r = kmodns_module_new_from_path(ns_ctx, path, 0, &mod);

	if (r < 0)
		return r;
	r = namespace_record(o, mod, record_name, &rec);
	if (r >= 0 && rec != NULL) {
		struct kmodns_kernel *kernel = o->kernel;

		/* without -k, the kernel the module was built for judges it (its vermagic) */
		if (kernel == NULL) {
			const char *vermagic = kmodns_module_get_vermagic(mod);
			r = kmodns_kernel_new(ns_ctx, vermagic ? vermagic : "",
					      kmod_get_dirname(o->exporters.kmod_ctx), &kernel);
		}
		if (r >= 0)
			r = kmodns_kernel_check_record(kernel, kmodns_module_get_name(mod), rec, &verdict);
		if (kernel != o->kernel)
			kmodns_kernel_unref(kernel);
		if (r >= 0 && (verdict_line = tool_verdict_text(verdict)) == NULL)
			r = -ENOMEM;
		kmodns_load_verdict_unref(verdict);
	}
	if (r < 0) {
		kmodns_ns_record_unref(rec);
		kmodns_module_unref(mod);
		return r;
	}
	if (o->json)
		report_json(mod, rec, verdict_line);
	else
		report_text(mod, rec, verdict_line);
	kmodns_ns_record_unref(rec);
	kmodns_module_unref(mod);
	return 0;
}

/* A built-in module has no file: its imports are in modules.builtin.modinfo. */
static int modinfo_namespaces_of_builtin(struct ns_options *o, struct kmod_module *km)
{
	struct kmod_list *info = NULL, *l;
	bool first = true;

	if (kmod_module_get_info(km, &info) < 0)
		info = NULL;
	if (o->json) {
		printf("{\"module\":");
		json_write_string(stdout, kmod_module_get_name(km));
		printf(",\"filename\":\"(builtin)\",\"imports\":[");
	} else {
		printf("%-16s%s%c", "name:", kmod_module_get_name(km), separator);
		printf("%-16s%s%c", "filename:", "(builtin)", separator);
	}
	kmod_list_foreach(l, info) {
		if (!streq(kmod_module_info_get_key(l), "import_ns"))
			continue;
		if (o->json) {
			printf("%s", first ? "" : ",");
			json_write_string(stdout, kmod_module_info_get_value(l));
		} else {
			printf("%-16s%s%c", "import_ns:", kmod_module_info_get_value(l), separator);
		}
		first = false;
	}
	if (o->json)
		printf("]}\n");
	kmod_module_info_free_list(info);
	return 0;
}

static int modinfo_one(struct ns_options *o, struct kmod_module *km)
{
	const char *path;

	if (o == NULL)
		return modinfo_records(km);
	path = kmod_module_get_path(km);
	return path ? modinfo_namespaces_of_file(o, path, kmod_module_get_name(km)) :
		      modinfo_namespaces_of_builtin(o, km);
}

/* ---- finding the modules ------------------------------------------------------ */

static bool is_module_filename(const char *name)
{
	static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t len = strlen(name), i;
	struct stat st;

	if (stat(name, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	for (i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);
		if (len >= sl && streq(name + len - sl, suffixes[i]))
			return true;
	}
	return false;
}

/* Is path the file of the tree's module `name` (so that depmod's record describes it)? */
static bool is_tree_module_file(struct kmod_ctx *ctx, const char *path, char *name, size_t size)
{
	const char *base = strrchr(path, '/');
	struct kmod_module *km = NULL;
	struct stat st_file, st_tree;
	const char *tree_path;
	bool same = false;
	size_t len;

	base = base ? base + 1 : path;
	len = strcspn(base, ".");
	if (len >= size || stat(path, &st_file) != 0)
		return false;
	memcpy(name, base, len);
	name[len] = '\0';
	if (kmod_module_new_from_name(ctx, name, &km) < 0)
		return false;
	tree_path = kmod_module_get_path(km);
	same = tree_path && stat(tree_path, &st_tree) == 0 && st_tree.st_dev == st_file.st_dev &&
	       st_tree.st_ino == st_file.st_ino;
	kmod_module_unref(km);
	return same;
}

static int modinfo_path(struct kmod_ctx *ctx, struct ns_options *o, const char *path)
{
	struct kmod_module *km;
	char name[PATH_MAX];
	int r;

	/* --namespaces reads the file itself, so its own error names what is wrong; what the
	 * library does not explain (no memory) is named here */
	if (o != NULL) {
		unsigned errors = tool_error_count();

		r = modinfo_namespaces_of_file(o, path, is_tree_module_file(ctx, path, name, sizeof(name)) ?
								name : NULL);
		if (r < 0 && tool_error_count() == errors)
			tool_err("%s: %s", path, strerror(-r));
		return r;
	}
	r = kmod_module_new_from_path(ctx, path, &km);
	if (r < 0) {
		tool_err("Module file %s not found.", path);
		return r;
	}
	r = modinfo_one(o, km);
	kmod_module_unref(km);
	return r;
}

static int modinfo_lookup(struct kmod_ctx *ctx, struct ns_options *o, const char *name,
			  bool by_modname)
{
	struct kmod_list *list = NULL, *l;
	int r = kmod_module_new_from_lookup(ctx, name, &list), found = 0;

	if (r < 0) {
		tool_err("Module alias %s not found.", name);
		return r;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *km = kmod_module_get_module(l);
		/* -m: only the module of that name, not whatever an alias names. */
		if (by_modname) {
			const char *n = kmod_module_get_name(km);
			size_t i;
			bool same = strlen(n) == strlen(name);
			for (i = 0; same && name[i]; i++)
				same = n[i] == name[i] || ((n[i] == '_' || n[i] == '-') &&
							   (name[i] == '_' || name[i] == '-'));
			if (!same) {
				kmod_module_unref(km);
				continue;
			}
		}
		found++;
		r = modinfo_one(o, km);
		kmod_module_unref(km);
		if (r < 0)
			break;
	}
	kmod_module_unref_list(list);
	if (found == 0) {
		if (by_modname)
			tool_err("Module name %s not found.", name);
		else
			tool_err("Module %s not found.", name);
		return -ENOENT;
	}
	return r;
}

int main(int argc, char *argv[])
{
	const char *root = NULL, *kversion = NULL, *symvers_path = NULL;
	static const char *null_config = NULL;
	bool by_modname = false, namespaces = false, json = false;
	char dirname_buf[PATH_MAX];
	const char *dirname = NULL;
	struct ns_options nso = { 0 };
	struct kmod_ctx *ctx;
	int c, i, err = 0;

	while ((c = getopt_long(argc, argv, options_short, options, NULL)) != -1) {
		switch (c) {
		case 'a': field = "author"; break;
		case 'd': field = "description"; break;
		case 'l': field = "license"; break;
		case 'p': field = "parm"; break;
		case 'n': field = "filename"; break;
		case '0': separator = '\0'; break;
		case 'm': by_modname = true; break;
		case 'F': field = optarg; break;
		case 'k': kversion = optarg; break;
		case 'b': root = optarg; break;
		case 'E': symvers_path = optarg; break;
		case OPT_NAMESPACES: namespaces = true; break;
		case OPT_JSON: json = true; break;
		case 'h':
			help();
			return EXIT_SUCCESS;
		case 'V':
			printf("kmodns version %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		case '?':
			return EXIT_FAILURE;
		default:
			tool_err("unexpected getopt_long() value '%c'.", c);
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc) {
		tool_err("missing module or filename.");
		return EXIT_FAILURE;
	}
	if ((json || symvers_path) && !namespaces) {
		tool_err("--json and --symvers go with --namespaces.");
		return EXIT_FAILURE;
	}

	if (root != NULL || kversion != NULL) {
		struct utsname u;
		if (kversion == NULL) {
			if (uname(&u) < 0) {
				tool_err("uname() failed: %m");
				return EXIT_FAILURE;
			}
			kversion = u.release;
		}
		snprintf(dirname_buf, sizeof(dirname_buf), "%s/lib/modules/%s", root ? root : "",
			 kversion);
		dirname = dirname_buf;
	}
	/* Like kmod's modinfo: no modprobe.d configuration, only the indexes of the tree. */
	ctx = kmod_new(dirname, &null_config);
	ns_ctx = kmodns_new();
	if (ctx == NULL || ns_ctx == NULL) {
		tool_err("kmod_new() failed!");
		kmod_unref(ctx);
		return EXIT_FAILURE;
	}
	kmodns_set_log_fn(ns_ctx, tool_log_kmodns, NULL);

	if (namespaces) {
		int r;

		nso.json = json;
		nso.exporters.ns_ctx = ns_ctx;
		nso.exporters.kmod_ctx = ctx;
		r = exporters_open(&nso.exporters, symvers_path);

		if (r >= 0 && kversion != NULL)
			r = kmodns_kernel_new(ns_ctx, kversion, kmod_get_dirname(ctx), &nso.kernel);
		if (r < 0) {
			if (tool_error_count() == 0)
				tool_err("%s", strerror(-r));
			exporters_release(&nso.exporters);
			kmodns_unref(ns_ctx);
			kmod_unref(ctx);
			return EXIT_FAILURE;
		}
	}

	for (i = optind; i < argc; i++) {
		const char *name = argv[i];
		struct ns_options *o = namespaces ? &nso : NULL;
		int r;

		if (by_modname)
			r = modinfo_lookup(ctx, o, name, true);
		else if (is_module_filename(name))
			r = modinfo_path(ctx, o, name);
		else
			r = modinfo_lookup(ctx, o, name, false);
		if (r < 0)
			err = r;
	}

	if (namespaces) {
		exporters_release(&nso.exporters);
		kmodns_kernel_unref(nso.kernel);
	}
	kmodns_unref(ns_ctx);
	kmod_unref(ctx);
	return err >= 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
