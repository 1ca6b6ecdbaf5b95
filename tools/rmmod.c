// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rmmod: kmod's rmmod on the system's libkmod — same options, messages and
 * exit codes. Each argument is a module name, or the path of a module file;
 * without -f a module that is not loaded, is held by another module or has
 * users is refused before the kernel is asked.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>

#include "loader.h"
#include "tool-util.h"
#include "tools.h"

static const char options_short[] = "fsvVh";
static const struct option long_options[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "syslog", no_argument, NULL, 's' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void help(void)
{
	printf("Usage:\n"
	       "\t%s [options] modulename ...\n"
	       "Options:\n"
	       "\t-f, --force       forces a module unload and may crash your\n"
	       "\t                  machine. This requires Forced Module Removal\n"
	       "\t                  option in your kernel. DANGEROUS\n"
	       "\t-s, --syslog      print to syslog, not stderr\n"
	       "\t-v, --verbose     enables more messages\n"
	       "\t-V, --version     show version\n"
	       "\t-h, --help        show this help\n",
	       program_invocation_short_name);
}

/* Refuses (with kmod's message) a module the kernel would not, or should not, remove. */
static int check_module_inuse(struct kmod_module *mod)
{
	const char *name = kmod_module_get_name(mod);
	struct kmod_list *holders, *l;
	int state, refcnt;

	state = kmod_module_get_initstate(mod);
	if (state == KMOD_MODULE_BUILTIN) {
		LOG_ERROR("Module %s is builtin.\n", name);
		return -ENOENT;
	}
	if (state < 0) {
		LOG_ERROR("Module %s is not currently loaded\n", name);
		return -ENOENT;
	}
	holders = kmod_module_get_holders(mod);
	if (holders != NULL) {
		_cleanup_free_ char *users = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&users, &len);

		if (f != NULL) {
			kmod_list_foreach(l, holders) {
				struct kmod_module *holder = kmod_module_get_module(l);

				fprintf(f, " %s", kmod_module_get_name(holder));
				kmod_module_unref(holder);
			}
			fclose(f);
		}
		kmod_module_unref_list(holders);
		LOG_ERROR("Module %s is in use by:%s\n", name, users ? users : "");
		return -EBUSY;
	}
	refcnt = kmod_module_get_refcnt(mod);
	if (refcnt > 0) {
		LOG_ERROR("Module %s is in use\n", name);
		return -EBUSY;
	}
	/* no refcnt file: a kernel built without CONFIG_MODULE_UNLOAD */
	if (refcnt == -ENOENT) {
		LOG_ERROR("Module unloading is not supported\n");
		return -ENOENT;
	}
	return refcnt < 0 ? refcnt : 0;
}

/* A path names the module in that file; anything else is a module name. */
static int module_from_arg(struct kmod_ctx *ctx, const char *arg, struct kmod_module **mod)
{
	struct stat st;

	if (stat(arg, &st) == 0)
		return kmod_module_new_from_path(ctx, arg, mod);
	return kmod_module_new_from_name(ctx, arg, mod);
}

int rmmod_main(int argc, char *argv[])
{
	struct kmod_ctx *ctx = NULL;
	bool use_syslog = false;
	unsigned flags = KMOD_REMOVE_NOWAIT;
	int verbose = LOG_ERR, c, i, r = 0;

	while ((c = getopt_long(argc, argv, options_short, long_options, NULL)) != -1) {
		switch (c) {
		case 'f': flags |= KMOD_REMOVE_FORCE; break;
		case 's': use_syslog = true; break;
		case 'v': verbose++; break;
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
		LOG_ERROR("missing module name.\n");
		r = -EINVAL;
		goto out;
	}
	ctx = loader_kmod_new(NULL, NULL);
	if (ctx == NULL) {
		LOG_ERROR("kmod_new() failed!\n");
		r = -ENOMEM;
		goto out;
	}
	loader_log_set_priority(verbose);
	loader_log_setup_kmod(ctx, NULL);

	for (i = optind; i < argc; i++) {
		struct kmod_module *mod = NULL;
		int err = module_from_arg(ctx, argv[i], &mod);

		if (err < 0) {
			LOG_ERROR("could not use module %s: %s\n", argv[i], strerror(-err));
			r = err;
			continue;
		}
		/* -f leaves every judgement to the kernel */
		if (!(flags & KMOD_REMOVE_FORCE))
			err = check_module_inuse(mod);
		if (err >= 0) {
			err = kmod_module_remove_module(mod, flags);
			if (err < 0)
				LOG_ERROR("could not remove module %s: %s\n", argv[i], strerror(-err));
		}
		if (err < 0)
			r = err;
		kmod_module_unref(mod);
	}
out:
	kmod_unref(ctx);
	loader_log_close();
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
