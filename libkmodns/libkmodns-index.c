// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The modules.*.bin format: big-endian words; a header (magic, version, root word); nodes of a
 * Patricia trie, each an optional NUL-terminated prefix, an optional dense child table
 * (first char, last char, one word per char) and an optional value list (count, then priority
 * and NUL-terminated string per value).  A word is a node offset ORed with flags saying which
 * parts the node has.
 *
 * The writer never builds the trie: it sorts the records, and a sorted range of keys sharing
 * their first bytes is exactly one subtree, so nodes fall out of a walk over ranges.  kmod <= 33
 * writes each node after its children (children in ascending character order) and the root
 * last; doing the same makes the bytes identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "libkmodns-index.h"
#include "libkmodns-util.h"

#define INDEX_MAGIC 0xB007F457u
#define INDEX_VERSION 0x00020001u
#define INDEX_VERSION_MAJOR 0x0002u
#define INDEX_HEADER_SIZE 12u
#define INDEX_NODE_PREFIX 0x80000000u
#define INDEX_NODE_VALUES 0x40000000u
#define INDEX_NODE_CHILDS 0x20000000u
#define INDEX_NODE_MASK 0x0FFFFFFFu

/* ---- writing ------------------------------------------------------------------------------ */

struct index_record {
	const char *key, *value;
	size_t key_len, value_len;
	unsigned priority;
	size_t seq; /* insertion order, for the equal-priority rule */
};

struct kmodns_index_builder {
	struct arena strings;
	struct index_record *records;
	size_t n_records, capacity;
};

struct kmodns_index_builder *kmodns_index_builder_new(void)
{
	return calloc(1, sizeof(struct kmodns_index_builder));
}

void kmodns_index_builder_free(struct kmodns_index_builder *b)
{
	if (b == NULL)
		return;
	arena_release(&b->strings);
	free(b->records);
	free(b);
}

/* Length of s, or -1 if it has a byte kmod's 128-wide child tables cannot hold. */
static long ascii_len(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p >= 0x80)
			return -1;
	return p - s;
}

int kmodns_index_builder_add(struct kmodns_index_builder *b, const char *key, const char *value,
			     unsigned priority)
{
	long klen = ascii_len(key), vlen = ascii_len(value);
	struct index_record *r;
	int err;

	if (klen < 0 || vlen < 0)
		return -EINVAL;
	err = array_reserve((void **)&b->records, &b->capacity, sizeof(*b->records),
			    b->n_records + 1);
	if (err < 0)
		return err;
	r = &b->records[b->n_records];
	r->key = arena_strndup(&b->strings, key, (size_t)klen);
	r->value = arena_strndup(&b->strings, value, (size_t)vlen);
	if (r->key == NULL || r->value == NULL)
		return -ENOMEM;
	r->key_len = (size_t)klen;
	r->value_len = (size_t)vlen;
	r->priority = priority;
	r->seq = b->n_records++;
	return 0;
}

/* Key order groups subtrees; then the value order a node stores. */
static int record_cmp(const void *pa, const void *pb)
{
	const struct index_record *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	if (c != 0)
		return c;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	return a->seq < b->seq ? 1 : a->seq > b->seq ? -1 : 0;
}

struct outbuf {
	unsigned char *data;
	size_t len, capacity;
};

