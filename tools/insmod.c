// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * insmod: kmod's insmod on the system's libkmod — one module file, no
 * dependencies — that first judges the file itself by the target (running)
 * kernel's namespace rule and does not call finit_module when it would fail.
 */
#include <errno.h>
#include <getopt.h>

#include "loader.h"
#include "tool-util.h"
#include "tools.h"

enum { OPT_NO_NS_CHECK = 1, OPT_POLICY, OPT_POLICY_ROOT };

static const char options_short[] = "psfvVh";
static const struct option long_options[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "syslog", no_argument, NULL, 's' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "no-ns-check", no_argument, NULL, OPT_NO_NS_CHECK },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "policy-root", required_argument, NULL, OPT_POLICY_ROOT },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	printf("Usage:\n"
	       "\t%s [options] filename [args]\n"
	       "Options:\n"
	       "\t-f, --force       DANGEROUS: forces a module load, may cause\n"
	       "\t                  data corruption and crash your machine\n"
	       "\t    --no-ns-check Do not check symbol namespaces before loading\n"
	       "\t    --policy=FILE Apply this namespace policy (kmodns.d(5)) instead of\n"
	       "\t                  the installed one (may be repeated)\n"
	       "\t    --policy-root=DIR  Read the installed policy under DIR\n"
	       "\t-s, --syslog      print to syslog, not stderr\n"
	       "\t-v, --verbose     enables more messages\n"
	       "\t-V, --version     show version\n"
	       "\t-h, --help        show this help\n",
	       program_invocation_short_name);
}

/* kmod's wording of what finit_module's errno means for a module. */
static const char *insert_strerror(int err)
{
	switch (err) {
	case ENOEXEC: return "Invalid module format";
	case ENOENT: return "Unknown symbol in module";
	case ESRCH: return "Module has wrong symbol version";
	case EINVAL: return "Invalid parameters";
	default: return strerror(err);
	}
}

int insmod_main(int argc, char *argv[])
{
	static const char *no_config = NULL;
	_cleanup_free_ char *module_options = NULL;
	struct kmod_ctx *ctx = NULL;
	struct kmodns_ctx *ns_ctx = NULL;
	struct kmodns_kernel *kernel = NULL;
	struct kmod_module *mod = NULL;
	struct load_set set = { 0 };
	struct loader_policy_source policy_source = { 0 };
	const char *filename;
	bool use_syslog = false, ns_check = true;
	unsigned flags = 0;
	int verbose = LOG_ERR, c, r = 0;

	while ((c = getopt_long(argc, argv, options_short, long_options, NULL)) != -1) {
		switch (c) {
		case 'p': break; /* accepted, as kmod's insmod does, and ignored */
		case 'f': flags |= KMOD_PROBE_FORCE_MODVERSION | KMOD_PROBE_FORCE_VERMAGIC; break;
		case 's': use_syslog = true; break;
		case 'v': verbose++; break;
		case OPT_NO_NS_CHECK: ns_check = false; break;
		case OPT_POLICY:
			if (loader_policy_source_add_file(&policy_source, optarg) < 0)
				return EXIT_FAILURE;
			break;
		case OPT_POLICY_ROOT: policy_source.root = optarg; break;
		case 'h':
			help();
			return EXIT_SUCCESS;
		case 'V':
			printf("kmodns version %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		case '?':
			return EXIT_FAILURE;
		default:
			LOG_ERROR("unexpected getopt_long() value '%c'.\n", c);
			return EXIT_FAILURE;
		}
	}
	loader_log_open(use_syslog);
	if (optind >= argc) {
		LOG_ERROR("missing filename.\n");
		r = -EINVAL;
		goto out;
	}
	filename = argv[optind];
	if (streq(filename, "-")) {
		LOG_ERROR("this tool does not support loading from stdin!\n");
		r = -EINVAL;
		goto out;
	}
	r = module_options_from_args(argv + optind + 1, argc - optind - 1, &module_options);
	if (r < 0) {
		LOG_ERROR("could not gather module options: out-of-memory\n");
		goto out;
	}
	ctx = loader_kmod_new(NULL, &no_config);
	ns_ctx = kmodns_new();
	if (ctx == NULL || ns_ctx == NULL) {
		LOG_ERROR("kmod_new() failed!\n");
		r = -ENOMEM;
		goto out;
	}
	loader_log_set_priority(verbose);
	loader_log_setup_kmod(ctx, ns_ctx);

	r = kmod_module_new_from_path(ctx, filename, &mod);
	if (r < 0) {
		LOG_ERROR("could not load module %s: %s\n", filename, strerror(-r));
		goto out;
	}
	if (ns_check) {
		/* the file itself is judged, against the running kernel and its module tree */
		r = loader_kernel_new(ns_ctx, NULL, kmod_get_dirname(ctx), &policy_source, &kernel);
		if (r >= 0)
			r = load_set_add(&set, mod);
		if (r >= 0)
			r = load_set_check(kernel, &set, LOAD_CHECK_READ_FILES);
		if (r < 0)
			goto out;
	}
	r = kmod_module_insert_module(mod, flags, module_options);
	if (r < 0)
		LOG_ERROR("could not insert module %s: %s\n", filename, insert_strerror(-r));
out:
	load_set_release(&set);
	loader_policy_source_release(&policy_source);
	kmod_module_unref(mod);
	kmodns_kernel_unref(kernel);
	kmodns_unref(ns_ctx);
	kmod_unref(ctx);
	loader_log_close();
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
