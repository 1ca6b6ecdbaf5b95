// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module and kernel bytes: read the file, recognise the compression by its magic, decompress. */
#include <errno.h>

#include "libkmodns-private.h"
#include "libkmodns-dl.h"

/* No real module comes near this; a bigger output means a corrupt or hostile stream. */
#define MAX_MODULE_SIZE ((size_t)1 << 30)
/* xz -9 needs 65 MiB and a kernel's image 32 MiB; a stream asking for more is not ours to trust. */
#define XZ_MEMLIMIT ((uint64_t)256 << 20)

/*
 * A size the container claims buys one allocation only when the input could hold it: nothing we
 * read compresses better than 64 to 1, and ten bytes must not buy a gigabyte. Else 0: grow as
 * the output comes.
 */
static size_t plausible_size(size_t claimed, size_t in_size)
{
	return claimed <= in_size * 64 + ((size_t)1 << 20) ? claimed : 0;
}

static const struct {
	enum kmodns_compression compression;
	const char *name;
	unsigned char magic[6];
	size_t magic_len;
} compressions[] = {
	{ KMODNS_COMPRESSION_XZ, "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
	{ KMODNS_COMPRESSION_ZSTD, "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
	{ KMODNS_COMPRESSION_GZIP, "gzip", { 0x1f, 0x8b }, 2 },
};

KMODNS_EXPORT const char *kmodns_compression_to_string(enum kmodns_compression compression)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(compressions); i++)
		if (compressions[i].compression == compression)
			return compressions[i].name;
	return "none";
}

static enum kmodns_compression detect_compression(const unsigned char *data, size_t size)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(compressions); i++)
		if (size >= compressions[i].magic_len &&
		    memcmp(data, compressions[i].magic, compressions[i].magic_len) == 0)
			return compressions[i].compression;
	return KMODNS_COMPRESSION_NONE;
}

/* Output grows by doubling, from a guess of 4x the input (or the size a caller knows), up to limit. */
struct outbuf {
	char *data;
	size_t size, capacity, limit;
	size_t known; /* the decompressed size, when the container says it; else 0 */
};

/* The caller asked for only the first limit bytes, and has them. */
static bool outbuf_full(const struct outbuf *out)
{
	return out->limit != MAX_MODULE_SIZE && out->size >= out->limit;
}

static int outbuf_grow(struct outbuf *out, size_t hint)
{
	size_t cap = out->capacity ? out->capacity * 2 : out->known ? out->known + 1 : hint < 65536 ? 65536 : hint;
	char *p;

	if (out->capacity >= out->limit)
		return -EFBIG;
	if (cap > out->limit)
		cap = out->limit;
	p = realloc(out->data, cap);
	if (p == NULL)
		return -ENOMEM;
	out->data = p;
	out->capacity = cap;
	return 0;
}

/*
 * The decompressed size an xz file declares in its index (0 when it cannot be
 * read): one exact allocation instead of growing and copying.
 */
static size_t xz_declared_size(const unsigned char *in, size_t in_size)
{
	lzma_stream_flags footer;
	lzma_index *index = NULL;
	uint64_t memlimit = XZ_MEMLIMIT, size = 0;
	size_t pos = 0;

	if (in_size < 2 * LZMA_STREAM_HEADER_SIZE ||
	    sym_lzma_stream_footer_decode(&footer, in + in_size - LZMA_STREAM_HEADER_SIZE) != LZMA_OK ||
	    footer.backward_size > in_size - 2 * LZMA_STREAM_HEADER_SIZE)
		return 0;
	if (sym_lzma_index_buffer_decode(&index, &memlimit, NULL,
				     in + in_size - LZMA_STREAM_HEADER_SIZE - footer.backward_size,
				     &pos, footer.backward_size) == LZMA_OK)
		size = sym_lzma_index_uncompressed_size(index);
	sym_lzma_index_end(index, NULL);
	return size < MAX_MODULE_SIZE ? plausible_size((size_t)size, in_size) : 0;
}

