// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading a module's ELF through libelf: exports with namespaces (every era, by
 * symbol table or by relocations), imports, undefined symbols and their CRCs.
 * Layouts are described in docs/namespaces-on-disk.md of the project.
 */
#include <errno.h>
#include <inttypes.h>

#include "libkmodns-private.h"
#include "libkmodns-dl.h"

/* The export tables a module can carry, and what their entries are. */
static const struct {
	const char *section;
	enum kmodns_export_type type;
} ksymtab_sections[] = {
	{ "__ksymtab", KMODNS_EXPORT_SYMBOL },
	{ "__ksymtab_gpl", KMODNS_EXPORT_SYMBOL_GPL },
	{ "__ksymtab_gpl_future", KMODNS_EXPORT_SYMBOL_GPL_FUTURE },
	{ "__ksymtab_unused", KMODNS_EXPORT_UNUSED_SYMBOL },
	{ "__ksymtab_unused_gpl", KMODNS_EXPORT_UNUSED_SYMBOL_GPL },
};
#define N_KSYMTABS ARRAY_SIZE(ksymtab_sections)

struct section {
	const char *name;
	size_t index;
	GElf_Shdr shdr;
	Elf_Data *data; /* NULL until loaded */
};

/* A name -> value map over a strset: index i of the set holds values[i]. */
struct symbol_map {
	struct strset names;
	uint64_t *values;
	size_t capacity;
};

struct reader {
	struct kmodns_module *mod;
	struct kmodns_ctx *ctx;
	const char *label;
	Elf *elf;
	size_t image_size;
	size_t shstrndx, n_sections;
	struct section symtab, strings, kflagstab, modinfo, versions, knsimport;
	struct section ext_crcs, ext_names;
	struct section ksymtab[N_KSYMTABS];
	size_t *relocs_for; /* section index -> index of its REL/RELA section, 0 if none */
	size_t n_symbols;
	/* From the symbol table. */
	struct symbol_map ksymtab_syms;  /* X of __ksymtab_X -> (kind << 56 | entry offset) */
	struct symbol_map kstrtabns;     /* X of __kstrtabns_X or __kstrtab_ns_X -> string offset */
	struct symbol_map kstrtab;       /* X of __kstrtab_X */
	struct symbol_map flags;         /* X of __flags_X -> offset in __kflagstab */
	struct symbol_map knsimport_syms;     /* NS of __knsimport_NS -> offset (section order) */
	struct symbol_map crcs;          /* __versions: name -> crc */
	struct symbol_map export_crcs;   /* __crc_X: X -> crc of the module's own export */
};

static void symbol_map_release(struct symbol_map *map)
{
	strset_release(&map->names);
	free(map->values);
}

static int symbol_map_set(struct symbol_map *map, const char *name, uint64_t value)
{
	int r = strset_add(&map->names, name);
	long i;

	if (r < 0)
		return r;
	i = strset_find(&map->names, name);
	r = array_reserve((void **)&map->values, &map->capacity, sizeof(uint64_t),
			  map->names.count);
	if (r < 0)
		return r;
	map->values[i] = value;
	return 0;
}

static bool symbol_map_get(const struct symbol_map *map, const char *name, uint64_t *value)
{
	long i = strset_find(&map->names, name);

	if (i < 0)
		return false;
	*value = map->values[i];
	return true;
}

static void reader_release(struct reader *rd)
{
	symbol_map_release(&rd->ksymtab_syms);
	symbol_map_release(&rd->kstrtabns);
	symbol_map_release(&rd->kstrtab);
	symbol_map_release(&rd->flags);
	symbol_map_release(&rd->knsimport_syms);
	symbol_map_release(&rd->crcs);
	symbol_map_release(&rd->export_crcs);
	free(rd->relocs_for);
	if (rd->elf)
		sym_elf_end(rd->elf);
}

static int corrupt(struct reader *rd, const char *what)
{
	ERR(rd->ctx, "%s: corrupt module: %s", rd->label, what);
	return -EBADMSG;
}

static int elf_failed(struct reader *rd, const char *what)
{
	ERR(rd->ctx, "%s: corrupt module: %s: %s", rd->label, what, sym_elf_errmsg(-1));
	return -EBADMSG;
}

