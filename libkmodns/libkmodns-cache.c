// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * depmod's module cache. One file, read whole and checked before use:
 *
 *   header  "kmodnsC\n", u32 0x01020304 (byte order), u32 format, u64 body size,
 *           u32 CRC-32 of the body, u32 0
 *   body    str library version, u32 entry count, then per entry:
 *           u32 length of the rest of the entry,
 *           str path, u64 size, i64 mtime s, u64 mtime ns, u64 inode,
 *           SHA-256 of the rest of the entry (the module's content, whatever its key),
 *           the module: str name, u8 has vermagic, str vermagic, u8 compression,
 *           u8 ELF class, u8 big endian, u8 signature appended, u32 raw import count,
 *           u32 n + exports (str symbol, str namespace, u8 type, u8 has CRC, u32 CRC),
 *           u32 n + imports (str), u32 n + undefined (str, u8 weak, u8 has CRC, u32 CRC),
 *           u32 n + .modinfo records (str key, str value), u32 n + versions (str, u32 CRC);
 *           then u8 whether a kernel image follows, and if so: str path, u64 size, i64 mtime s,
 *           u64 mtime ns, u64 inode, u32 n + vmlinux's exports (str symbol, str namespace,
 *           u8 type, u8 has CRC, u32 CRC)
 *   str = u32 length + bytes; integers in the writer's byte order.
 *
 * The library version is part of the key: a newer reader may learn more from
 * the same bytes, so it never trusts an older one's results.
 *
 * A run stamp, a small file beside it, has the same header ("kmodnsS\n") and
 * the body: str library version, 32 bytes of the run's inputs digest, u32 count,
 * then per file: str path, u64 size, i64 mtime s, u64 mtime ns, u64 inode,
 * u8 has digest, and if so the 32-byte SHA-256 of the module's entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "libkmodns-private.h"
#include "libkmodns-dl.h"
#include "libkmodns-cache.h"

#define CACHE_MAGIC "kmodnsC\n"
#define CACHE_BYTE_ORDER 0x01020304u
#define CACHE_FORMAT 4u
#define STAMP_MAGIC "kmodnsS\n"
#define STAMP_FORMAT 2u
#define CACHE_HEADER_SIZE 32

struct kmodns_module_cache {
	struct kmodns_ctx *ctx;
	char *data;
	size_t size;
	struct strset paths; /* index i: entries[i] */
	struct cache_entry {
		size_t offset, length; /* of the entry's bytes after its length field */
		size_t content;        /* of its digest, which the module's content follows */
	} *entries;
	size_t entries_capacity;
	size_t vmlinux_offset; /* of the kernel image's path, 0 when there is none */
};

/* ---- writing ------------------------------------------------------------------------------ */

struct kmodns_module_cache_writer {
	char *body;
	size_t size, capacity;
	uint32_t count;
	int error;
	struct kmodns_module_cache_writer *vmlinux; /* the kernel image's part, once set */
};

static void put_bytes(struct kmodns_module_cache_writer *w, const void *p, size_t n)
{
	if (w->error == 0 && array_reserve((void **)&w->body, &w->capacity, 1, w->size + n) < 0)
		w->error = -ENOMEM;
	if (w->error)
		return;
	memcpy(w->body + w->size, p, n);
	w->size += n;
}

static void put_u8(struct kmodns_module_cache_writer *w, unsigned v)
{
	uint8_t b = (uint8_t)v;
	put_bytes(w, &b, 1);
}

static void put_u32(struct kmodns_module_cache_writer *w, uint32_t v) { put_bytes(w, &v, sizeof(v)); }
static void put_u64(struct kmodns_module_cache_writer *w, uint64_t v) { put_bytes(w, &v, sizeof(v)); }

static void put_str(struct kmodns_module_cache_writer *w, const char *s)
{
	size_t len = strlen(s);

	if (len > UINT32_MAX) {
		w->error = -EFBIG;
		return;
	}
	put_u32(w, (uint32_t)len);
	put_bytes(w, s, len);
}

