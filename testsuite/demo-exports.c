/* demo-exports MODULE: a program built on the installed libkmodns prints a module's exports and
 * their namespaces (t-install, t-package: the header, pkg-config file and library work). */
#include <stdio.h>
#include <libkmodns.h>

int main(int argc, char **argv)
{
	struct kmodns_ctx *ctx = kmodns_new();
	struct kmodns_module *mod;
	size_t i;

	if (ctx == NULL || argc < 2 || kmodns_module_new_from_path(ctx, argv[1], 0, &mod) < 0) {
		kmodns_unref(ctx);
		return 1;
	}
	for (i = 0; i < kmodns_module_get_export_count(mod); i++) {
		const struct kmodns_export *e = kmodns_module_get_export(mod, i);

		printf("%s %s\n", kmodns_export_get_symbol(e), kmodns_export_get_namespace(e));
	}
	kmodns_module_unref(mod);
	kmodns_unref(ctx);
	return 0;
}
