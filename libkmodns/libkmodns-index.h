/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kmod's modules.*.bin index: a writer byte-identical to kmod <= 33's depmod, and an exact-key reader. */
#pragma once

#include <stdio.h>
#include <time.h>

/* ---- writing ------------------------------------------------------------------------------ */

struct kmodns_index_builder;

struct kmodns_index_builder *kmodns_index_builder_new(void);
void kmodns_index_builder_free(struct kmodns_index_builder *b);

/* Copies key and value.  -EINVAL for a key or value byte >= 0x80 (kmod's depmod cannot index
 * them), -ENOMEM.  The empty key is allowed (its values sit on the root, as depmod writes an
 * empty alias).  Values of one key are kept in ascending priority; among equal priorities the
 * last added comes first. */
int kmodns_index_builder_add(struct kmodns_index_builder *b, const char *key, const char *value,
			     unsigned priority);

/* Writes the whole index to out in kmod <= 33's post-order layout (what Debian 12's kmod 30
 * writes) and flushes it.  -EFBIG past the format's 28-bit offsets, -ENOMEM, -errno on a write
 * error.  The builder is unchanged and may be written again. */
int kmodns_index_builder_write(struct kmodns_index_builder *b, FILE *out);

/* ---- reading ------------------------------------------------------------------------------ */

struct kmodns_index;

/* Opens path (a file that is not a regular one is read whole) and checks magic and major
 * version.  -errno when it cannot be read, -EBADMSG for a file that is not an index (logs
 * nothing: callers do). */
int kmodns_index_open(const char *path, struct kmodns_index **idx);
/* The same, path relative to the directory dirfd (or AT_FDCWD) as openat() takes it. */
int kmodns_index_open_at(int dirfd, const char *path, struct kmodns_index **idx);
/* The file's modification time when it was opened. */
struct timespec kmodns_index_get_mtime(const struct kmodns_index *idx);
void kmodns_index_close(struct kmodns_index *idx);

/* Calls fn(data, value, priority) for every value of exactly key, in file order; value points
 * into idx's buffer and lives until the next lookup on idx or its close.  Returns the count,
 * 0 when the key is absent, -EBADMSG for a corrupt file (nothing is called then), -errno when
 * it cannot be read, or fn's first negative return (which stops the walk).  fn may be NULL to
 * only count. */
int kmodns_index_lookup(struct kmodns_index *idx, const char *key,
			int (*fn)(void *data, const char *value, unsigned priority), void *data);