/* Loads a section's bytes; libelf checks that they lie inside the file. */
static int section_load(struct reader *rd, struct section *sec)
{
	Elf_Scn *scn;

	if (sec->data != NULL || sec->index == 0)
		return 0;
	if (sec->shdr.sh_type == SHT_NOBITS)
		return corrupt(rd, "a section the reader needs has no data");
	scn = sym_elf_getscn(rd->elf, sec->index);
	if (scn == NULL || (sec->data = sym_elf_getdata(scn, NULL)) == NULL)
		return elf_failed(rd, "section data out of range");
	if (sec->data->d_size < sec->shdr.sh_size)
		return corrupt(rd, "section data shorter than its header says");
	return 0;
}

/* The NUL-terminated string at offset of a section, or NULL (after logging) if it is not one. */
static const char *section_string(struct reader *rd, struct section *sec, uint64_t offset)
{
	const char *base, *end;

	if (section_load(rd, sec) < 0)
		return NULL;
	if (offset >= sec->data->d_size) {
		ERR(rd->ctx, "%s: corrupt module: string offset %#" PRIx64 " out of range in %s",
		    rd->label, offset, sec->name ? sec->name : "a section");
		return NULL;
	}
	base = (const char *)sec->data->d_buf + offset;
	end = memchr(base, '\0', sec->data->d_size - offset);
	if (end == NULL) {
		ERR(rd->ctx, "%s: corrupt module: unterminated string in %s", rd->label,
		    sec->name ? sec->name : "a section");
		return NULL;
	}
	return base;
}

/* An integer of size bytes in the file's byte order. */
static uint64_t read_field(const unsigned char *p, size_t size, bool big_endian)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < size; i++)
		v = (v << 8) | p[big_endian ? i : size - 1 - i];
	return v;
}

static uint64_t read_word(const struct reader *rd, const unsigned char *p, size_t size)
{
	return read_field(p, size, rd->mod->big_endian);
}

/* Step 1: the section table, by name. */
static int read_sections(struct reader *rd)
{
	Elf_Scn *scn = NULL;

	if (sym_elf_getshdrnum(rd->elf, &rd->n_sections) < 0 ||
	    sym_elf_getshdrstrndx(rd->elf, &rd->shstrndx) < 0)
		return elf_failed(rd, "section header table");
	rd->relocs_for = calloc(rd->n_sections ? rd->n_sections : 1, sizeof(size_t));
	if (rd->relocs_for == NULL)
		return -ENOMEM;
	while ((scn = sym_elf_nextscn(rd->elf, scn)) != NULL) {
		struct section sec = { .index = sym_elf_ndxscn(scn) };
		const char *name;
		size_t i;

		if (sym_gelf_getshdr(scn, &sec.shdr) == NULL)
			return elf_failed(rd, "section header");
		name = sym_elf_strptr(rd->elf, rd->shstrndx, sec.shdr.sh_name);
		if (name == NULL)
			return elf_failed(rd, "section name");
		/* A truncated file loses data here before anything else notices. */
		if (sec.shdr.sh_type != SHT_NOBITS &&
		    (sec.shdr.sh_offset > rd->image_size ||
		     rd->image_size - sec.shdr.sh_offset < sec.shdr.sh_size)) {
			ERR(rd->ctx, "%s: corrupt module: section %s extends past the end of the file",
			    rd->label, name);
			return -EBADMSG;
		}
		sec.name = name;
		if (sec.shdr.sh_type == SHT_REL || sec.shdr.sh_type == SHT_RELA) {
			if (sec.shdr.sh_info < rd->n_sections)
				rd->relocs_for[sec.shdr.sh_info] = sec.index;
			continue;
		}
		if (sec.shdr.sh_type == SHT_SYMTAB)
			rd->symtab = sec;
		else if (streq(name, "__ksymtab_strings"))
			rd->strings = sec;
		else if (streq(name, "__kflagstab"))
			rd->kflagstab = sec;
		else if (streq(name, ".modinfo"))
			rd->modinfo = sec;
		else if (streq(name, "__versions"))
			rd->versions = sec;
		else if (streq(name, "__knsimport"))
			rd->knsimport = sec;
		else if (streq(name, "__version_ext_crcs"))
			rd->ext_crcs = sec;
		else if (streq(name, "__version_ext_names"))
			rd->ext_names = sec;
		for (i = 0; i < N_KSYMTABS; i++)
			if (streq(name, ksymtab_sections[i].section))
				rd->ksymtab[i] = sec;
	}
	if (sym_elf_errno() != 0)
		return elf_failed(rd, "section table");
	return 0;
}

