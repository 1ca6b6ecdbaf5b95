// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmodns: the namespace questions an admin asks before a load, answered without loading.
 *
 *   kmodns policy --check      lints the installed policy against the installed tree
 *   kmodns explain MODULE      the whole reasoning for one module (--json for programs)
 *   kmodns check [MODULE...]   the verdict for modules, or the whole tree, under the policy
 *
 * Each takes modprobe's -d ROOT, -S VERSION and -C CONFIG to look at another root or kernel,
 * and --policy FILE / --policy-root DIR for another policy; the verdicts are modprobe's own.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "loader.h"
#include "tools.h"

static const char options_short[] = "C:d:S:vqhV";
enum { OPT_POLICY = 1, OPT_POLICY_ROOT, OPT_JSON, OPT_CHECK };
static const struct option long_options[] = {
	{ "config", required_argument, NULL, 'C' },
	{ "dirname", required_argument, NULL, 'd' },
	{ "set-version", required_argument, NULL, 'S' },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "policy-root", required_argument, NULL, OPT_POLICY_ROOT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void help(void)
{
	printf("Usage:\n"
	       "\tkmodns policy --check [options]\n"
	       "\tkmodns explain [options] MODULE\n"
	       "\tkmodns check [options] [MODULE...]\n"
	       "\n"
	       "Commands:\n"
	       "\tpolicy --check              Lint the namespace policy (kmodns.d(5)): every\n"
	       "\t                            file and line, namespaces and modules the tree lacks\n"
	       "\texplain MODULE              Why MODULE (a name, alias or file) would load or not\n"
	       "\tcheck [MODULE...]           The verdict for each module (default: the whole tree)\n"
	       "\n"
	       "Options:\n"
	       "\t-d, --dirname=DIR           Use DIR as filesystem root for /lib/modules\n"
	       "\t-S, --set-version=VERSION   Use VERSION instead of `uname -r`\n"
	       "\t-C, --config=FILE           Use FILE instead of the modprobe.d directories\n"
	       LOADER_POLICY_OPTIONS_HELP
	       "\t    --json                  explain: one JSON object\n"
	       "\t-v, --verbose               check: also list the modules that may load;\n"
	       "\t                            policy --check: list the rules\n"
	       "\t-q, --quiet                 Print no summary line\n"
	       "\t-V, --version               Show version\n"
	       "\t-h, --help                  Show this help\n");
}

static struct {
	const char *root, *release;
	const char **config_paths;
	size_t n_config_paths, config_capacity;
	struct loader_policy_source policy;
	bool json, lint, verbose, quiet;
} opt;

/* What every command works on: the target kernel's tree, libkmod on it, and the judge. */
struct target {
	struct kmod_ctx *ctx;
	struct kmodns_ctx *ns_ctx;
	struct kmodns_kernel *kernel;
	struct kmodns_policy *policy;
	const char *dirname, *release;
	char release_buf[65];
};

static int target_open(struct target *t)
{
	static char dirname[PATH_MAX];
	struct utsname u;
	int r;

	if (opt.release == NULL) {
		if (uname(&u) < 0)
			return -errno;
		snprintf(t->release_buf, sizeof(t->release_buf), "%s", u.release);
		opt.release = t->release_buf;
	}
	t->release = opt.release;
	if ((size_t)snprintf(dirname, sizeof(dirname), "%s/lib/modules/%s", opt.root ? opt.root : "",
			     opt.release) >= sizeof(dirname))
		return -ENAMETOOLONG;
	t->dirname = dirname;
	if (opt.config_paths != NULL)
		opt.config_paths[opt.n_config_paths] = NULL;
	t->ctx = loader_kmod_new(dirname, opt.config_paths);
	t->ns_ctx = kmodns_new();
	if (t->ctx == NULL || t->ns_ctx == NULL)
		return -ENOMEM;
	loader_log_setup_kmod(t->ctx, t->ns_ctx);
	r = loader_policy_new(t->ns_ctx, &opt.policy, &t->policy);
	if (r < 0)
		return r;
	r = kmodns_kernel_new(t->ns_ctx, opt.release, dirname, &t->kernel);
	if (r < 0)
		return r;
	kmodns_kernel_set_policy(t->kernel, t->policy);
	return 0;
}

static void target_close(struct target *t)
{
	kmodns_kernel_unref(t->kernel);
	kmodns_policy_unref(t->policy);
	kmodns_unref(t->ns_ctx);
	kmod_unref(t->ctx);
}

/* ---- the tree's modules ---------------------------------------------------------------- */

struct tree_module {
	char *name, *path;
};

struct tree {
	struct tree_module *mods;
	size_t count, capacity;
};

static void tree_release(struct tree *tree)
{
	size_t i;

	for (i = 0; i < tree->count; i++) {
		free(tree->mods[i].name);
		free(tree->mods[i].path);
	}
	free(tree->mods);
}

/* Every module modules.dep lists, with its file. */
static int tree_read(const struct target *t, struct tree *tree)
{
	_cleanup_free_ char *dep = NULL, *text = NULL;
	char *line, *save = NULL;
	size_t size;
	int r;

	if (asprintf(&dep, "%s/modules.dep", t->dirname) < 0)
		return -ENOMEM;
	r = read_file(dep, &text, &size);
	if (r < 0) {
		LOG_ERROR("%s: %s\n", dep, strerror(-r));
		return r;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		struct tree_module *m;

		if (colon == NULL)
			continue;
		*colon = '\0';
		if (array_reserve((void **)&tree->mods, &tree->capacity, sizeof(*m), tree->count + 1) < 0)
			return -ENOMEM;
		m = &tree->mods[tree->count];
		m->name = modname_from_path_dup(line, strlen(line));
		if (line[0] == '/')
			m->path = strdup(line);
		else if (asprintf(&m->path, "%s/%s", t->dirname, line) < 0)
			m->path = NULL;
		if (m->name == NULL || m->path == NULL) {
			free(m->name);
			free(m->path);
			return -ENOMEM;
		}
		tree->count++;
	}
	return 0;
}

/* ---- kmodns policy --check ------------------------------------------------------------- */

/* Every namespace the tree's records name: exported, imported or required. */
static int tree_namespaces(const struct target *t, const struct tree *tree, struct strset *known)
{
	size_t i, j;
	int r = 0;

	for (i = 0; i < tree->count && r >= 0; i++) {
		struct kmodns_ns_record *rec = NULL;

		if (kmodns_ns_record_lookup(t->ns_ctx, t->dirname, tree->mods[i].name, &rec) < 0)
			continue;
		for (j = 0; j < kmodns_ns_record_get_export_count(rec) && r >= 0; j++)
			r = strset_add(known, kmodns_ns_record_get_export(rec, j));
		for (j = 0; j < kmodns_ns_record_get_import_count(rec) && r >= 0; j++)
			r = strset_add(known, kmodns_ns_record_get_import(rec, j));
		for (j = 0; j < kmodns_ns_record_get_require_count(rec) && r >= 0; j++)
			r = strset_add(known, kmodns_ns_record_get_require_namespace(rec, j));
		kmodns_ns_record_unref(rec);
	}
	return r < 0 ? r : 0;
}

static bool any_matches(const struct strset *set, const char *glob)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		if (fnmatch(glob, set->items[i], 0) == 0)
			return true;
	return false;
}