static int out_append(struct outbuf *o, const void *p, size_t n)
{
	int err = array_reserve((void **)&o->data, &o->capacity, 1, o->len + n);

	if (err < 0)
		return err;
	memcpy(o->data + o->len, p, n);
	o->len += n;
	return 0;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int out_be32(struct outbuf *o, uint32_t v)
{
	unsigned char w[4];

	put_be32(w, v);
	return out_append(o, w, 4);
}

/* A node being written: its records, and how far its children are done. */
struct write_frame {
	size_t lo, hi;       /* records of the subtree, sorted */
	size_t prefix_at;    /* offset in the keys where the node's prefix starts */
	size_t depth;        /* prefix_at + prefix length: where the node's keys end or branch */
	size_t values_end;   /* records [lo, values_end) end at this node */
	size_t next;         /* first record of the next child to write */
	size_t kids_base;    /* this node's finished children start at kids[kids_base] */
	unsigned char edge;  /* the character leading here from the parent */
};

struct write_kid {
	unsigned char ch;
	uint32_t word;
};

struct write_state {
	const struct index_record *r;
	struct outbuf out;
	struct write_frame *stack;
	size_t depth, stack_capacity;
	struct write_kid *kids;
	size_t n_kids, kids_capacity;
};

/* Enters the subtree of records [lo, hi), which agree on their first prefix_at bytes. */
static int frame_push(struct write_state *s, size_t lo, size_t hi, size_t prefix_at,
		      unsigned char edge, bool root)
{
	const struct index_record *r = s->r;
	struct write_frame *f;
	size_t d = prefix_at, i;
	int err;

	err = array_reserve((void **)&s->stack, &s->stack_capacity, sizeof(*s->stack), s->depth + 1);
	if (err < 0)
		return err;
	/* Sorted, so the range's common prefix is that of its first and last key; kmod's root
	 * never carries a prefix. */
	if (!root)
		while (r[lo].key[d] != '\0' && r[lo].key[d] == r[hi - 1].key[d])
			d++;
	for (i = lo; i < hi && r[i].key_len == d; i++)
		;
	f = &s->stack[s->depth++];
	*f = (struct write_frame){ .lo = lo, .hi = hi, .prefix_at = prefix_at, .depth = d,
				   .values_end = i, .next = i, .kids_base = s->n_kids, .edge = edge };
	return 0;
}

/* Appends the node of the top frame, its children already written; returns its word. */
static int frame_emit(struct write_state *s, uint32_t *word)
{
	const struct write_frame *f = &s->stack[s->depth - 1];
	const struct index_record *r = s->r;
	struct outbuf *o = &s->out;
	size_t offset = o->len, n_kids = s->n_kids - f->kids_base, i;
	uint32_t flags = 0;
	int err;

	if (offset > INDEX_NODE_MASK)
		return -EFBIG;
	if (f->depth > f->prefix_at) {
		flags |= INDEX_NODE_PREFIX;
		err = out_append(o, r[f->lo].key + f->prefix_at, f->depth - f->prefix_at);
		if (err >= 0)
			err = out_append(o, "", 1);
		if (err < 0)
			return err;
	}
	if (n_kids > 0) {
		const struct write_kid *k = s->kids + f->kids_base;
		unsigned char range[2] = { k[0].ch, k[n_kids - 1].ch };
		size_t width = (size_t)(range[1] - range[0]) + 1, at;

		flags |= INDEX_NODE_CHILDS;
		err = out_append(o, range, 2);
		if (err < 0)
			return err;
		at = o->len;
		err = array_reserve((void **)&o->data, &o->capacity, 1, at + 4 * width);
		if (err < 0)
			return err;
		memset(o->data + at, 0, 4 * width);
		for (i = 0; i < n_kids; i++)
			put_be32(o->data + at + 4 * (size_t)(k[i].ch - range[0]), k[i].word);
		o->len = at + 4 * width;
	}
	if (f->values_end > f->lo) {
		flags |= INDEX_NODE_VALUES;
		err = out_be32(o, (uint32_t)(f->values_end - f->lo));
		for (i = f->lo; err >= 0 && i < f->values_end; i++) {
			err = out_be32(o, r[i].priority);
			if (err >= 0)
				err = out_append(o, r[i].value, r[i].value_len + 1);
		}
		if (err < 0)
			return err;
	}
	*word = (uint32_t)offset | flags;
	return 0;
}

/* Post-order over the ranges with an explicit stack: a chain of nested keys may be deep. */
static int write_trie(struct write_state *s, size_t n, uint32_t *root_word)
{
	int err = frame_push(s, 0, n, 0, 0, true);

	while (err >= 0 && s->depth > 0) {
		struct write_frame *f = &s->stack[s->depth - 1];
		uint32_t word;

		if (f->next < f->hi) {
			/* the next child: records sharing the character after this node's keys */
			size_t lo = f->next, d = f->depth, hi = lo + 1;
			unsigned char ch = (unsigned char)s->r[lo].key[d];

			while (hi < f->hi && (unsigned char)s->r[hi].key[d] == ch)
				hi++;
			f->next = hi;
			err = frame_push(s, lo, hi, d + 1, ch, false);
			continue;
		}
		err = frame_emit(s, &word);
		if (err < 0)
			break;
		s->n_kids = f->kids_base;
		s->depth--;
		if (s->depth == 0) {
			*root_word = word;
			break;
		}
		err = array_reserve((void **)&s->kids, &s->kids_capacity, sizeof(*s->kids),
				    s->n_kids + 1);
		if (err >= 0)
			s->kids[s->n_kids++] = (struct write_kid){ .ch = f->edge, .word = word };
	}
	return err;
}

int kmodns_index_builder_write(struct kmodns_index_builder *b, FILE *out)
{
	struct write_state s = { .r = b->records };
	uint32_t root = 0;
	int err;

	if (b->n_records > 1) /* qsort wants a non-NULL array even for none */
		qsort(b->records, b->n_records, sizeof(*b->records), record_cmp);
	err = out_be32(&s.out, INDEX_MAGIC);
	if (err >= 0)
		err = out_be32(&s.out, INDEX_VERSION);
	if (err >= 0)
		err = out_be32(&s.out, 0); /* the root word, known last */
	if (err >= 0)
		err = write_trie(&s, b->n_records, &root);
	if (err >= 0) {
		put_be32(s.out.data + 8, root);
		errno = 0;
		if (fwrite(s.out.data, 1, s.out.len, out) != s.out.len || fflush(out) != 0 ||
		    ferror(out))
			err = errno > 0 ? -errno : -EIO;
	}
	free(s.out.data);
	free(s.stack);
	free(s.kids);
	return err;
}

/* ---- reading ------------------------------------------------------------------------------ */

/*
 * A lookup touches a few nodes of a file of a megabyte: read with pread into windows that
 * move, not mapped. Mapping, faulting pages in and unmapping cost 8x more (on modules.dep.bin
 * of 6.12, 135 us against 17 us per modprobe call), and modprobe runs at every boot event.
 * modprobe looks up every module of a load set: the top of the trie is the same for all, so a
 * few windows are kept, and the least recently used one moves. Each fresh page of memory costs
 * a fault, dearer than a pread: windows of half a page (bench/modprobe's names: 10% more
 * preads, lookups 32 -> 22 us per load set).
 */
#define INDEX_BLOCK 2048u
#define INDEX_WINDOWS 8u
/* a node's children are written just before it: a window reaches mostly backwards */
#define INDEX_BEHIND 1536u

struct index_window {
	unsigned char *buf; /* holds bytes [at, at + len) of the file */
	size_t at, len, cap;
	unsigned long used; /* the index's clock at its last use */
};

struct kmodns_index {
	int fd; /* -1 when the whole file is in window 0 (not a regular file) */
	size_t size;
	struct timespec mtime;
	uint32_t root;
	unsigned long clock;
	struct index_window win[INDEX_WINDOWS];
};

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The len bytes at offset at of fd into buf; false with errno set when they cannot be read. */
static bool read_at(int fd, unsigned char *buf, size_t len, size_t at)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(at + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EBADMSG; /* shorter than its size said: damage */
			return false;
		}
		got += (size_t)n;
	}
	return true;
}