/* The key of a file as the cache keeps it: path, size, mtime and inode. */
static void put_file_key(struct kmodns_module_cache_writer *w, const char *path, const struct stat *st)
{
	put_str(w, path);
	put_u64(w, (uint64_t)st->st_size);
	put_u64(w, (uint64_t)st->st_mtim.tv_sec);
	put_u64(w, (uint64_t)st->st_mtim.tv_nsec);
	put_u64(w, (uint64_t)st->st_ino);
}

struct kmodns_module_cache_writer *kmodns_module_cache_writer_new(void)
{
	struct kmodns_module_cache_writer *w = calloc(1, sizeof(*w));

	if (w != NULL) {
		put_str(w, PACKAGE_VERSION);
		put_u32(w, 0); /* the count, set when written */
	}
	return w;
}

void kmodns_module_cache_writer_free(struct kmodns_module_cache_writer *w)
{
	if (w == NULL)
		return;
	kmodns_module_cache_writer_free(w->vmlinux);
	free(w->body);
	free(w);
}

/* The module's content as an entry holds it after the key and digest. */
static void put_module(struct kmodns_module_cache_writer *w, const struct kmodns_module *mod)
{
	size_t i;

	put_str(w, mod->name);
	put_u8(w, mod->vermagic != NULL);
	put_str(w, mod->vermagic ? mod->vermagic : "");
	put_u8(w, mod->compression);
	put_u8(w, (unsigned)mod->elf_class);
	put_u8(w, mod->big_endian);
	put_u8(w, mod->signature_appended);
	put_u32(w, (uint32_t)mod->imports_raw);
	put_u32(w, (uint32_t)mod->n_exports);
	for (i = 0; i < mod->n_exports; i++) {
		const struct kmodns_export *e = &mod->exports[i];
		put_str(w, e->symbol);
		put_str(w, e->ns);
		put_u8(w, e->type);
		put_u8(w, e->has_crc);
		put_u32(w, e->crc);
	}
	put_u32(w, (uint32_t)mod->imports.count);
	for (i = 0; i < mod->imports.count; i++)
		put_str(w, mod->imports.items[i]);
	put_u32(w, (uint32_t)mod->n_undefined);
	for (i = 0; i < mod->n_undefined; i++) {
		const struct kmodns_symbol *s = &mod->undefined[i];
		put_str(w, s->name);
		put_u8(w, s->weak);
		put_u8(w, s->has_crc);
		put_u32(w, s->crc);
	}
	put_u32(w, (uint32_t)mod->n_modinfo);
	for (i = 0; i < mod->n_modinfo; i++) {
		put_str(w, mod->modinfo[i].key);
		put_str(w, mod->modinfo[i].value);
	}
	put_u32(w, (uint32_t)mod->n_versions);
	for (i = 0; i < mod->n_versions; i++) {
		put_str(w, mod->versions[i].name);
		put_u32(w, mod->versions[i].crc);
	}
}

static int sha256(const void *data, size_t size, uint8_t digest[KMODNS_CACHE_DIGEST_SIZE])
{
	return EVP_Digest(data, size, digest, NULL, EVP_sha256(), NULL) == 1 ? 0 : -EIO;
}

int kmodns_module_cache_digest(const struct kmodns_module *mod, uint8_t digest[KMODNS_CACHE_DIGEST_SIZE])
{
	struct kmodns_module_cache_writer w = { 0 };
	int r;

	put_module(&w, mod);
	r = w.error < 0 ? w.error : sha256(w.body, w.size, digest);
	free(w.body);
	return r;
}

/* Closes the entry begun at start: its length field, and the count. */
static int close_entry(struct kmodns_module_cache_writer *w, size_t start)
{
	uint32_t len;

	if (w->error)
		return w->error;
	if (w->size - start - sizeof(len) > UINT32_MAX)
		return -EFBIG;
	len = (uint32_t)(w->size - start - sizeof(len));
	memcpy(w->body + start, &len, sizeof(len));
	w->count++;
	return 0;
}

