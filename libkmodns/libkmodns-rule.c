// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's namespace rule, as kernel/module/main.c applies it inside
 * finit_module (same text 5.4-7.2, module: namespaces since 6.16). Every tool
 * asks this file and no other.
 */
#include <errno.h>

#include "libkmodns-private.h"

#define MODULE_NS_PREFIX "module:"
#define MODULE_NS_SINCE KMODNS_KERNEL_VERSION(6, 16, 0)

KMODNS_EXPORT unsigned kmodns_kernel_version_parse(const char *release)
{
	unsigned v[3] = { 0, 0, 0 };
	const char *p = release;
	int i;

	if (release == NULL)
		return 0;
	for (i = 0; i < 3; i++) {
		char *end;
		unsigned long n;
		if (*p < '0' || *p > '9')
			break;
		n = strtoul(p, &end, 10);
		v[i] = n > 255 ? 255 : (unsigned)n; /* 5.4.290: the sublevel only orders */
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	if (i < 1 || (v[0] == 0 && v[1] == 0))
		return 0;
	return KMODNS_KERNEL_VERSION(v[0], v[1], v[2]);
}

static bool module_namespaces_apply(unsigned kernel_version)
{
	return kernel_version == 0 || kernel_version >= MODULE_NS_SINCE;
}

/* The kernel compares module names with '-' and '_' as one character. */
static bool name_chars_equal(char a, char b)
{
	return a == b || ((a == '-' || a == '_') && (b == '-' || b == '_'));
}

KMODNS_EXPORT bool kmodns_module_pattern_matches(const char *patterns, const char *module_name)
{
	size_t modlen = strlen(module_name);
	const char *p = patterns;

	while (*p) {
		const char *sep = strchrnul(p, ',');
		size_t len = (size_t)(sep - p), i;
		bool glob = len > 0 && p[len - 1] == '*';

		if (glob)
			len--;
		for (i = 0; i < len && i < modlen && name_chars_equal(p[i], module_name[i]); i++)
			;
		if (i == len && (glob || len == modlen))
			return true;
		p = *sep ? sep + 1 : sep;
	}
	return false;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_namespace_check(const char *module_name,
							 const char *const *imports, size_t n_imports,
							 const char *ns, unsigned kernel_version)
{
	size_t i;

	if (ns == NULL || ns[0] == '\0')
		return KMODNS_ALLOWED_NO_NAMESPACE;
	if (kmodns_namespace_is_module_list(ns, kernel_version) &&
	    kmodns_module_pattern_matches(ns + strlen(MODULE_NS_PREFIX), module_name))
		return KMODNS_ALLOWED_MODULE_PATTERN;
	for (i = 0; i < n_imports; i++)
		if (streq(imports[i], ns))
			return KMODNS_ALLOWED_IMPORTED;
	return KMODNS_REFUSED_MISSING_IMPORT;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_import_check(const char *ns, unsigned kernel_version)
{
	if (kmodns_namespace_is_module_list(ns, kernel_version))
		return KMODNS_REFUSED_MODULE_IMPORT;
	return KMODNS_ALLOWED_IMPORTED;
}

bool kmodns_namespace_is_module_list(const char *ns, unsigned kernel_version)
{
	return module_namespaces_apply(kernel_version) && startswith(ns, MODULE_NS_PREFIX);
}

KMODNS_EXPORT bool kmodns_verdict_is_refused(enum kmodns_verdict verdict)
{
	return verdict == KMODNS_REFUSED_MISSING_IMPORT || verdict == KMODNS_REFUSED_MODULE_IMPORT;
}