/* Fill w with the len bytes at offset at; false with errno set when they cannot be read. */
static bool window_fill(struct kmodns_index *x, struct index_window *w, size_t at, size_t len)
{
	if (len > w->cap) {
		unsigned char *b = realloc(w->buf, len);
		if (b == NULL) {
			errno = ENOMEM;
			return false;
		}
		w->buf = b;
		w->cap = len;
	}
	w->len = 0;
	if (!read_at(x->fd, w->buf, len, at))
		return false;
	w->at = at;
	w->len = len;
	return true;
}

/*
 * Bytes from offset at (at <= size) at the returned pointer: at least want of them, or all up to
 * the file's end; *avail says how many. Valid until the next call on x. NULL with errno set
 * when the file cannot be read or is shorter than it was.
 */
static const unsigned char *index_window(struct kmodns_index *x, size_t at, size_t want, size_t *avail)
{
	static const unsigned char none[1];
	struct index_window *w, *oldest = &x->win[0];
	size_t start, len;

	if (at == x->size) {
		*avail = 0;
		return none;
	}
	if (want > x->size - at)
		want = x->size - at;
	for (w = x->win; w < x->win + INDEX_WINDOWS; w++) {
		if (w->len > 0 && at >= w->at && at - w->at + want <= w->len) {
			w->used = ++x->clock;
			*avail = w->len - (at - w->at);
			return w->buf + (at - w->at);
		}
		if (w->used < oldest->used)
			oldest = w;
	}
	len = want > INDEX_BLOCK ? want : INDEX_BLOCK;
	start = want <= INDEX_BLOCK - INDEX_BEHIND && at > INDEX_BEHIND ? at - INDEX_BEHIND : at;
	if (len > x->size - start)
		len = x->size - start;
	if (!window_fill(x, oldest, start, len))
		return NULL;
	oldest->used = ++x->clock;
	*avail = len - (at - start);
	return oldest->buf + (at - start);
}