int kmodns_module_cache_writer_add(struct kmodns_module_cache_writer *w,
				   const struct kmodns_module *mod, const struct stat *st,
				   uint8_t digest[KMODNS_CACHE_DIGEST_SIZE])
{
	static const uint8_t unset[KMODNS_CACHE_DIGEST_SIZE];
	size_t start = w->size, digest_at;
	int r;

	put_u32(w, 0); /* the entry's length, set at its end */
	put_file_key(w, mod->path, st);
	digest_at = w->size;
	put_bytes(w, unset, sizeof(unset));
	put_module(w, mod);
	if (w->error)
		return w->error;
	/* the digest of the content, the bytes after it */
	r = sha256(w->body + digest_at + sizeof(unset), w->size - digest_at - sizeof(unset), digest);
	if (r < 0)
		return r;
	memcpy(w->body + digest_at, digest, sizeof(unset));
	return close_entry(w, start);
}

int kmodns_module_cache_writer_add_cached(struct kmodns_module_cache_writer *w,
					  const struct kmodns_module_cache *cache, const char *path,
					  const struct stat *st, uint8_t digest[KMODNS_CACHE_DIGEST_SIZE])
{
	long at = strset_find(&cache->paths, path);
	const char *content;
	size_t start = w->size;

	if (at < 0)
		return -ENOENT;
	/* the key as it is now (it may have come fresh by digest), then the rest as it was */
	content = cache->data + cache->entries[at].content;
	put_u32(w, 0);
	put_file_key(w, path, st);
	put_bytes(w, content, cache->entries[at].offset + cache->entries[at].length -
				      (size_t)(content - cache->data));
	memcpy(digest, content, KMODNS_CACHE_DIGEST_SIZE);
	return close_entry(w, start);
}

int kmodns_module_cache_writer_set_vmlinux(struct kmodns_module_cache_writer *w, const char *path,
					   const struct stat *st, const struct kmodns_symvers *sv)
{
	struct kmodns_module_cache_writer *v = calloc(1, sizeof(*v));
	size_t n = kmodns_symvers_get_count(sv), i;
	int r;

	if (v == NULL)
		return -ENOMEM;
	put_file_key(v, path, st);
	put_u32(v, (uint32_t)n);
	for (i = 0; i < n; i++) {
		const struct kmodns_export *e = kmodns_symvers_get_export(sv, i);
		put_str(v, e->symbol);
		put_str(v, e->ns);
		put_u8(v, e->type);
		put_u8(v, e->has_crc);
		put_u32(v, e->crc);
	}
	r = v->error;
	if (r < 0) {
		kmodns_module_cache_writer_free(v);
		return r;
	}
	kmodns_module_cache_writer_free(w->vmlinux);
	w->vmlinux = v;
	return 0;
}

/* Writes the header (magic, byte order, format, body size and CRC) and w's body to out. */
static int write_file(struct kmodns_module_cache_writer *w, const char *magic, uint32_t format, FILE *out)
{
	char header[CACHE_HEADER_SIZE];
	uint32_t order = CACHE_BYTE_ORDER, crc;
	uint64_t size = w->size;

	if (w->error)
		return w->error;
	if (kmodns_dl_need(NULL, NULL, KMODNS_DL_ZLIB) < 0)
		return -ELIBACC;
	crc = (uint32_t)sym_crc32(0, (const Bytef *)w->body, (uInt)w->size);
	memset(header, 0, sizeof(header));
	memcpy(header, magic, 8);
	memcpy(header + 8, &order, 4);
	memcpy(header + 12, &format, 4);
	memcpy(header + 16, &size, 8);
	memcpy(header + 24, &crc, 4);
	if (fwrite(header, 1, sizeof(header), out) != sizeof(header) ||
	    fwrite(w->body, 1, w->size, out) != w->size || fflush(out) != 0)
		return -errno;
	return 0;
}

/* The body begins with the library version, then (after skip bytes) the entry count. */
static void set_count(struct kmodns_module_cache_writer *w, size_t skip)
{
	size_t count_at = sizeof(uint32_t) + strlen(PACKAGE_VERSION) + skip;

	if (w->error == 0)
		memcpy(w->body + count_at, &w->count, sizeof(w->count));
}

int kmodns_module_cache_writer_write(struct kmodns_module_cache_writer *w, FILE *out)
{
	put_u8(w, w->vmlinux != NULL);
	if (w->vmlinux != NULL)
		put_bytes(w, w->vmlinux->body, w->vmlinux->size);
	set_count(w, 0);
	return write_file(w, CACHE_MAGIC, CACHE_FORMAT, out);
}

