/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * depmod's cache of read modules: what libkmodns learned from each module file,
 * keyed by path, size, mtime and inode, so that a rerun re-reads only the files
 * that changed. For tools of this package, not part of the public API.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "libkmodns.h"

/* A module's content digest (SHA-256): equal digests, equal results for depmod. */
#define KMODNS_CACHE_DIGEST_SIZE 32

/* The digest of what the cache keeps of mod (whatever its file's key). */
int kmodns_module_cache_digest(const struct kmodns_module *mod, uint8_t digest[KMODNS_CACHE_DIGEST_SIZE]);

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
/* Entry i's path and content digest, in file order (what a run stamp would hold for it). */
const char *kmodns_module_cache_get_path(const struct kmodns_module_cache *cache, size_t i);
const uint8_t *kmodns_module_cache_get_digest(const struct kmodns_module_cache *cache, size_t i);

/*
 * The module read earlier from path, if st (a stat of path now) matches the
 * cached size, mtime and inode, or else if digest (when not NULL: what a run
 * stamp knows of the file as it is now) is the entry's: a new object as
 * kmodns_module_new_from_path would have returned. -ENOENT when absent or
 * stale. Safe from several threads.
 */
int kmodns_module_cache_get(const struct kmodns_module_cache *cache, const char *path,
			    const struct stat *st, const uint8_t *digest, struct kmodns_module **mod);

/* Whether kmodns_module_cache_get() would find path fresh (without building the module). */
bool kmodns_module_cache_has(const struct kmodns_module_cache *cache, const char *path,
			     const struct stat *st, const uint8_t *digest);

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
/* Adds mod, read from its path when that file had stat st (taken before reading it);
 * digest is set to the entry's. */
int kmodns_module_cache_writer_add(struct kmodns_module_cache_writer *w,
				   const struct kmodns_module *mod, const struct stat *st,
				   uint8_t digest[KMODNS_CACHE_DIGEST_SIZE]);
/* Adds the entry of path in cache under key st, when kmodns_module_cache_get() found it
 * fresh: cheaper than writing the module again. digest is set to the entry's. -ENOENT
 * when cache has no such entry. */
int kmodns_module_cache_writer_add_cached(struct kmodns_module_cache_writer *w,
					  const struct kmodns_module_cache *cache, const char *path,
					  const struct stat *st, uint8_t digest[KMODNS_CACHE_DIGEST_SIZE]);
/* Keeps vmlinux's exports sv, read from the kernel image at path when it had stat st. */
int kmodns_module_cache_writer_set_vmlinux(struct kmodns_module_cache_writer *w, const char *path,
					   const struct stat *st, const struct kmodns_symvers *sv);
/* Writes the cache file to out (the caller writes to a temporary file and renames it). */
int kmodns_module_cache_writer_write(struct kmodns_module_cache_writer *w, FILE *out);

/* ---- run stamps ------------------------------------------------------------------------------
 * What a complete run wrote and from what: a digest of its inputs besides the modules, the
 * key of each file it wrote, and the key and digest of each module it read. When a rerun
 * finds the same, its output would be the same bytes: depmod need not write it again.
 */

struct kmodns_run_stamp;

/* Reads and checks a stamp: -ENOENT when there is none, -EBADMSG when damaged or foreign
 * (logged at LOG_INFO). */
int kmodns_run_stamp_open(struct kmodns_ctx *ctx, const char *path, struct kmodns_run_stamp **stamp);
void kmodns_run_stamp_free(struct kmodns_run_stamp *stamp);
bool kmodns_run_stamp_inputs_equal(const struct kmodns_run_stamp *stamp,
				   const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE]);
/* The files, in the order they were added. */
size_t kmodns_run_stamp_get_count(const struct kmodns_run_stamp *stamp);
const char *kmodns_run_stamp_get_path(const struct kmodns_run_stamp *stamp, size_t i);
bool kmodns_run_stamp_key_matches(const struct kmodns_run_stamp *stamp, size_t i, const struct stat *st);
/* NULL when the file was added without one. */
const uint8_t *kmodns_run_stamp_get_digest(const struct kmodns_run_stamp *stamp, size_t i);
/* The digest of path if its key matches st; NULL otherwise, or when stamp is NULL. */
const uint8_t *kmodns_run_stamp_get_fresh_digest(const struct kmodns_run_stamp *stamp, const char *path,
						 const struct stat *st);

struct kmodns_run_stamp_writer;

struct kmodns_run_stamp_writer *kmodns_run_stamp_writer_new(const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE]);
void kmodns_run_stamp_writer_free(struct kmodns_run_stamp_writer *w);
/* Adds a file with its key st (taken after it was written, or before it was read), and a
 * module's digest, or NULL. */
int kmodns_run_stamp_writer_add(struct kmodns_run_stamp_writer *w, const char *path,
				const struct stat *st, const uint8_t *digest);
int kmodns_run_stamp_writer_write(struct kmodns_run_stamp_writer *w, FILE *out);