static int decompress_xz(struct kmodns_ctx *ctx, const char *label, const unsigned char *in,
			 size_t in_size, struct outbuf *out)
{
	size_t declared;
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret ret;
	int r = kmodns_dl_need(ctx, label, KMODNS_DL_LIBLZMA);

	if (r < 0)
		return r;
	declared = xz_declared_size(in, in_size);
	if (sym_lzma_stream_decoder(&strm, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK) {
		ERR(ctx, "%s: cannot start the xz decoder", label);
		return -ENOMEM;
	}
	strm.next_in = in;
	strm.avail_in = in_size;
	for (;;) {
		if (outbuf_full(out))
			break;
		/* one byte more than declared, to see the end without growing */
		if (out->size == out->capacity &&
		    (r = outbuf_grow(out, declared ? declared + 1 : in_size * 4)) < 0)
			break;
		strm.next_out = (uint8_t *)out->data + out->size;
		strm.avail_out = out->capacity - out->size;
		/* LZMA_FINISH: all input is there, so a truncated stream is an error, not a wait. */
		ret = sym_lzma_code(&strm, LZMA_FINISH);
		out->size = out->capacity - strm.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_OK)
			continue;
		ERR(ctx, "%s: xz: %s", label,
		    ret == LZMA_BUF_ERROR ? "unexpected end of compressed data" :
		    ret == LZMA_FORMAT_ERROR ? "not an xz stream" :
		    ret == LZMA_OPTIONS_ERROR ? "unsupported options" :
		    ret == LZMA_MEMLIMIT_ERROR ? "the stream asks for more than 256 MiB of memory" :
		    ret == LZMA_MEM_ERROR ? "out of memory" : "corrupt compressed data");
		r = ret == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
		break;
	}
	if (r == -EFBIG)
		ERR(ctx, "%s: xz: decompressed size exceeds %zu bytes", label, MAX_MODULE_SIZE);
	sym_lzma_end(&strm);
	return r;
}

static int decompress_zstd(struct kmodns_ctx *ctx, const char *label, const unsigned char *in,
			   size_t in_size, struct outbuf *out)
{
	unsigned long long content;
	ZSTD_DStream *ds;
	ZSTD_inBuffer ib = { in, in_size, 0 };
	size_t ret = 1;
	int r = kmodns_dl_need(ctx, label, KMODNS_DL_LIBZSTD);

	if (r < 0)
		return r;
	content = sym_ZSTD_getFrameContentSize(in, in_size);
	if (out->known == 0 && content != ZSTD_CONTENTSIZE_UNKNOWN && content != ZSTD_CONTENTSIZE_ERROR &&
	    content < out->limit)
		out->known = plausible_size((size_t)content, in_size);
	/* The size known and all of it wanted: one call decodes straight into the output, without
	 * the stream's window buffer (a kernel's is as big as the kernel). On any error, the stream
	 * below decodes again and says what is wrong. */
	if (out->known > 0 && out->limit == MAX_MODULE_SIZE && out->capacity == 0 && outbuf_grow(out, 0) == 0) {
		ret = sym_ZSTD_decompress(out->data, out->capacity, in, in_size);
		if (!sym_ZSTD_isError(ret)) {
			out->size = ret;
			return 0;
		}
	}
	ds = sym_ZSTD_createDStream();
	if (ds == NULL) {
		ERR(ctx, "%s: cannot start the zstd decoder", label);
		return -ENOMEM;
	}
	for (;;) {
		ZSTD_outBuffer ob;
		if (outbuf_full(out))
			break;
		if (out->size == out->capacity && (r = outbuf_grow(out, in_size * 4)) < 0)
			break;
		ob = (ZSTD_outBuffer){ out->data, out->capacity, out->size };
		ret = sym_ZSTD_decompressStream(ds, &ob, &ib);
		out->size = ob.pos;
		if (sym_ZSTD_isError(ret)) {
			ERR(ctx, "%s: zstd: %s", label, sym_ZSTD_getErrorName(ret));
			r = -EBADMSG;
			break;
		}
		/* A frame ended and all input is used: done (concatenated frames are fine). */
		if (ret == 0 && ib.pos == ib.size)
			break;
		if (ib.pos == ib.size && ob.pos < ob.size) {
			ERR(ctx, "%s: zstd: unexpected end of compressed data", label);
			r = -EBADMSG;
			break;
		}
	}
	if (r == -EFBIG)
		ERR(ctx, "%s: zstd: decompressed size exceeds %zu bytes", label, MAX_MODULE_SIZE);
	sym_ZSTD_freeDStream(ds);
	return r;
}

