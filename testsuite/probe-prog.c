// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * probe-prog: loads modules through the system's libkmod.so.2 as systemd-modules-load does, for
 * t-preload to run under the syscall trap with and without kmodns-preload.so.
 *
 *   probe-prog [-i] [-l] [-b] NAME...
 *     each NAME looked up (alias or module name) and loaded with kmod_module_probe_insert_module(),
 *     or with -i kmod_module_insert_module(); -l: libkmod opened with dlopen("libkmod.so.2") and
 *     its functions found with dlsym(), as systemd 257 does; -b: KMOD_PROBE_APPLY_BLACKLIST, as
 *     udevd. Prints "NAME RESULT" per module (RESULT: libkmod's return value); exits 1 when one
 *     failed. An argument "!CMD" runs CMD with system() there, between loads of one process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkmod.h>

/* libkmod's functions this program calls, linked or looked up */
static struct {
	struct kmod_ctx *(*new)(const char *dirname, const char *const *config_paths);
	struct kmod_ctx *(*unref)(struct kmod_ctx *ctx);
	int (*lookup)(struct kmod_ctx *ctx, const char *alias, struct kmod_list **list);
	struct kmod_module *(*get_module)(const struct kmod_list *entry);
	struct kmod_list *(*list_next)(const struct kmod_list *list, const struct kmod_list *curr);
	int (*unref_list)(struct kmod_list *list);
	struct kmod_module *(*module_unref)(struct kmod_module *mod);
	int (*probe)(struct kmod_module *mod, unsigned flags, const char *extra_options,
		     int (*run_install)(struct kmod_module *m, const char *cmd, void *data),
		     const void *data,
		     void (*print_action)(struct kmod_module *m, bool install, const char *options));
	int (*insert)(struct kmod_module *mod, unsigned flags, const char *options);
} k = {
	kmod_new, kmod_unref, kmod_module_new_from_lookup, kmod_module_get_module, kmod_list_next,
	kmod_module_unref_list, kmod_module_unref, kmod_module_probe_insert_module,
	kmod_module_insert_module,
};

static int look_up(void)
{
	void *h = dlopen("libkmod.so.2", RTLD_NOW | RTLD_NODELETE);

	if (h == NULL) {
		fprintf(stderr, "probe-prog: %s\n", dlerror());
		return -1;
	}
	*(void **)&k.new = dlsym(h, "kmod_new");
	*(void **)&k.unref = dlsym(h, "kmod_unref");
	*(void **)&k.lookup = dlsym(h, "kmod_module_new_from_lookup");
	*(void **)&k.get_module = dlsym(h, "kmod_module_get_module");
	*(void **)&k.list_next = dlsym(h, "kmod_list_next");
	*(void **)&k.unref_list = dlsym(h, "kmod_module_unref_list");
	*(void **)&k.module_unref = dlsym(h, "kmod_module_unref");
	*(void **)&k.probe = dlsym(h, "kmod_module_probe_insert_module");
	*(void **)&k.insert = dlsym(h, "kmod_module_insert_module");
	if (!k.new || !k.unref || !k.lookup || !k.get_module || !k.list_next || !k.unref_list ||
	    !k.module_unref || !k.probe || !k.insert) {
		fprintf(stderr, "probe-prog: a libkmod function is missing: %s\n", dlerror());
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool insert = false, blacklist = false;
	struct kmod_ctx *ctx;
	int opt, failed = 0, i;

	while ((opt = getopt(argc, argv, "ilb")) != -1) {
		switch (opt) {
		case 'i': insert = true; break;
		case 'l':
			if (look_up() < 0)
				return 2;
			break;
		case 'b': blacklist = true; break;
		default: return 2;
		}
	}
	ctx = k.new(NULL, NULL);
	if (ctx == NULL) {
		fprintf(stderr, "probe-prog: kmod_new failed\n");
		return 2;
	}
	for (i = optind; i < argc; i++) {
		struct kmod_list *list = NULL, *l;
		int r;

		if (argv[i][0] == '!') {
			if (system(argv[i] + 1) != 0)
				failed = 1;
			continue;
		}
		r = k.lookup(ctx, argv[i], &list);
		if (r < 0 || list == NULL) {
			printf("%s not-found\n", argv[i]);
			failed = 1;
			continue;
		}
		for (l = list; l != NULL; l = k.list_next(list, l)) {
			struct kmod_module *mod = k.get_module(l);

			r = insert ? k.insert(mod, 0, NULL)
				   : k.probe(mod, blacklist ? KMOD_PROBE_APPLY_BLACKLIST : 0, NULL, NULL,
					     NULL, NULL);
			printf("%s %d\n", argv[i], r);
			if (r < 0)
				failed = 1;
			k.module_unref(mod);
		}
		k.unref_list(list);
	}
	k.unref(ctx);
	return failed;
}
