/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * depmod's cache of read modules: what libkmodns learned from each module file,
 * keyed by path, size, mtime and inode, so that a rerun re-reads only the files
 * that changed. For tools of this package, not part of the public API.
 */
#pragma once

#include <stdio.h>
#include <sys/stat.h>

#include "libkmodns.h"

/* ---- reading ------------------------------------------------------------------------------ */

struct kmodns_module_cache;

/*
 * Reads and checks the whole cache file. -ENOENT when there is none; -EBADMSG
 * for a damaged, truncated or foreign one (another format, library version or
 * byte order), which callers ignore. Logs at LOG_INFO why a cache is unusable.
 */
int kmodns_module_cache_open(struct kmodns_ctx *ctx, const char *path,
			     struct kmodns_module_cache **cache);
void kmodns_module_cache_free(struct kmodns_module_cache *cache);
/* How many modules the cache holds. */
size_t kmodns_module_cache_get_count(const struct kmodns_module_cache *cache);

/*
 * The module read earlier from path, if st (a stat of path now) matches the
 * cached size, mtime and inode: a new object as kmodns_module_new_from_path
 * would have returned. -ENOENT when absent or stale. Safe from several threads.
 */
int kmodns_module_cache_get(const struct kmodns_module_cache *cache, const char *path,
			    const struct stat *st, struct kmodns_module **mod);

/* Whether kmodns_module_cache_get() would find path fresh (without building the module). */
bool kmodns_module_cache_has(const struct kmodns_module_cache *cache, const char *path,
			     const struct stat *st);

/*
 * vmlinux's exports read earlier from the kernel image at path, if st (a stat of
 * path now) matches: a table as kmodns_symvers_new_from_vmlinuz would have
 * returned. -ENOENT when absent or stale, -EBADMSG when unusable.
 */
int kmodns_module_cache_get_vmlinux(const struct kmodns_module_cache *cache, const char *path,
				    const struct stat *st, struct kmodns_symvers **sv);

/* ---- writing ------------------------------------------------------------------------------ */

struct kmodns_module_cache_writer;

struct kmodns_module_cache_writer *kmodns_module_cache_writer_new(void);
void kmodns_module_cache_writer_free(struct kmodns_module_cache_writer *w);
/* Adds mod, read from its path when that file had stat st (taken before reading it). */
int kmodns_module_cache_writer_add(struct kmodns_module_cache_writer *w,
				   const struct kmodns_module *mod, const struct stat *st);
/* Adds the entry of path in cache as it is, when kmodns_module_cache_get() found it fresh:
 * cheaper than writing the module again. -ENOENT when cache has no such entry. */
int kmodns_module_cache_writer_add_cached(struct kmodns_module_cache_writer *w,
					  const struct kmodns_module_cache *cache, const char *path);
/* Keeps vmlinux's exports sv, read from the kernel image at path when it had stat st. */
int kmodns_module_cache_writer_set_vmlinux(struct kmodns_module_cache_writer *w, const char *path,
					   const struct stat *st, const struct kmodns_symvers *sv);
/* Writes the cache file to out (the caller writes to a temporary file and renames it). */
int kmodns_module_cache_writer_write(struct kmodns_module_cache_writer *w, FILE *out);