static long ksymtab_kind_of_section(const struct reader *rd, size_t index)
{
	size_t i;

	for (i = 0; i < N_KSYMTABS; i++)
		if (rd->ksymtab[i].index != 0 && rd->ksymtab[i].index == index)
			return (long)i;
	return -1;
}

/*
 * A module's own export CRC: old kernels make __crc_X an absolute symbol whose
 * value is the CRC; newer ones (__kcrctab) point it at a 32-bit word.
 */
static int read_export_crc(struct reader *rd, const char *x, const GElf_Sym *sym)
{
	struct section sec = { .index = sym->st_shndx };
	Elf_Scn *scn;
	int r;

	if (sym->st_shndx == SHN_ABS)
		return symbol_map_set(&rd->export_crcs, x, (uint32_t)sym->st_value);
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= rd->n_sections)
		return 0;
	scn = sym_elf_getscn(rd->elf, sec.index);
	if (scn == NULL || sym_gelf_getshdr(scn, &sec.shdr) == NULL)
		return elf_failed(rd, "__crc_ symbol section");
	sec.name = sym_elf_strptr(rd->elf, rd->shstrndx, sec.shdr.sh_name);
	if (sec.shdr.sh_type == SHT_NOBITS)
		return 0;
	r = section_load(rd, &sec);
	if (r < 0)
		return r;
	if (sym->st_value > sec.data->d_size || sec.data->d_size - sym->st_value < 4)
		return corrupt(rd, "__crc_ symbol outside its section");
	return symbol_map_set(&rd->export_crcs, x,
			      read_word(rd, (const unsigned char *)sec.data->d_buf + sym->st_value, 4));
}

/* Step 2: one pass over the symbol table collects everything named by convention. */
static int read_symbols(struct reader *rd)
{
	size_t i;
	int r = 0;

	if (rd->symtab.index == 0)
		return 0;
	r = section_load(rd, &rd->symtab);
	if (r < 0)
		return r;
	rd->n_symbols = rd->symtab.data->d_size / sym_gelf_fsize(rd->elf, ELF_T_SYM, 1, EV_CURRENT);
	for (i = 1; i < rd->n_symbols && r >= 0; i++) {
		GElf_Sym sym;
		const char *name;
		unsigned bind;
		long kind;

		if (sym_gelf_getsym(rd->symtab.data, (int)i, &sym) == NULL)
			return elf_failed(rd, "symbol table");
		name = sym_elf_strptr(rd->elf, rd->symtab.shdr.sh_link, sym.st_name);
		if (name == NULL)
			return corrupt(rd, "symbol name offset out of range");
		if (name[0] == '\0')
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF) {
			if (bind == STB_GLOBAL || bind == STB_WEAK)
				r = kmodns_module_add_undefined(rd->mod, name, bind == STB_WEAK);
			continue;
		}
		if (startswith(name, "__ksymtab_")) {
			kind = ksymtab_kind_of_section(rd, sym.st_shndx);
			/* the kind rides in the top byte: an offset reaching it is no real entry's */
			if (kind >= 0 && sym.st_value >> 56 != 0)
				return corrupt(rd, "__ksymtab_ symbol value out of range");
			if (kind >= 0)
				r = symbol_map_set(&rd->ksymtab_syms, name + strlen("__ksymtab_"),
						   ((uint64_t)kind << 56) | sym.st_value);
		} else if (startswith(name, "__kstrtabns_") && sym.st_shndx == rd->strings.index) {
			r = symbol_map_set(&rd->kstrtabns, name + strlen("__kstrtabns_"), sym.st_value);
		} else if (startswith(name, "__kstrtab_ns_") && sym.st_shndx == rd->strings.index) {
			r = symbol_map_set(&rd->kstrtabns, name + strlen("__kstrtab_ns_"), sym.st_value);
		} else if (startswith(name, "__kstrtab_")) {
			r = symbol_map_set(&rd->kstrtab, name + strlen("__kstrtab_"), sym.st_value);
		} else if (startswith(name, "__crc_")) {
			r = read_export_crc(rd, name + strlen("__crc_"), &sym);
		} else if (startswith(name, "__flags_") && sym.st_shndx == rd->kflagstab.index) {
			r = symbol_map_set(&rd->flags, name + strlen("__flags_"), sym.st_value);
		} else if (startswith(name, "__knsimport_") && sym.st_shndx == rd->knsimport.index &&
			   rd->knsimport.index != 0) {
			r = symbol_map_set(&rd->knsimport_syms, name + strlen("__knsimport_"), sym.st_value);
		}
	}
	return r;
}

