/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ELF and decompression libraries, opened on first use (dlopen) rather than
 * at start: a modprobe that judges modules by depmod's records never reads a
 * module file, and should not pay for mapping and relocating five libraries it
 * does not call. The headers still come from pkg-config; each function is
 * called through sym_NAME, typed by the library's own declaration.
 */
#pragma once

#include <gelf.h>
#include <libelf.h>
#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

struct kmodns_ctx;

#define KMODNS_DL_LIBELF_SYMS(X)                                                                \
	X(elf_end) X(elf_errmsg) X(elf_errno) X(elf_getdata) X(elf_getscn) X(elf_getshdrnum)    \
	X(elf_getshdrstrndx) X(elf_kind) X(elf_memory) X(elf_ndxscn) X(elf_nextscn)             \
	X(elf_strptr) X(elf_version) X(gelf_fsize) X(gelf_getclass) X(gelf_getehdr)             \
	X(gelf_getrel) X(gelf_getrela) X(gelf_getshdr) X(gelf_getsym) X(gelf_xlatetom)
#define KMODNS_DL_LIBZSTD_SYMS(X)                                                               \
	X(ZSTD_createDStream) X(ZSTD_decompress) X(ZSTD_decompressStream) X(ZSTD_freeDStream)   \
	X(ZSTD_getErrorName) X(ZSTD_getFrameContentSize) X(ZSTD_isError)
#define KMODNS_DL_LIBLZMA_SYMS(X)                                                               \
	X(lzma_code) X(lzma_end) X(lzma_index_buffer_decode) X(lzma_index_end)                  \
	X(lzma_index_uncompressed_size) X(lzma_stream_decoder) X(lzma_stream_footer_decode)
#define KMODNS_DL_ZLIB_SYMS(X) X(crc32) X(inflate) X(inflateEnd) X(inflateInit2_)
#define KMODNS_DL_LIBLZ4_SYMS(X) X(LZ4_compressBound) X(LZ4_decompress_safe)

#define KMODNS_DL_DECLARE(name) extern typeof(name) *sym_##name;
KMODNS_DL_LIBELF_SYMS(KMODNS_DL_DECLARE)
KMODNS_DL_LIBZSTD_SYMS(KMODNS_DL_DECLARE)
KMODNS_DL_LIBLZMA_SYMS(KMODNS_DL_DECLARE)
KMODNS_DL_ZLIB_SYMS(KMODNS_DL_DECLARE)
KMODNS_DL_LIBLZ4_SYMS(KMODNS_DL_DECLARE)

enum kmodns_dl_lib {
	KMODNS_DL_LIBELF,
	KMODNS_DL_LIBZSTD,
	KMODNS_DL_LIBLZMA,
	KMODNS_DL_ZLIB,
	KMODNS_DL_LIBLZ4,
};

/*
 * Makes lib's sym_* pointers usable: opens it on the first call (once per process, safe from
 * any thread), then answers at once. 0, or -ELIBACC with an error logged through ctx (label
 * names what was being read) when the library or one of its functions is missing.
 */
int kmodns_dl_need(struct kmodns_ctx *ctx, const char *label, enum kmodns_dl_lib lib);
