// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lsmod: kmod's lsmod on the system's libkmod — the loaded modules as the
 * kernel lists them (/proc/modules, newest first), with their size, use count
 * and holders, in kmod's columns. It takes no argument at all.
 */
#include <errno.h>

#include "loader.h"
#include "tool-util.h"
#include "tools.h"

/* One module's row: "%-19s %8ld  %d" and its holders, ' ' then ',' separated. */
static void print_module(struct kmod_module *mod)
{
	struct kmod_list *holders, *l;
	char sep = ' ';

	printf("%-19s %8ld  %d", kmod_module_get_name(mod), kmod_module_get_size(mod),
	       kmod_module_get_refcnt(mod));
	holders = kmod_module_get_holders(mod);
	kmod_list_foreach(l, holders) {
		struct kmod_module *holder = kmod_module_get_module(l);

		putchar(sep);
		fputs(kmod_module_get_name(holder), stdout);
		sep = ',';
		kmod_module_unref(holder);
	}
	putchar('\n');
	kmod_module_unref_list(holders);
}

int lsmod_main(int argc, char *argv[])
{
	struct kmod_list *list = NULL, *l;
	struct kmod_ctx *ctx;
	int err;

	/* kmod's lsmod knows no option, not even --help: any argument is a usage error */
	if (argc != 1) {
		fprintf(stderr, "Usage: %s\n", argv[0]);
		return EXIT_FAILURE;
	}
	/* libkmod's own log (its default, to stderr) speaks for it, as under kmod's lsmod */
	ctx = loader_kmod_new(NULL, NULL);
	if (ctx == NULL) {
		fputs("Error: kmod_new() failed!\n", stderr);
		return EXIT_FAILURE;
	}
	err = kmod_module_new_from_loaded(ctx, &list);
	if (err < 0) {
		fprintf(stderr, "Error: could not get list of modules: %s\n", strerror(-err));
		kmod_unref(ctx);
		return EXIT_FAILURE;
	}
	puts("Module                  Size  Used by");
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);

		print_module(mod);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	kmod_unref(ctx);
	return EXIT_SUCCESS;
}