static int decompress_gzip(struct kmodns_ctx *ctx, const char *label, const unsigned char *in,
			   size_t in_size, struct outbuf *out)
{
	z_stream zs = { 0 };
	int ret, r = kmodns_dl_need(ctx, label, KMODNS_DL_ZLIB);

	if (r < 0)
		return r;
	/* 16 + MAX_WBITS: expect the gzip wrapper. */
	if (sym_inflateInit2_(&zs, 16 + MAX_WBITS, ZLIB_VERSION, (int)sizeof(zs)) != Z_OK) {
		ERR(ctx, "%s: cannot start the gzip decoder", label);
		return -ENOMEM;
	}
	zs.next_in = (unsigned char *)in;
	zs.avail_in = in_size > UINT_MAX ? UINT_MAX : (unsigned)in_size;
	for (;;) {
		size_t room;
		if (outbuf_full(out))
			break;
		if (out->size == out->capacity && (r = outbuf_grow(out, in_size * 4)) < 0)
			break;
		room = out->capacity - out->size;
		zs.next_out = (unsigned char *)out->data + out->size;
		zs.avail_out = room > UINT_MAX ? UINT_MAX : (unsigned)room;
		ret = sym_inflate(&zs, Z_NO_FLUSH);
		out->size = (size_t)((char *)zs.next_out - out->data);
		if (ret == Z_STREAM_END)
			break;
		if (ret == Z_OK)
			continue;
		if (ret == Z_BUF_ERROR && zs.avail_out == 0)
			continue;
		ERR(ctx, "%s: gzip: %s", label,
		    ret == Z_BUF_ERROR ? "unexpected end of compressed data" :
		    zs.msg ? zs.msg : "corrupt compressed data");
		r = ret == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
		break;
	}
	if (r == -EFBIG)
		ERR(ctx, "%s: gzip: decompressed size exceeds %zu bytes", label, MAX_MODULE_SIZE);
	sym_inflateEnd(&zs);
	return r;
}

/* The kernel's lz4 payload: the legacy format, a magic then blocks of LE32 size + LZ4 block. */
#define LZ4_LEGACY_MAGIC 0x184c2102u
#define LZ4_LEGACY_BLOCK ((size_t)8 << 20) /* a block's decompressed size at most */

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int decompress_lz4_legacy(struct kmodns_ctx *ctx, const char *label, const unsigned char *in,
				 size_t in_size, struct outbuf *out)
{
	size_t pos = 4; /* past the magic */
	int r = kmodns_dl_need(ctx, label, KMODNS_DL_LIBLZ4);

	if (r < 0)
		return r;
	while (pos < in_size) {
		uint32_t block;
		int n;

		if (in_size - pos < 4) {
			ERR(ctx, "%s: lz4: unexpected end of compressed data", label);
			return -EBADMSG;
		}
		block = le32(in + pos);
		pos += 4;
		if (block == LZ4_LEGACY_MAGIC)
			continue; /* lz4 -l output concatenated: a new stream starts */
		if (block == 0 || block > in_size - pos ||
		    block > (uint32_t)sym_LZ4_compressBound((int)LZ4_LEGACY_BLOCK)) {
			ERR(ctx, "%s: lz4: %s", label,
			    block > in_size - pos ? "unexpected end of compressed data" : "corrupt block size");
			return -EBADMSG;
		}
		/* A block ends in the room left if it fits (a short one does); the output grows only
		 * when a block did not fit: room for a whole block after every small one would double
		 * the buffer each time, a gigabyte from a few bytes of input. */
		n = -1;
		if (out->capacity > out->size)
			n = sym_LZ4_decompress_safe((const char *)in + pos, out->data + out->size, (int)block,
						(int)min_size(out->capacity - out->size, LZ4_LEGACY_BLOCK));
		while (n < 0 && out->capacity - out->size < LZ4_LEGACY_BLOCK) {
			if ((r = outbuf_grow(out, LZ4_LEGACY_BLOCK)) < 0) {
				if (r == -EFBIG)
					ERR(ctx, "%s: lz4: decompressed size exceeds %zu bytes", label, out->limit);
				return r;
			}
			if (out->capacity - out->size >= LZ4_LEGACY_BLOCK)
				n = sym_LZ4_decompress_safe((const char *)in + pos, out->data + out->size,
							(int)block, (int)LZ4_LEGACY_BLOCK);
		}
		if (n < 0) {
			ERR(ctx, "%s: lz4: corrupt compressed data", label);
			return -EBADMSG;
		}
		out->size += (size_t)n;
		pos += block;
	}
	return 0;
}