/* A read error as open and lookups return it: damage (the file ended early) or the errno. */
static int window_error(void)
{
	return errno == EBADMSG ? -EBADMSG : errno > 0 ? -errno : -EIO;
}

int kmodns_index_open(const char *path, struct kmodns_index **idx)
{
	return kmodns_index_open_at(AT_FDCWD, path, idx);
}

struct timespec kmodns_index_get_mtime(const struct kmodns_index *idx)
{
	return idx->mtime;
}

int kmodns_index_open_at(int dirfd, const char *path, struct kmodns_index **idx)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	unsigned char header[INDEX_HEADER_SIZE];
	struct kmodns_index *x;
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->fd = -1;
	x->mtime = st.st_mtim;
	if (S_ISREG(st.st_mode)) {
		x->fd = TAKE_FD(fd);
		x->size = (size_t)st.st_size;
	} else {
		/* pipes and the like: all of it, once */
		char *buf;
		err = read_fd(fd, &buf, &x->size);
		if (err < 0) {
			free(x);
			return err;
		}
		x->win[0].buf = (unsigned char *)buf;
		x->win[0].len = x->win[0].cap = x->size;
	}
	if (x->size < INDEX_HEADER_SIZE)
		goto bad;
	/* not through a window: lookups start at the root, at the file's end */
	if (x->fd < 0)
		memcpy(header, x->win[0].buf, INDEX_HEADER_SIZE);
	else if (!read_at(x->fd, header, INDEX_HEADER_SIZE, 0)) {
		err = window_error();
		kmodns_index_close(x);
		return err;
	}
	if (get_be32(header) != INDEX_MAGIC || get_be32(header + 4) >> 16 != INDEX_VERSION_MAJOR)
		goto bad;
	x->root = get_be32(header + 8);
	*idx = x;
	return 0;
bad:
	kmodns_index_close(x);
	return -EBADMSG;
}

void kmodns_index_close(struct kmodns_index *idx)
{
	size_t i;

	if (idx == NULL)
		return;
	if (idx->fd >= 0)
		close(idx->fd);
	for (i = 0; i < INDEX_WINDOWS; i++)
		free(idx->win[i].buf);
	free(idx);
}

