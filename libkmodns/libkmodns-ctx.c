// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>

#include "libkmodns-private.h"

KMODNS_EXPORT struct kmodns_ctx *kmodns_new(void)
{
	struct kmodns_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return NULL;
	ctx->refcount = 1;
	ctx->log_priority = LOG_ERR;
	return ctx;
}

/* Atomic: modules of one context may be read on several threads at once. */
KMODNS_EXPORT struct kmodns_ctx *kmodns_ref(struct kmodns_ctx *ctx)
{
	if (ctx)
		__atomic_add_fetch(&ctx->refcount, 1, __ATOMIC_RELAXED);
	return ctx;
}

KMODNS_EXPORT struct kmodns_ctx *kmodns_unref(struct kmodns_ctx *ctx)
{
	if (ctx == NULL || __atomic_sub_fetch(&ctx->refcount, 1, __ATOMIC_ACQ_REL) > 0)
		return NULL;
	free(ctx);
	return NULL;
}

KMODNS_EXPORT void kmodns_set_log_priority(struct kmodns_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

KMODNS_EXPORT int kmodns_get_log_priority(const struct kmodns_ctx *ctx)
{
	return ctx->log_priority;
}

KMODNS_EXPORT void kmodns_set_log_fn(struct kmodns_ctx *ctx, kmodns_log_fn fn, void *data)
{
	ctx->log_fn = fn;
	ctx->log_data = data;
}

void kmodns_log(const struct kmodns_ctx *ctx, int priority, const char *file, int line,
		const char *fn, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	ctx->log_fn(ctx->log_data, priority, file, line, fn, format, args);
	va_end(args);
}