static int policy_check(struct target *t)
{
	struct strset namespaces = { 0 }, modules = { 0 };
	struct tree tree = { 0 };
	size_t i, j, n_rules = kmodns_policy_get_rule_count(t->policy), warnings = 0;
	size_t errors = kmodns_policy_get_error_count(t->policy);
	int r = tree_read(t, &tree);

	for (i = 0; r >= 0 && i < tree.count; i++)
		r = strset_add(&modules, tree.mods[i].name);
	if (r >= 0)
		r = tree_namespaces(t, &tree, &namespaces);
	for (i = 0; r >= 0 && i < n_rules; i++) {
		const char *file = kmodns_policy_rule_get_file(t->policy, i);
		unsigned line = kmodns_policy_rule_get_line(t->policy, i);
		const char *ns = kmodns_policy_rule_get_namespace(t->policy, i);

		if (opt.verbose)
			printf("%s:%u: %s\n", file, line, kmodns_policy_rule_get_text(t->policy, i));
		if (!any_matches(&namespaces, ns)) {
			LOG_WARN("%s:%u: namespace '%s' matches no namespace of the modules of %s\n", file,
				 line, ns, t->release);
			warnings++;
		}
		for (j = 0; j < kmodns_policy_rule_get_module_count(t->policy, i); j++) {
			const char *glob = kmodns_policy_rule_get_module(t->policy, i, j);
			if (any_matches(&modules, glob))
				continue;
			LOG_WARN("%s:%u: module '%s' matches no module of %s\n", file, line, glob, t->release);
			warnings++;
		}
	}
	if (r >= 0 && !opt.quiet)
		printf("%zu file%s, %zu rule%s, missing imports: %s; %zu error%s, %zu warning%s\n",
		       kmodns_policy_get_file_count(t->policy),
		       kmodns_policy_get_file_count(t->policy) == 1 ? "" : "s", n_rules,
		       n_rules == 1 ? "" : "s",
		       kmodns_policy_action_to_string(kmodns_policy_get_missing_import(t->policy)),
		       errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
	strset_release(&namespaces);
	strset_release(&modules);
	tree_release(&tree);
	if (r < 0)
		return r;
	return errors > 0 ? -EINVAL : 0;
}

/* ---- kmodns explain / check ------------------------------------------------------------ */

static const char *const requirement_verdicts[] = {
	[KMODNS_ALLOWED_NO_NAMESPACE] = "no namespace",
	[KMODNS_ALLOWED_IMPORTED] = "imported",
	[KMODNS_ALLOWED_MODULE_PATTERN] = "its module list names it",
	[KMODNS_REFUSED_MISSING_IMPORT] = "not imported: refused",
	[KMODNS_REFUSED_MODULE_IMPORT] = "a \"module:\" import: refused",
};

static const char *const status_names[] = {
	[KMODNS_LOAD_ALLOWED] = "allowed",
	[KMODNS_LOAD_WARNED] = "warned",
	[KMODNS_LOAD_REFUSED] = "refused",
};

/* The module an argument names: a file, or a name or alias of the tree; NULL when none. */
static struct kmod_module *module_from_arg(struct target *t, const char *arg)
{
	struct kmod_list *list = NULL, *l;
	struct kmod_module *mod = NULL;

	if (strchr(arg, '/') != NULL) {
		if (kmod_module_new_from_path(t->ctx, arg, &mod) < 0)
			LOG_ERROR("could not open module file %s\n", arg);
		return mod;
	}
	if (kmod_module_new_from_lookup(t->ctx, arg, &list) < 0 || list == NULL) {
		LOG_ERROR("Module %s not found in directory %s\n", arg, t->dirname);
		return NULL;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *m = kmod_module_get_module(l);
		if (mod == NULL && kmod_module_get_path(m) != NULL)
			mod = kmod_module_ref(m);
		kmod_module_unref(m);
	}
	if (mod == NULL)
		LOG_ERROR("Module %s is built into the kernel: no namespace check applies\n", arg);
	kmod_module_unref_list(list);
	return mod;
}

static void print_traits(int traits)
{
	if (traits < 0)
		printf("unknown (depmod's record predates them)\n");
	else
		printf("%s, %s\n", traits & KMODNS_TRAIT_INTREE ? "in-tree" : "out-of-tree",
		       traits & KMODNS_TRAIT_SIGNED ? "signed" : "unsigned");
}

static void explain_text(const struct target *t, const struct kmodns_load_verdict *v,
			 const char *path, const char *why)
{
	size_t i, n;
	long decision = kmodns_load_verdict_get_policy_decision(v);
	int allow = kmodns_kernel_allows_missing_imports(t->kernel);

	printf("%-16s%s\n", "module:", kmodns_load_verdict_get_module(v));
	printf("%-16s%s\n", "filename:", path);
	printf("%-16s%s (a missing import is %s)\n", "kernel:", t->release,
	       allow == 1 ? "warned about: CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y" :
	       allow == 0 ? "refused" : "refused: no kernel config found");
	printf("%-16s%s\n", "judged from:", kmodns_load_verdict_from_record(v) ? "depmod's record" : "the module file");
	printf("%-16s", "traits:");
	print_traits(kmodns_load_verdict_get_traits(v));
	n = kmodns_load_verdict_get_import_count(v);
	for (i = 0; i < n || i == 0; i++)
		printf("%-16s%s\n", i ? "" : "imports:", n ? kmodns_load_verdict_get_import(v, i) : "(none)");
	n = kmodns_load_verdict_get_requirement_count(v);
	for (i = 0; i < n || i == 0; i++) {
		const char *symbol = n ? kmodns_load_verdict_get_requirement_symbol(v, i) : NULL;

		printf("%-16s", i ? "" : "requires:");
		if (n == 0)
			printf("(no namespaced symbol)\n");
		else if (symbol == NULL)
			printf("%s: %s\n", kmodns_load_verdict_get_requirement_namespace(v, i),
			       requirement_verdicts[kmodns_load_verdict_get_requirement_verdict(v, i)]);
		else
			printf("%s: %s from %s: %s\n", kmodns_load_verdict_get_requirement_namespace(v, i),
			       symbol, kmodns_load_verdict_get_requirement_exporter(v, i),
			       requirement_verdicts[kmodns_load_verdict_get_requirement_verdict(v, i)]);
	}
	n = kmodns_load_verdict_get_policy_match_count(v);
	for (i = 0; i < n || i == 0; i++) {
		printf("%-16s", i ? "" : "policy:");
		if (n == 0)
			printf("%s\n", kmodns_policy_get_file_count(t->policy) ? "no rule matched" : "(no policy files)");
		else
			printf("%s: %s:%u: %s%s\n", kmodns_load_verdict_get_policy_match_namespace(v, i),
			       kmodns_load_verdict_get_policy_match_file(v, i),
			       kmodns_load_verdict_get_policy_match_line(v, i),
			       kmodns_load_verdict_get_policy_match_rule(v, i),
			       (long)i == decision ? " (decided)" : "");
	}
	printf("%-16s%s: %s\n", "verdict:", status_names[kmodns_load_verdict_get_status(v)], why);
}

static void json_key_string(const char *key, const char *value, bool comma)
{
	printf("%s\"%s\":", comma ? "," : "", key);
	if (value)
		json_write_string(stdout, value);
	else
		fputs("null", stdout);
}

static void explain_json(const struct target *t, const struct kmodns_load_verdict *v,
			 const char *path, const char *why)
{
	int traits = kmodns_load_verdict_get_traits(v);
	size_t i;

	putchar('{');
	json_key_string("module", kmodns_load_verdict_get_module(v), false);
	json_key_string("filename", path, true);
	json_key_string("kernel", t->release, true);
	printf(",\"missing_imports_allowed\":%s",
	       kmodns_kernel_allows_missing_imports(t->kernel) == 1 ? "true" : "false");
	json_key_string("judged_from", kmodns_load_verdict_from_record(v) ? "record" : "file", true);
	if (traits < 0)
		fputs(",\"intree\":null,\"signed\":null", stdout);
	else
		printf(",\"intree\":%s,\"signed\":%s", traits & KMODNS_TRAIT_INTREE ? "true" : "false",
		       traits & KMODNS_TRAIT_SIGNED ? "true" : "false");
	fputs(",\"imports\":[", stdout);
	for (i = 0; i < kmodns_load_verdict_get_import_count(v); i++) {
		if (i)
			putchar(',');
		json_write_string(stdout, kmodns_load_verdict_get_import(v, i));
	}
	fputs("],\"requires\":[", stdout);
	for (i = 0; i < kmodns_load_verdict_get_requirement_count(v); i++) {
		enum kmodns_verdict rv = kmodns_load_verdict_get_requirement_verdict(v, i);
		printf("%s{", i ? "," : "");
		json_key_string("namespace", kmodns_load_verdict_get_requirement_namespace(v, i), false);
		json_key_string("symbol", kmodns_load_verdict_get_requirement_symbol(v, i), true);
		json_key_string("exporter", kmodns_load_verdict_get_requirement_exporter(v, i), true);
		printf(",\"refused\":%s}", kmodns_verdict_is_refused(rv) ? "true" : "false");
	}
	fputs("],\"policy\":[", stdout);
	for (i = 0; i < kmodns_load_verdict_get_policy_match_count(v); i++) {
		printf("%s{", i ? "," : "");
		json_key_string("namespace", kmodns_load_verdict_get_policy_match_namespace(v, i), false);
		json_key_string("file", kmodns_load_verdict_get_policy_match_file(v, i), true);
		printf(",\"line\":%u", kmodns_load_verdict_get_policy_match_line(v, i));
		json_key_string("rule", kmodns_load_verdict_get_policy_match_rule(v, i), true);
		json_key_string("action",
				kmodns_policy_action_to_string(kmodns_load_verdict_get_policy_match_action(v, i)),
				true);
		printf(",\"decided\":%s}", (long)i == kmodns_load_verdict_get_policy_decision(v) ? "true" : "false");
	}
	putchar(']');
	json_key_string("verdict", status_names[kmodns_load_verdict_get_status(v)], true);
	json_key_string("reason", why, true);
	puts("}");
}

/* The verdict for one module file; -EPERM when refused, another -errno when it cannot be judged. */
static int judge(struct target *t, const char *name, const char *path, bool explain)
{
	struct kmodns_load_verdict *v = NULL;
	_cleanup_free_ char *why = NULL;
	enum kmodns_load_status status;
	int r = kmodns_kernel_check_module(t->kernel, name, path, 0, &v);

	if (r < 0) {
		LOG_ERROR("could not check the namespaces of '%s' (%s): %s\n", name, path, strerror(-r));
		return r;
	}
	status = kmodns_load_verdict_get_status(v);
	why = kmodns_load_verdict_describe(v);
	if (why == NULL)
		r = -ENOMEM;
	else if (explain && opt.json)
		explain_json(t, v, path, why);
	else if (explain)
		explain_text(t, v, path, why);
	else if (status != KMODNS_LOAD_ALLOWED || opt.verbose)
		printf("%s: %s: %s\n", name, status_names[status], why);
	kmodns_load_verdict_unref(v);
	if (r < 0)
		return r;
	return status == KMODNS_LOAD_REFUSED ? -EPERM : status == KMODNS_LOAD_WARNED;
}

static int explain(struct target *t, int argc, char *argv[])
{
	struct kmod_module *mod;
	int r;

	if (argc != 1) {
		LOG_ERROR("explain takes one module (a name, an alias or a file)\n");
		return -EINVAL;
	}
	mod = module_from_arg(t, argv[0]);
	if (mod == NULL)
		return -ENOENT;
	r = judge(t, kmod_module_get_name(mod), kmod_module_get_path(mod), true);
	kmod_module_unref(mod);
	return r == -EPERM ? 0 : r; /* the explanation is the answer, whatever the verdict */
}

static int check(struct target *t, int argc, char *argv[])
{
	size_t counts[3] = { 0 }, failed = 0, i;
	struct tree tree = { 0 };
	int r = 0;

	if (argc == 0)
		r = tree_read(t, &tree);
	for (i = 0; r >= 0 && i < (argc ? (size_t)argc : tree.count); i++) {
		struct kmod_module *mod = argc ? module_from_arg(t, argv[i]) : NULL;
		int v;

		if (argc && mod == NULL) {
			failed++;
			continue;
		}
		v = mod ? judge(t, kmod_module_get_name(mod), kmod_module_get_path(mod), false) :
			  judge(t, tree.mods[i].name, tree.mods[i].path, false);
		kmod_module_unref(mod);
		if (v == -ENOMEM)
			r = v;
		else if (v == -EPERM)
			counts[KMODNS_LOAD_REFUSED]++;
		else if (v < 0)
			failed++;
		else
			counts[v ? KMODNS_LOAD_WARNED : KMODNS_LOAD_ALLOWED]++;
	}
	tree_release(&tree);
	if (r < 0)
		return r;
	if (!opt.quiet) {
		size_t total = counts[0] + counts[1] + counts[2] + failed;

		printf("%zu module%s: %zu allowed, %zu warned, %zu refused", total, total == 1 ? "" : "s",
		       counts[0], counts[1], counts[2]);
		if (failed)
			printf(", %zu not checked", failed);
		putchar('\n');
	}
	if (kmodns_policy_get_error_count(t->policy) > 0)
		return -EINVAL;
	return counts[KMODNS_LOAD_REFUSED] || failed ? -EPERM : 0;
}

int kmodns_command_main(int argc, char *argv[])
{
	struct target t = { 0 };
	const char *command;
	int c, r;

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (streq(argv[1], "-V") || streq(argv[1], "--version"))) {
			printf("kmodns version %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		}
		help();
		return argc >= 2 && (streq(argv[1], "-h") || streq(argv[1], "--help")) ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	command = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, options_short, long_options, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (array_reserve((void **)&opt.config_paths, &opt.config_capacity, sizeof(char *),
					  opt.n_config_paths + 2) < 0)
				return EXIT_FAILURE;
			opt.config_paths[opt.n_config_paths++] = optarg;
			break;
		case 'd': opt.root = optarg; break;
		case 'S': opt.release = optarg; break;
		case OPT_POLICY:
			if (loader_policy_source_add_file(&opt.policy, optarg) < 0)
				return EXIT_FAILURE;
			break;
		case OPT_POLICY_ROOT: opt.policy.root = optarg; break;
		case OPT_JSON: opt.json = true; break;
		case OPT_CHECK: opt.lint = true; break;
		case 'v': opt.verbose = true; break;
		case 'q': opt.quiet = true; break;
		case 'h': help(); return EXIT_SUCCESS;
		case 'V': printf("kmodns version %s\n", PACKAGE_VERSION); return EXIT_SUCCESS;
		default: return EXIT_FAILURE;
		}
	}
	if (!streq(command, "policy") && !streq(command, "explain") && !streq(command, "check")) {
		LOG_ERROR("unknown command '%s' (policy, explain, check)\n", command);
		return EXIT_FAILURE;
	}
	if (streq(command, "policy") && (!opt.lint || optind != argc)) {
		LOG_ERROR("policy takes --check and no argument\n");
		return EXIT_FAILURE;
	}
	r = target_open(&t);
	if (r < 0)
		LOG_ERROR("could not open the module tree of %s: %s\n", opt.release, strerror(-r));
	else if (streq(command, "policy"))
		r = policy_check(&t);
	else if (streq(command, "explain"))
		r = explain(&t, argc - optind, argv + optind);
	else
		r = check(&t, argc - optind, argv + optind);
	target_close(&t);
	loader_policy_source_release(&opt.policy);
	free(opt.config_paths);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