/* ---- writing a run stamp ------------------------------------------------------------------ */

struct kmodns_run_stamp_writer {
	struct kmodns_module_cache_writer w;
};

struct kmodns_run_stamp_writer *kmodns_run_stamp_writer_new(const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE])
{
	struct kmodns_run_stamp_writer *sw = calloc(1, sizeof(*sw));

	if (sw != NULL) {
		put_str(&sw->w, PACKAGE_VERSION);
		put_bytes(&sw->w, inputs, KMODNS_CACHE_DIGEST_SIZE);
		put_u32(&sw->w, 0); /* the count, set when written */
	}
	return sw;
}

void kmodns_run_stamp_writer_free(struct kmodns_run_stamp_writer *sw)
{
	if (sw == NULL)
		return;
	free(sw->w.body);
	free(sw);
}

int kmodns_run_stamp_writer_add(struct kmodns_run_stamp_writer *sw, const char *path,
				const struct stat *st, const uint8_t *digest)
{
	put_file_key(&sw->w, path, st);
	put_u8(&sw->w, digest != NULL);
	if (digest != NULL)
		put_bytes(&sw->w, digest, KMODNS_CACHE_DIGEST_SIZE);
	sw->w.count++;
	return sw->w.error;
}

int kmodns_run_stamp_writer_write(struct kmodns_run_stamp_writer *sw, FILE *out)
{
	set_count(&sw->w, KMODNS_CACHE_DIGEST_SIZE);
	return write_file(&sw->w, STAMP_MAGIC, STAMP_FORMAT, out);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* A bounds-checked walk over bytes: any overrun marks it bad and yields zeroes. */
struct cursor {
	const char *p, *end;
	bool bad;
};

static const char *take(struct cursor *c, size_t n)
{
	const char *p = c->p;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint8_t get_u8(struct cursor *c)
{
	const char *p = take(c, 1);
	return p ? (uint8_t)*p : 0;
}

static uint32_t get_u32(struct cursor *c)
{
	const char *p = take(c, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

static uint64_t get_u64(struct cursor *c)
{
	const char *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

/* A string's bytes (not NUL-terminated) and length. */
static const char *get_str(struct cursor *c, size_t *len)
{
	*len = get_u32(c);
	return take(c, *len);
}

/* A string copied into mod's arena; NULL when bad or out of memory (marks the cursor bad). */
static const char *get_mod_str(struct cursor *c, struct kmodns_module *mod)
{
	size_t len;
	const char *s = get_str(c, &len);
	char *copy;

	if (s == NULL)
		return NULL;
	/* a NUL inside would cut the string: no reader ever produced one */
	if (memchr(s, '\0', len) != NULL) {
		c->bad = true;
		return NULL;
	}
	copy = arena_strndup(&mod->strings, s, len);
	if (copy == NULL)
		c->bad = true;
	return copy;
}

/* The count of an array whose elements take at least min_size bytes each. */
static size_t get_count(struct cursor *c, size_t min_size)
{
	size_t n = get_u32(c);

	if (n > (size_t)(c->end - c->p) / min_size)
		c->bad = true;
	return c->bad ? 0 : n;
}

/* Whether the file key at c matches st (the cursor is left past it). */
static bool file_key_matches(struct cursor *c, const struct stat *st)
{
	return get_u64(c) == (uint64_t)st->st_size && get_u64(c) == (uint64_t)st->st_mtim.tv_sec &&
	       get_u64(c) == (uint64_t)st->st_mtim.tv_nsec && get_u64(c) == (uint64_t)st->st_ino;
}

/* The kernel image's exports at c (past its file key), to its end, as a table: -EBADMSG when
 * they do not parse (the file's checksum held: a writer's bug), -ENOMEM. */
static int read_vmlinux_exports(const struct kmodns_module_cache *cache, struct cursor *c,
				struct kmodns_symvers **sv)
{
	size_t n = get_count(c, 14), i;
	_cleanup_free_ char *symbol = NULL, *ns = NULL;
	int r = 0;

	*sv = kmodns_symvers_new_empty(cache->ctx);
	if (*sv == NULL)
		return -ENOMEM;
	for (i = 0; i < n && !c->bad && r >= 0; i++) {
		size_t slen, nlen;
		const char *s = get_str(c, &slen), *p = get_str(c, &nlen);
		enum kmodns_export_type type = get_u8(c);
		bool has_crc = get_u8(c);
		uint32_t crc = get_u32(c);
		if (c->bad || memchr(s, '\0', slen) != NULL || memchr(p, '\0', nlen) != NULL ||
		    type > KMODNS_EXPORT_UNUSED_SYMBOL_GPL)
			break;
		free(symbol);
		free(ns);
		symbol = strndup(s, slen);
		ns = strndup(p, nlen);
		r = symbol == NULL || ns == NULL ? -ENOMEM :
		    kmodns_symvers_add(*sv, symbol, "vmlinux", ns, type, has_crc, crc);
		if (r == 0)
			r = -EBADMSG; /* a symbol twice: no writer does that */
	}
	if (r >= 0 && (i < n || c->bad || c->p != c->end))
		r = -EBADMSG;
	if (r < 0)
		*sv = kmodns_symvers_unref(*sv);
	return r < 0 ? r : 0;
}

static int damaged(struct kmodns_ctx *ctx, const char *path, const char *what, const char *why)
{
	INFO(ctx, "%s: ignoring the %s: %s", path, what, why);
	return -EBADMSG;
}

/* Checks the header of a file of ours (its magic, byte order, format, size, CRC) and
 * the library version that begins its body; c is then past that version. */
static int check_file(struct kmodns_ctx *ctx, const char *data, size_t size, const char *magic,
		      uint32_t expected_format, const char *path, const char *what, struct cursor *c)
{
	const char *version;
	uint32_t order, format, crc;
	uint64_t body_size;
	size_t len;

	if (size < CACHE_HEADER_SIZE || memcmp(data, magic, 8) != 0)
		return damaged(ctx, path, what, "not a kmodns cache");
	memcpy(&order, data + 8, 4);
	memcpy(&format, data + 12, 4);
	memcpy(&body_size, data + 16, 8);
	memcpy(&crc, data + 24, 4);
	if (order != CACHE_BYTE_ORDER || format != expected_format)
		return damaged(ctx, path, what, "written in another format");
	if (body_size != size - CACHE_HEADER_SIZE)
		return damaged(ctx, path, what, "truncated");
	if (kmodns_dl_need(ctx, path, KMODNS_DL_ZLIB) < 0)
		return damaged(ctx, path, what, "no zlib to check it");
	if (crc != (uint32_t)sym_crc32(0, (const Bytef *)data + CACHE_HEADER_SIZE, (uInt)body_size))
		return damaged(ctx, path, what, "checksum mismatch");
	*c = (struct cursor){ data + CACHE_HEADER_SIZE, data + size, false };
	version = get_str(c, &len);
	if (version == NULL || len != strlen(PACKAGE_VERSION) || memcmp(version, PACKAGE_VERSION, len) != 0)
		return damaged(ctx, path, what, "written by another version");
	return 0;
}

static int cache_index(struct kmodns_module_cache *cache, const char *path)
{
	size_t n, i;
	struct cursor c;
	int r = check_file(cache->ctx, cache->data, cache->size, CACHE_MAGIC, CACHE_FORMAT, path,
			   "module cache", &c);

	if (r < 0)
		return r;
	n = get_count(&c, sizeof(uint32_t));
	for (i = 0; i < n && !c.bad; i++) {
		size_t entry_len = get_u32(&c), at = (size_t)(c.p - cache->data), plen;
		struct cursor e = { c.p, NULL, false };
		const char *p;
		_cleanup_free_ char *key = NULL;
		if (take(&c, entry_len) == NULL)
			break;
		e.end = c.p;
		p = get_str(&e, &plen);
		take(&e, 4 * sizeof(uint64_t)); /* the file key */
		if (take(&e, KMODNS_CACHE_DIGEST_SIZE) == NULL || (key = strndup(p, plen)) == NULL) {
			c.bad = true;
			break;
		}
		if (strset_add(&cache->paths, key) <= 0 ||
		    array_reserve((void **)&cache->entries, &cache->entries_capacity,
				  sizeof(*cache->entries), cache->paths.count) < 0) {
			c.bad = true;
			break;
		}
		cache->entries[cache->paths.count - 1] =
			(struct cache_entry){ at, entry_len, (size_t)(e.p - cache->data) - KMODNS_CACHE_DIGEST_SIZE };
	}
	/* the kernel image's part, last: parsed only when asked for, by its key */
	if (get_u8(&c)) {
		cache->vmlinux_offset = (size_t)(c.p - cache->data);
		c.p = c.end;
	}
	if (c.bad || c.p != c.end)
		return damaged(cache->ctx, path, "module cache", "inconsistent entries");
	return 0;
}

/* The file mapped whole and at once: a copy would cost a page fault per page. */
static int map_whole(const char *path, char **data, size_t *size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (st.st_size == 0)
		return 0; /* nothing to map: found too short */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*data = p;
	*size = (size_t)st.st_size;
	return 0;
}

/* A file of ours, what it is, mapped; why not is logged (but for its absence). */
static int map_file(struct kmodns_ctx *ctx, const char *path, const char *what, char **data, size_t *size)
{
	int r = map_whole(path, data, size);

	if (r < 0 && r != -ENOENT)
		INFO(ctx, "%s: ignoring the %s: %s", path, what, strerror(-r));
	return r;
}

int kmodns_module_cache_open(struct kmodns_ctx *ctx, const char *path,
			     struct kmodns_module_cache **out)
{
	struct kmodns_module_cache *cache = calloc(1, sizeof(*cache));
	int r;

	*out = NULL;
	if (cache == NULL)
		return -ENOMEM;
	cache->ctx = kmodns_ref(ctx);
	r = map_file(ctx, path, "module cache", &cache->data, &cache->size);
	if (r >= 0)
		r = cache_index(cache, path);
	if (r < 0) {
		kmodns_module_cache_free(cache);
		return r;
	}
	*out = cache;
	return 0;
}

void kmodns_module_cache_free(struct kmodns_module_cache *cache)
{
	if (cache == NULL)
		return;
	strset_release(&cache->paths);
	free(cache->entries);
	if (cache->data != NULL)
		munmap(cache->data, cache->size);
	kmodns_unref(cache->ctx);
	free(cache);
}

size_t kmodns_module_cache_get_count(const struct kmodns_module_cache *cache)
{
	return cache->paths.count;
}

const char *kmodns_module_cache_get_path(const struct kmodns_module_cache *cache, size_t i)
{
	return cache->paths.items[i];
}

const uint8_t *kmodns_module_cache_get_digest(const struct kmodns_module_cache *cache, size_t i)
{
	return (const uint8_t *)cache->data + cache->entries[i].content;
}

static void read_module(struct cursor *c, struct kmodns_module *mod)
{
	size_t n, i;
	bool has_vermagic;
	const char *vermagic;

	mod->name = get_mod_str(c, mod);
	has_vermagic = get_u8(c);
	vermagic = get_mod_str(c, mod);
	mod->vermagic = has_vermagic ? vermagic : NULL;
	mod->compression = get_u8(c);
	mod->elf_class = get_u8(c);
	mod->big_endian = get_u8(c);
	mod->signature_appended = get_u8(c);
	mod->imports_raw = get_u32(c);

	n = get_count(c, 14);
	if (array_reserve((void **)&mod->exports, &mod->exports_capacity, sizeof(*mod->exports), n) < 0)
		c->bad = true;
	for (i = 0; i < n && !c->bad; i++) {
		struct kmodns_export *e = &mod->exports[mod->n_exports++];
		*e = (struct kmodns_export){ 0 };
		e->symbol = get_mod_str(c, mod);
		e->ns = get_mod_str(c, mod);
		e->type = get_u8(c);
		e->has_crc = get_u8(c);
		e->crc = get_u32(c);
		if (e->type > KMODNS_EXPORT_UNUSED_SYMBOL_GPL)
			c->bad = true;
	}
	n = get_count(c, 4);
	for (i = 0; i < n && !c->bad; i++) {
		size_t len;
		const char *s = get_str(c, &len);
		_cleanup_free_ char *ns = s ? strndup(s, len) : NULL;
		if (ns == NULL || strset_add(&mod->imports, ns) < 0)
			c->bad = true;
	}
	n = get_count(c, 10);
	if (array_reserve((void **)&mod->undefined, &mod->undefined_capacity, sizeof(*mod->undefined), n) < 0)
		c->bad = true;
	for (i = 0; i < n && !c->bad; i++) {
		struct kmodns_symbol *s = &mod->undefined[mod->n_undefined++];
		s->name = get_mod_str(c, mod);
		s->weak = get_u8(c);
		s->has_crc = get_u8(c);
		s->crc = get_u32(c);
	}
	n = get_count(c, 8);
	if (array_reserve((void **)&mod->modinfo, &mod->modinfo_capacity, sizeof(*mod->modinfo), n) < 0)
		c->bad = true;
	for (i = 0; i < n && !c->bad; i++) {
		struct modinfo_record *m = &mod->modinfo[mod->n_modinfo++];
		m->key = get_mod_str(c, mod);
		m->value = get_mod_str(c, mod);
	}
	n = get_count(c, 8);
	if (array_reserve((void **)&mod->versions, &mod->versions_capacity, sizeof(*mod->versions), n) < 0)
		c->bad = true;
	for (i = 0; i < n && !c->bad; i++) {
		struct version_record *v = &mod->versions[mod->n_versions++];
		v->name = get_mod_str(c, mod);
		v->crc = get_u32(c);
	}
	if (mod->name == NULL)
		c->bad = true;
}

/*
 * A cursor over the content of path's entry when it is fresh: its key matches st, or
 * its content has the digest given (a run stamp's, for the file as it is now).
 */
static bool cache_find_fresh(const struct kmodns_module_cache *cache, const char *path,
			     const struct stat *st, const uint8_t *digest, struct cursor *c)
{
	long at = strset_find(&cache->paths, path);
	const struct cache_entry *e;
	struct cursor key;
	size_t len;

	if (at < 0)
		return false;
	e = &cache->entries[at];
	key = (struct cursor){ cache->data + e->offset, cache->data + e->content, false };
	get_str(&key, &len);
	if (!file_key_matches(&key, st) &&
	    (digest == NULL || memcmp(cache->data + e->content, digest, KMODNS_CACHE_DIGEST_SIZE) != 0))
		return false;
	*c = (struct cursor){ cache->data + e->content + KMODNS_CACHE_DIGEST_SIZE,
			      cache->data + e->offset + e->length, false };
	return true;
}

bool kmodns_module_cache_has(const struct kmodns_module_cache *cache, const char *path,
			     const struct stat *st, const uint8_t *digest)
{
	struct cursor c;

	return cache_find_fresh(cache, path, st, digest, &c);
}

int kmodns_module_cache_get(const struct kmodns_module_cache *cache, const char *path,
			    const struct stat *st, const uint8_t *digest, struct kmodns_module **out)
{
	struct kmodns_module *mod;
	struct cursor c;

	*out = NULL;
	if (!cache_find_fresh(cache, path, st, digest, &c))
		return -ENOENT;
	mod = kmodns_module_alloc(cache->ctx, path);
	if (mod == NULL)
		return -ENOMEM;
	read_module(&c, mod);
	if (c.bad || c.p != c.end) {
		/* the checksum held, so this is a writer bug or memory shortage: read the file instead */
		DBG(cache->ctx, "%s: unusable cache entry", path);
		kmodns_module_unref(mod);
		return -EBADMSG;
	}
	if (kmodns_module_finish(mod) < 0) {
		kmodns_module_unref(mod);
		return -ENOMEM;
	}
	*out = mod;
	return 0;
}

int kmodns_module_cache_get_vmlinux(const struct kmodns_module_cache *cache, const char *path,
				    const struct stat *st, struct kmodns_symvers **sv)
{
	struct cursor c = { cache->data + cache->vmlinux_offset, cache->data + cache->size, false };
	const char *p;
	size_t len;

	*sv = NULL;
	if (cache->vmlinux_offset == 0)
		return -ENOENT;
	p = get_str(&c, &len);
	if (p == NULL || len != strlen(path) || memcmp(p, path, len) != 0 || !file_key_matches(&c, st))
		return -ENOENT;
	return read_vmlinux_exports(cache, &c, sv);
}

/* ---- reading a run stamp ------------------------------------------------------------------ */

struct kmodns_run_stamp {
	char *data;
	size_t size;
	const char *inputs;
	struct strset paths; /* index i: files[i] */
	struct stamp_file {
		const char *key;    /* the file key after the path */
		const char *digest; /* NULL when it has none */
	} *files;
	size_t files_capacity;
};

static int stamp_index(struct kmodns_ctx *ctx, struct kmodns_run_stamp *stamp, const char *path)
{
	size_t n, i;
	struct cursor c;
	int r = check_file(ctx, stamp->data, stamp->size, STAMP_MAGIC, STAMP_FORMAT, path, "run stamp", &c);

	if (r < 0)
		return r;
	stamp->inputs = take(&c, KMODNS_CACHE_DIGEST_SIZE);
	n = get_count(&c, sizeof(uint32_t) + 4 * sizeof(uint64_t) + 1);
	for (i = 0; i < n && !c.bad; i++) {
		size_t plen;
		const char *p = get_str(&c, &plen), *key = take(&c, 4 * sizeof(uint64_t)), *digest = NULL;
		_cleanup_free_ char *name = NULL;
		if (get_u8(&c))
			digest = take(&c, KMODNS_CACHE_DIGEST_SIZE);
		if (c.bad || (name = strndup(p, plen)) == NULL || strset_add(&stamp->paths, name) <= 0 ||
		    array_reserve((void **)&stamp->files, &stamp->files_capacity, sizeof(*stamp->files),
				  stamp->paths.count) < 0) {
			c.bad = true;
			break;
		}
		stamp->files[i] = (struct stamp_file){ key, digest };
	}
	if (c.bad || c.p != c.end)
		return damaged(ctx, path, "run stamp", "inconsistent entries");
	return 0;
}

int kmodns_run_stamp_open(struct kmodns_ctx *ctx, const char *path, struct kmodns_run_stamp **out)
{
	struct kmodns_run_stamp *stamp = calloc(1, sizeof(*stamp));
	int r;

	*out = NULL;
	if (stamp == NULL)
		return -ENOMEM;
	r = map_file(ctx, path, "run stamp", &stamp->data, &stamp->size);
	if (r >= 0)
		r = stamp_index(ctx, stamp, path);
	if (r < 0) {
		kmodns_run_stamp_free(stamp);
		return r;
	}
	*out = stamp;
	return 0;
}

void kmodns_run_stamp_free(struct kmodns_run_stamp *stamp)
{
	if (stamp == NULL)
		return;
	strset_release(&stamp->paths);
	free(stamp->files);
	if (stamp->data != NULL)
		munmap(stamp->data, stamp->size);
	free(stamp);
}

bool kmodns_run_stamp_inputs_equal(const struct kmodns_run_stamp *stamp,
				   const uint8_t inputs[KMODNS_CACHE_DIGEST_SIZE])
{
	return memcmp(stamp->inputs, inputs, KMODNS_CACHE_DIGEST_SIZE) == 0;
}

size_t kmodns_run_stamp_get_count(const struct kmodns_run_stamp *stamp)
{
	return stamp->paths.count;
}

const char *kmodns_run_stamp_get_path(const struct kmodns_run_stamp *stamp, size_t i)
{
	return stamp->paths.items[i];
}

bool kmodns_run_stamp_key_matches(const struct kmodns_run_stamp *stamp, size_t i, const struct stat *st)
{
	struct cursor c = { stamp->files[i].key, stamp->files[i].key + 4 * sizeof(uint64_t), false };

	return file_key_matches(&c, st);
}

const uint8_t *kmodns_run_stamp_get_digest(const struct kmodns_run_stamp *stamp, size_t i)
{
	return (const uint8_t *)stamp->files[i].digest;
}

const uint8_t *kmodns_run_stamp_get_fresh_digest(const struct kmodns_run_stamp *stamp, const char *path,
						 const struct stat *st)
{
	long i = stamp ? strset_find(&stamp->paths, path) : -1;

	return i >= 0 && kmodns_run_stamp_key_matches(stamp, (size_t)i, st) ?
		       kmodns_run_stamp_get_digest(stamp, (size_t)i) : NULL;
}