/* in, of in_size bytes, decompressed by its magic into out's buffer. Plain bytes are taken
 * from *own when the caller hands over the buffer holding them (own not NULL), else copied. */
static int image_decompress(struct kmodns_ctx *ctx, const void *in, size_t in_size, const char *label,
			    struct outbuf *out, char **own, struct kmodns_image *image)
{
	int r;

	image->compression = detect_compression(in, in_size);
	switch (image->compression) {
	case KMODNS_COMPRESSION_NONE:
		/* libelf may convert in place, so it gets its own writable copy. */
		if (own != NULL) {
			image->data = TAKE_PTR(*own);
		} else {
			image->data = malloc(in_size);
			if (image->data == NULL)
				return -ENOMEM;
			memcpy(image->data, in, in_size);
		}
		image->size = in_size;
		return 0;
	case KMODNS_COMPRESSION_XZ:
		r = decompress_xz(ctx, label, in, in_size, out);
		break;
	case KMODNS_COMPRESSION_ZSTD:
		r = decompress_zstd(ctx, label, in, in_size, out);
		break;
	case KMODNS_COMPRESSION_GZIP:
		r = decompress_gzip(ctx, label, in, in_size, out);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0) {
		free(out->data);
		return r;
	}
	image->data = out->data;
	image->size = out->size;
	return 0;
}

int kmodns_payload_decompress(struct kmodns_ctx *ctx, const char *label, const void *in,
			      size_t in_size, size_t expected, struct kmodns_image *image)
{
	struct outbuf out = { .limit = MAX_MODULE_SIZE,
			      .known = expected < MAX_MODULE_SIZE ? plausible_size(expected, in_size) : 0 };
	int r;

	if (in_size >= 4 && le32(in) == LZ4_LEGACY_MAGIC) {
		r = decompress_lz4_legacy(ctx, label, in, in_size, &out);
		if (r < 0) {
			free(out.data);
			return r;
		}
		image->data = out.data;
		image->size = out.size;
		image->compression = KMODNS_COMPRESSION_NONE; /* not one a module can have */
		return 0;
	}
	if (detect_compression(in, in_size) == KMODNS_COMPRESSION_NONE) {
		const unsigned char *m = in;
		ERR(ctx, "%s: kernel payload in an unsupported format (magic %02x %02x %02x %02x)",
		    label, in_size > 0 ? m[0] : 0, in_size > 1 ? m[1] : 0, in_size > 2 ? m[2] : 0,
		    in_size > 3 ? m[3] : 0);
		return -ENOEXEC;
	}
	return image_decompress(ctx, in, in_size, label, &out, NULL, image);
}

int kmodns_image_load(struct kmodns_ctx *ctx, const char *path, const void *in, size_t in_size,
		      const char *label, size_t limit, struct kmodns_image *image)
{
	_cleanup_free_ char *raw = NULL;
	struct outbuf out = { .limit = limit ? limit : MAX_MODULE_SIZE };
	int r;

	if (path != NULL) {
		r = read_file(path, &raw, &in_size);
		if (r < 0) {
			ERR(ctx, "%s: %s", label, strerror(-r));
			return r;
		}
		in = raw;
	}
	if (in_size == 0) {
		ERR(ctx, "%s: empty file", label);
		return -ENOEXEC;
	}
	return image_decompress(ctx, in, in_size, label, &out, raw != NULL ? &raw : NULL, image);
}