/* The NUL-terminated string at offset at, whole in the window; its length in *len. */
static const char *index_string(struct kmodns_index *x, size_t at, size_t *len, int *err)
{
	size_t want = 1, avail; /* first what the window holds: nodes lie close together */

	for (;;) {
		const unsigned char *p = index_window(x, at, want, &avail), *nul;
		if (p == NULL) {
			*err = window_error();
			return NULL;
		}
		nul = memchr(p, '\0', avail);
		if (nul != NULL) {
			*len = (size_t)(nul - p);
			return (const char *)p;
		}
		if (avail >= x->size - at) {
			*err = -EBADMSG; /* the file ends inside it */
			return NULL;
		}
		want = avail < INDEX_BLOCK ? INDEX_BLOCK : avail * 2;
	}
}

/*
 * The value list at offset at, whole in the window at *list: its count, or -EBADMSG when it is
 * damaged, or a read error.
 */
static int values_window(struct kmodns_index *x, size_t at, const unsigned char **list)
{
	size_t want = 4, avail;

	if (x->size - at < 4)
		return -EBADMSG;
	for (;;) {
		const unsigned char *p = index_window(x, at, want, &avail);
		size_t count, off = 4, i;

		if (p == NULL)
			return window_error();
		count = get_be32(p);
		/* each value takes at least 5 bytes: this bounds the loop before it runs */
		if (count > (x->size - at - 4) / 5 || count > INT32_MAX)
			return -EBADMSG;
		for (i = 0; i < count; i++) {
			const unsigned char *nul;
			if (avail - off < 5)
				break;
			nul = memchr(p + off + 4, '\0', avail - off - 4);
			if (nul == NULL)
				break;
			off = (size_t)(nul - p) + 1;
		}
		if (i == count) {
			*list = p;
			return (int)count;
		}
		if (avail >= x->size - at)
			return -EBADMSG; /* the file ends inside the list */
		want = avail < INDEX_BLOCK ? INDEX_BLOCK : avail * 2;
	}
}

int kmodns_index_lookup(struct kmodns_index *idx, const char *key,
			int (*fn)(void *data, const char *value, unsigned priority), void *data)
{
	struct kmodns_index *x = idx;
	const unsigned char *list, *p;
	uint32_t word = x->root;
	const char *k = key;
	size_t at, off, avail;
	int count, i, err;

	/* every step down consumes one key byte, so a looping file cannot loop us */
	for (;;) {
		size_t kids = 0;
		unsigned first = 0, last = 0;

		at = word & INDEX_NODE_MASK;
		if (at > x->size)
			return -EBADMSG;
		if (word & INDEX_NODE_PREFIX) {
			size_t len;
			const char *prefix = index_string(x, at, &len, &err);
			if (prefix == NULL)
				return err;
			if (strncmp(k, prefix, len) != 0)
				return 0;
			k += len;
			at += len + 1;
		}
		if (word & INDEX_NODE_CHILDS) {
			if (x->size - at < 2)
				return -EBADMSG;
			p = index_window(x, at, 2, &avail);
			if (p == NULL)
				return window_error();
			first = p[0];
			last = p[1];
			if (last < first || (x->size - at - 2) / 4 < (size_t)(last - first) + 1)
				return -EBADMSG;
			kids = at + 2;
			at = kids + 4 * ((size_t)(last - first) + 1);
		}
		if (*k == '\0')
			break;
		if (!(word & INDEX_NODE_CHILDS) || (unsigned char)*k < first ||
		    (unsigned char)*k > last)
			return 0;
		p = index_window(x, kids + 4 * ((unsigned char)*k - first), 4, &avail);
		if (p == NULL)
			return window_error();
		word = get_be32(p);
		if (word == 0)
			return 0;
		k++;
	}
	if (!(word & INDEX_NODE_VALUES))
		return 0;
	count = values_window(x, at, &list);
	if (count <= 0 || fn == NULL)
		return count;
	for (i = 0, off = 4; i < count; i++) {
		unsigned priority = get_be32(list + off);
		const char *value = (const char *)list + off + 4;
		int r = fn(data, value, priority);
		if (r < 0)
			return r;
		off += 4 + strlen(value) + 1;
	}
	return count;
}
