// SPDX-License-Identifier: LGPL-2.1-or-later
/* The ELF and decompression libraries, opened on first use: see libkmodns-dl.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "libkmodns-private.h"
#include "libkmodns-dl.h"

#define KMODNS_DL_DEFINE(name) typeof(name) *sym_##name;
KMODNS_DL_LIBELF_SYMS(KMODNS_DL_DEFINE)
KMODNS_DL_LIBZSTD_SYMS(KMODNS_DL_DEFINE)
KMODNS_DL_LIBLZMA_SYMS(KMODNS_DL_DEFINE)
KMODNS_DL_ZLIB_SYMS(KMODNS_DL_DEFINE)
KMODNS_DL_LIBLZ4_SYMS(KMODNS_DL_DEFINE)

struct dl_sym {
	const char *name;
	void **ptr;
};

#define KMODNS_DL_ENTRY(name) { #name, (void **)&sym_##name },
static const struct dl_sym libelf_syms[] = { KMODNS_DL_LIBELF_SYMS(KMODNS_DL_ENTRY) { NULL, NULL } };
static const struct dl_sym libzstd_syms[] = { KMODNS_DL_LIBZSTD_SYMS(KMODNS_DL_ENTRY) { NULL, NULL } };
static const struct dl_sym liblzma_syms[] = { KMODNS_DL_LIBLZMA_SYMS(KMODNS_DL_ENTRY) { NULL, NULL } };
static const struct dl_sym zlib_syms[] = { KMODNS_DL_ZLIB_SYMS(KMODNS_DL_ENTRY) { NULL, NULL } };
static const struct dl_sym liblz4_syms[] = { KMODNS_DL_LIBLZ4_SYMS(KMODNS_DL_ENTRY) { NULL, NULL } };

struct dl_lib {
	const char *soname; /* the ABI the headers we built with describe */
	const struct dl_sym *syms;
	void *handle;
	char error[256];
};

static struct dl_lib libs[] = {
	[KMODNS_DL_LIBELF] = { "libelf.so.1", libelf_syms, NULL, "" },
	[KMODNS_DL_LIBZSTD] = { "libzstd.so.1", libzstd_syms, NULL, "" },
	[KMODNS_DL_LIBLZMA] = { "liblzma.so.5", liblzma_syms, NULL, "" },
	[KMODNS_DL_ZLIB] = { "libz.so.1", zlib_syms, NULL, "" },
	[KMODNS_DL_LIBLZ4] = { "liblz4.so.1", liblz4_syms, NULL, "" },
};

static void dl_open(struct dl_lib *lib)
{
	const struct dl_sym *s;
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	if (h == NULL) {
		const char *e = dlerror();
		snprintf(lib->error, sizeof(lib->error), "%s", e ? e : lib->soname);
		return;
	}
	for (s = lib->syms; s->name != NULL; s++) {
		*s->ptr = dlsym(h, s->name);
		if (*s->ptr == NULL) {
			snprintf(lib->error, sizeof(lib->error), "%s: no function %s", lib->soname, s->name);
			dlclose(h);
			return;
		}
	}
	lib->handle = h;
}

/* pthread_once takes no argument: one function per library. */
#define KMODNS_DL_ONCE(id) \
	static pthread_once_t once_##id = PTHREAD_ONCE_INIT; \
	static void open_##id(void) { dl_open(&libs[id]); }
KMODNS_DL_ONCE(KMODNS_DL_LIBELF)
KMODNS_DL_ONCE(KMODNS_DL_LIBZSTD)
KMODNS_DL_ONCE(KMODNS_DL_LIBLZMA)
KMODNS_DL_ONCE(KMODNS_DL_ZLIB)
KMODNS_DL_ONCE(KMODNS_DL_LIBLZ4)

int kmodns_dl_need(struct kmodns_ctx *ctx, const char *label, enum kmodns_dl_lib lib)
{
	switch (lib) {
	case KMODNS_DL_LIBELF: pthread_once(&once_KMODNS_DL_LIBELF, open_KMODNS_DL_LIBELF); break;
	case KMODNS_DL_LIBZSTD: pthread_once(&once_KMODNS_DL_LIBZSTD, open_KMODNS_DL_LIBZSTD); break;
	case KMODNS_DL_LIBLZMA: pthread_once(&once_KMODNS_DL_LIBLZMA, open_KMODNS_DL_LIBLZMA); break;
	case KMODNS_DL_ZLIB: pthread_once(&once_KMODNS_DL_ZLIB, open_KMODNS_DL_ZLIB); break;
	case KMODNS_DL_LIBLZ4: pthread_once(&once_KMODNS_DL_LIBLZ4, open_KMODNS_DL_LIBLZ4); break;
	default: return -EINVAL;
	}
	if (libs[lib].handle != NULL)
		return 0;
	if (ctx != NULL)
		ERR(ctx, "%s: cannot load %s: %s", label, libs[lib].soname, libs[lib].error);
	return -ELIBACC;
}