/* GPL-ness from __kflagstab (7.1+): bit 0 of the entry's byte. */
static int flag_type(struct reader *rd, uint64_t offset, enum kmodns_export_type *type)
{
	int r = section_load(rd, &rd->kflagstab);

	if (r < 0)
		return r;
	if (offset >= rd->kflagstab.data->d_size)
		return corrupt(rd, "__kflagstab offset out of range");
	*type = ((const unsigned char *)rd->kflagstab.data->d_buf)[offset] & 1 ?
			KMODNS_EXPORT_SYMBOL_GPL : KMODNS_EXPORT_SYMBOL;
	return 0;
}

static int string_in_strings(struct reader *rd, uint64_t offset, const char **s)
{
	*s = section_string(rd, &rd->strings, offset);
	return *s ? 0 : -EBADMSG;
}

/*
 * Step 3a: exports by symbol table. An entry symbol is __ksymtab_X; the
 * pre-5.4 RFC and 5.4-rc forms put the namespace into X as "sym.NS" or
 * "NS.sym": the existing __kstrtab_ symbol says which half is the name.
 */
static int exports_by_symbols(struct reader *rd)
{
	size_t i;

	for (i = 0; i < rd->ksymtab_syms.names.count; i++) {
		const char *x = rd->ksymtab_syms.names.items[i];
		uint64_t v = rd->ksymtab_syms.values[i], off;
		enum kmodns_export_type type = ksymtab_sections[v >> 56].type;
		const char *dot = strchr(x, '.'), *ns = "";
		size_t sym_len = strlen(x);
		const char *sym = x;
		int r;

		if (dot != NULL) {
			const char *after = dot + 1;
			_cleanup_free_ char *before = strndup(x, (size_t)(dot - x));
			if (before == NULL)
				return -ENOMEM;
			if (!symbol_map_get(&rd->kstrtab, before, &off) &&
			    (symbol_map_get(&rd->kstrtab, after, &off) ||
			     symbol_map_get(&rd->kstrtabns, after, &off))) {
				sym = after; /* 5.4-rc3: __ksymtab_NS.sym */
				sym_len = strlen(after);
				ns = before;
				r = kmodns_module_add_export(rd->mod, sym, sym_len, ns, type);
				if (r < 0)
					return r;
				continue;
			}
			sym_len = (size_t)(dot - x); /* RFC, 5.4-rc1: __ksymtab_sym.NS */
			ns = after;
		} else if (symbol_map_get(&rd->kstrtabns, x, &off)) {
			int rr = string_in_strings(rd, off, &ns);
			if (rr < 0)
				return rr;
		}
		if (rd->kflagstab.index != 0 && symbol_map_get(&rd->flags, x, &off)) {
			r = flag_type(rd, off, &type);
			if (r < 0)
				return r;
		}
		r = kmodns_module_add_export(rd->mod, sym, sym_len, ns, type);
		if (r < 0)
			return r;
	}
	return 0;
}

struct reloc {
	uint64_t offset;
	size_t symbol;
	int64_t addend;
};

static int reloc_cmp(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The relocations applying to sec, sorted by offset; REL addends read from the section bytes. */
static int read_relocs(struct reader *rd, struct section *sec, size_t field,
		       struct reloc **out, size_t *n_out)
{
	struct section rsec = { .index = rd->relocs_for[sec->index] };
	_cleanup_free_ struct reloc *relocs = NULL;
	Elf_Scn *scn;
	size_t n, i;
	int r;

	*out = NULL;
	*n_out = 0;
	if (rsec.index == 0)
		return 0;
	scn = sym_elf_getscn(rd->elf, rsec.index);
	if (scn == NULL || sym_gelf_getshdr(scn, &rsec.shdr) == NULL)
		return elf_failed(rd, "relocation section");
	r = section_load(rd, &rsec);
	if (r < 0)
		return r;
	r = section_load(rd, sec);
	if (r < 0)
		return r;
	n = rsec.data->d_size / sym_gelf_fsize(rd->elf, rsec.shdr.sh_type == SHT_RELA ? ELF_T_RELA : ELF_T_REL,
					   1, EV_CURRENT);
	relocs = calloc(n ? n : 1, sizeof(*relocs));
	if (relocs == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct reloc *rl = &relocs[i];
		if (rsec.shdr.sh_type == SHT_RELA) {
			GElf_Rela rela;
			if (sym_gelf_getrela(rsec.data, (int)i, &rela) == NULL)
				return elf_failed(rd, "relocation entry");
			rl->offset = rela.r_offset;
			rl->symbol = GELF_R_SYM(rela.r_info);
			rl->addend = rela.r_addend;
		} else {
			GElf_Rel rel;
			uint64_t v;
			if (sym_gelf_getrel(rsec.data, (int)i, &rel) == NULL)
				return elf_failed(rd, "relocation entry");
			rl->offset = rel.r_offset;
			rl->symbol = GELF_R_SYM(rel.r_info);
			/* REL keeps the addend in the field itself, in the file's byte order. */
			if (rl->offset > sec->data->d_size || sec->data->d_size - rl->offset < field)
				return corrupt(rd, "relocation offset out of range");
			v = read_word(rd, (const unsigned char *)sec->data->d_buf + rl->offset, field);
			rl->addend = field == 4 ? (int64_t)(int32_t)v : (int64_t)v;
		}
		if (rl->symbol >= rd->n_symbols)
			return corrupt(rd, "relocation symbol out of range");
	}
	qsort(relocs, n, sizeof(*relocs), reloc_cmp);
	*out = TAKE_PTR(relocs);
	*n_out = n;
	return 0;
}

static const struct reloc *reloc_at(const struct reloc *relocs, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (relocs[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && relocs[lo].offset == offset ? &relocs[lo] : NULL;
}

/* The string a pointer-like relocation points to: symbol value + addend in the symbol's section. */
static int reloc_target_string(struct reader *rd, const struct reloc *rl, const char **s)
{
	GElf_Sym sym;
	struct section target = { 0 };
	Elf_Scn *scn;

	if (sym_gelf_getsym(rd->symtab.data, (int)rl->symbol, &sym) == NULL)
		return elf_failed(rd, "relocation symbol");
	if (sym.st_shndx == rd->strings.index && rd->strings.index != 0) {
		*s = section_string(rd, &rd->strings, sym.st_value + (uint64_t)rl->addend);
		return *s ? 0 : -EBADMSG;
	}
	if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= rd->n_sections)
		return corrupt(rd, "relocation points outside the module");
	target.index = sym.st_shndx;
	scn = sym_elf_getscn(rd->elf, target.index);
	if (scn == NULL || sym_gelf_getshdr(scn, &target.shdr) == NULL)
		return elf_failed(rd, "relocation target section");
	target.name = sym_elf_strptr(rd->elf, rd->shstrndx, target.shdr.sh_name);
	*s = section_string(rd, &target, sym.st_value + (uint64_t)rl->addend);
	return *s ? 0 : -EBADMSG;
}

static bool reloc_targets_strings(struct reader *rd, const struct reloc *rl)
{
	GElf_Sym sym;

	return sym_gelf_getsym(rd->symtab.data, (int)rl->symbol, &sym) != NULL &&
	       rd->strings.index != 0 && sym.st_shndx == rd->strings.index;
}

/*
 * Is `entry` a plausible entry size for this table? Every entry must have a
 * value relocation at 0 and a name relocation at `field` pointing into
 * __ksymtab_strings. A wrong guess puts some entry's "name" on a value, which
 * points to code or data, so at most one of 2 and 3 fields fits.
 */
static bool entry_size_fits(struct reader *rd, const struct reloc *relocs, size_t n,
			    uint64_t size, uint64_t entry, uint64_t field)
{
	uint64_t k;

	if (entry == 0 || size % entry != 0)
		return false;
	for (k = 0; k < size; k += entry) {
		const struct reloc *name = reloc_at(relocs, n, k + field);
		if (reloc_at(relocs, n, k) == NULL || name == NULL || !reloc_targets_strings(rd, name))
			return false;
	}
	return true;
}

/*
 * Step 3b: exports by relocations, for modules whose local symbols are gone.
 * The table bytes are zero until the kernel relocates them, so the entries are
 * read from their relocations: {value, name[, namespace]}, each field 4 bytes
 * (PREL32) or a pointer; the sizes are derived, not assumed per architecture.
 */
static int exports_by_relocations(struct reader *rd, size_t kind)
{
	struct section *sec = &rd->ksymtab[kind];
	_cleanup_free_ struct reloc *relocs = NULL;
	uint64_t size = sec->shdr.sh_size, field = 0, entry, k;
	size_t n, i;
	int r;

	/* The field width is the smallest non-zero relocation offset: entry 0's name field. */
	for (i = 0; i < 2 && field == 0; i++) {
		uint64_t w = i == 0 ? 4 : 8;
		r = read_relocs(rd, sec, w, &relocs, &n);
		if (r < 0)
			return r;
		if (n == 0)
			return corrupt(rd, "export table without relocations");
		if (n > 1 && relocs[1].offset == w)
			field = w;
		else
			free(TAKE_PTR(relocs));
	}
	if (field == 0)
		return corrupt(rd, "export table relocations have no known layout");
	if (entry_size_fits(rd, relocs, n, size, 3 * field, field))
		entry = 3 * field;
	else if (entry_size_fits(rd, relocs, n, size, 2 * field, field))
		entry = 2 * field;
	else
		return corrupt(rd, "export table relocations have no known layout");

	for (k = 0; k < size; k += entry) {
		enum kmodns_export_type type = ksymtab_sections[kind].type;
		const struct reloc *ns_rl = entry == 3 * field ? reloc_at(relocs, n, k + 2 * field) : NULL;
		const char *name, *ns = "";

		r = reloc_target_string(rd, reloc_at(relocs, n, k + field), &name);
		if (r < 0)
			return r;
		if (ns_rl != NULL && (r = reloc_target_string(rd, ns_rl, &ns)) < 0)
			return r;
		/* 7.1+: one flag byte per entry, in table order. */
		if (rd->kflagstab.index != 0 && (r = flag_type(rd, k / entry, &type)) < 0)
			return r;
		r = kmodns_module_add_export(rd->mod, name, strlen(name), ns, type);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_exports(struct reader *rd, unsigned flags)
{
	bool any_table = false;
	size_t i;
	int r;

	for (i = 0; i < N_KSYMTABS; i++)
		any_table |= rd->ksymtab[i].index != 0 && rd->ksymtab[i].shdr.sh_size > 0;
	if (!any_table)
		return 0;
	if (rd->ksymtab_syms.names.count > 0 && !(flags & KMODNS_MODULE_EXPORTS_BY_RELOCATIONS))
		return exports_by_symbols(rd);
	if (rd->symtab.index == 0)
		return corrupt(rd, "export table without a symbol table");
	for (i = 0; i < N_KSYMTABS; i++) {
		if (rd->ksymtab[i].index == 0 || rd->ksymtab[i].shdr.sh_size == 0)
			continue;
		r = exports_by_relocations(rd, i);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Step 4: .modinfo records, NUL-separated key=value; alignment padding leaves empty ones. */
static int read_modinfo(struct reader *rd)
{
	const char *p, *end;
	int r;

	if (rd->modinfo.index == 0)
		return 0;
	r = section_load(rd, &rd->modinfo);
	if (r < 0)
		return r;
	/* an empty section has no buffer at all: nothing to read, and no pointer to offset */
	if (rd->modinfo.data->d_buf == NULL || rd->modinfo.data->d_size == 0)
		return 0;
	p = rd->modinfo.data->d_buf;
	end = p + rd->modinfo.data->d_size;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		if (nul == NULL)
			return corrupt(rd, "unterminated string in .modinfo");
		if (*p != '\0' && (r = kmodns_module_add_modinfo(rd->mod, p)) < 0)
			return r;
		if (startswith(p, "import_ns=")) {
			r = kmodns_module_add_import(rd->mod, p + strlen("import_ns="));
			if (r < 0)
				return r;
		} else if (startswith(p, "name=")) {
			rd->mod->name = arena_strdup(&rd->mod->strings, p + strlen("name="));
		} else if (startswith(p, "vermagic=")) {
			rd->mod->vermagic = arena_strdup(&rd->mod->strings, p + strlen("vermagic="));
		}
		p = nul + 1;
	}
	return 0;
}

static int knsimport_cmp(const void *a, const void *b, void *map)
{
	const uint64_t *v = ((const struct symbol_map *)map)->values;
	uint64_t x = v[*(const size_t *)a], y = v[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

/*
 * Step 5: the RFC's imports: __knsimport is an array of pointers to namespace
 * strings, read through its relocations (one per entry, duplicates counted);
 * without relocations, the __knsimport_NS symbols name them in section order.
 */
static int read_knsimport(struct reader *rd)
{
	struct symbol_map *map = &rd->knsimport_syms;
	_cleanup_free_ size_t *order = NULL;
	_cleanup_free_ struct reloc *relocs = NULL;
	size_t i, n;
	int r;

	if (rd->knsimport.index == 0)
		return 0;
	if (rd->relocs_for[rd->knsimport.index] != 0) {
		r = read_relocs(rd, &rd->knsimport, rd->mod->elf_class == 64 ? 8 : 4, &relocs, &n);
		for (i = 0; r >= 0 && i < n; i++) {
			const char *ns;
			r = reloc_target_string(rd, &relocs[i], &ns);
			if (r >= 0)
				r = kmodns_module_add_import(rd->mod, ns);
		}
		return r;
	}
	order = malloc((map->names.count ? map->names.count : 1) * sizeof(*order));
	if (order == NULL)
		return -ENOMEM;
	for (i = 0; i < map->names.count; i++)
		order[i] = i;
	qsort_r(order, map->names.count, sizeof(*order), knsimport_cmp, map);
	for (i = 0; i < map->names.count; i++) {
		r = kmodns_module_add_import(rd->mod, map->names.items[order[i]]);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Step 6: CRCs of undefined symbols. __versions holds fixed 64-byte records
 * {unsigned long crc; char name[64 - sizeof(long)]}; 6.14+ extended
 * modversions keep parallel arrays __version_ext_crcs / __version_ext_names.
 */
static int read_versions(struct reader *rd)
{
	size_t word = rd->mod->elf_class == 64 ? 8 : 4, i;
	int r;

	if (rd->versions.index != 0) {
		const unsigned char *p;
		size_t n;
		r = section_load(rd, &rd->versions);
		if (r < 0)
			return r;
		p = rd->versions.data->d_buf;
		n = rd->versions.data->d_size / 64;
		for (i = 0; i < n; i++, p += 64) {
			const char *name = (const char *)p + word;
			if (memchr(name, '\0', 64 - word) == NULL)
				return corrupt(rd, "unterminated name in __versions");
			r = symbol_map_set(&rd->crcs, name, (uint32_t)read_word(rd, p, word));
			if (r >= 0)
				r = kmodns_module_add_version(rd->mod, name, (uint32_t)read_word(rd, p, word));
			if (r < 0)
				return r;
		}
	}
	if (rd->ext_crcs.index != 0 && rd->ext_names.index != 0) {
		uint64_t name_off = 0;
		size_t n;
		r = section_load(rd, &rd->ext_crcs);
		if (r < 0)
			return r;
		n = rd->ext_crcs.data->d_size / 4;
		for (i = 0; i < n; i++) {
			const char *name = section_string(rd, &rd->ext_names, name_off);
			if (name == NULL)
				return -EBADMSG;
			r = symbol_map_set(&rd->crcs, name,
					   read_word(rd, (const unsigned char *)rd->ext_crcs.data->d_buf + 4 * i, 4));
			if (r >= 0)
				r = kmodns_module_add_version(rd->mod, name,
					(uint32_t)read_word(rd, (const unsigned char *)rd->ext_crcs.data->d_buf + 4 * i, 4));
			if (r < 0)
				return r;
			name_off += strlen(name) + 1;
		}
	}
	for (i = 0; i < rd->mod->n_undefined; i++) {
		struct kmodns_symbol *s = &rd->mod->undefined[i];
		uint64_t crc;
		if (symbol_map_get(&rd->crcs, s->name, &crc)) {
			s->has_crc = true;
			s->crc = (uint32_t)crc;
		}
	}
	return 0;
}

static void attach_export_crcs(struct reader *rd)
{
	size_t i;

	for (i = 0; rd->export_crcs.names.count > 0 && i < rd->mod->n_exports; i++) {
		struct kmodns_export *e = &rd->mod->exports[i];
		uint64_t crc;
		if (symbol_map_get(&rd->export_crcs, e->symbol, &crc)) {
			e->has_crc = true;
			e->crc = (uint32_t)crc;
		}
	}
}

int kmodns_elf_check_header(struct kmodns_ctx *ctx, const char *label, const char *data, size_t size)
{
	const unsigned char *id = (const unsigned char *)data;
	bool is64, big;
	uint64_t shoff;
	unsigned type, shentsize, shnum, shstrndx;

	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0) {
		ERR(ctx, "%s: not an ELF file", label);
		return -ENOEXEC;
	}
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) {
		ERR(ctx, "%s: unknown ELF class %u", label, id[EI_CLASS]);
		return -ENOEXEC;
	}
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) {
		ERR(ctx, "%s: unknown ELF byte order %u", label, id[EI_DATA]);
		return -ENOEXEC;
	}
	is64 = id[EI_CLASS] == ELFCLASS64;
	big = id[EI_DATA] == ELFDATA2MSB;
	if (size < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		ERR(ctx, "%s: corrupt module: truncated ELF header", label);
		return -EBADMSG;
	}
	/* Fields by the ELF specification's offsets: libelf needs the whole file to decode them. */
	type = (unsigned)read_field(id + 16, 2, big);
	shoff = read_field(id + (is64 ? 40 : 32), is64 ? 8 : 4, big);
	shentsize = (unsigned)read_field(id + (is64 ? 58 : 46), 2, big);
	shnum = (unsigned)read_field(id + (is64 ? 60 : 48), 2, big);
	shstrndx = (unsigned)read_field(id + (is64 ? 62 : 50), 2, big);
	if (type != ET_REL) {
		ERR(ctx, "%s: not a kernel module (ELF type %u, not relocatable)", label, type);
		return -ENOEXEC;
	}
	if (shoff == 0 || shnum == 0 || shstrndx >= shnum ||
	    shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr))) {
		ERR(ctx, "%s: corrupt module: bad section header table in the ELF header", label);
		return -EBADMSG;
	}
	return 0;
}

int kmodns_elf_read(struct kmodns_module *mod, struct kmodns_image *image, unsigned flags)
{
	struct reader rd = { .mod = mod, .ctx = mod->ctx, .label = mod->path, .image_size = image->size };
	GElf_Ehdr ehdr;
	int r;

	r = kmodns_elf_check_header(mod->ctx, rd.label, image->data, image->size);
	if (r < 0)
		return r;
	r = kmodns_dl_need(mod->ctx, rd.label, KMODNS_DL_LIBELF);
	if (r < 0)
		return r;
	sym_elf_version(EV_CURRENT);
	rd.elf = sym_elf_memory(image->data, image->size);
	if (rd.elf == NULL || sym_elf_kind(rd.elf) != ELF_K_ELF || sym_gelf_getehdr(rd.elf, &ehdr) == NULL) {
		r = elf_failed(&rd, "ELF header");
		goto out;
	}
	/* libelf takes a section header table cut short by truncation as a smaller one:
	 * compare with the count the header promises. */
	if (ehdr.e_shoff > image->size || (image->size - ehdr.e_shoff) / ehdr.e_shentsize < ehdr.e_shnum) {
		ERR(mod->ctx, "%s: corrupt module: section header table missing or past the end of the file",
		    rd.label);
		r = -EBADMSG;
		goto out;
	}
	mod->elf_class = sym_gelf_getclass(rd.elf) == ELFCLASS64 ? 64 : 32;
	mod->big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;

	r = read_sections(&rd);
	if (r >= 0)
		r = read_symbols(&rd);
	if (r >= 0)
		r = read_exports(&rd, flags);
	if (r >= 0)
		attach_export_crcs(&rd);
	if (r >= 0)
		r = read_modinfo(&rd);
	if (r >= 0)
		r = read_knsimport(&rd);
	if (r >= 0)
		r = read_versions(&rd);
out:
	reader_release(&rd);
	return r < 0 ? r : 0;
}
