// SPDX-License-Identifier: GPL-2.0-or-later
/* The part of modprobe.d that modprobe reads itself (libkmod 30 reads the rest). */
#include <stdlib.h>
#include <string.h>

#include "modprobe-config.h"
#include "tool-util.h"

void weakdeps_print(FILE *out, const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	char *logical = NULL;
	size_t cap = 0, len = 0;

	if (f == NULL)
		return;
	for (;;) {
		ssize_t n = getline(&line, &cap, f);
		char *save = NULL, *cmd, *modname, *rest, *word, *norm;
		bool first = true;

		if (n < 0)
			break;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		/* a trailing backslash continues the line */
		if (n > 0 && line[n - 1] == '\\') {
			line[--n] = '\0';
			logical = realloc(logical, len + (size_t)n + 1);
			if (logical == NULL)
				return;
			memcpy(logical + len, line, (size_t)n + 1);
			len += (size_t)n;
			continue;
		}
		logical = realloc(logical, len + (size_t)n + 1);
		if (logical == NULL)
			return;
		memcpy(logical + len, line, (size_t)n + 1);
		len = 0;
		if (logical[0] == '\0' || logical[0] == '#')
			continue;
		cmd = strtok_r(logical, "\t ", &save);
		if (cmd == NULL || !streq(cmd, "weakdep"))
			continue;
		modname = strtok_r(NULL, "\t ", &save);
		rest = strtok_r(NULL, "", &save);
		if (modname == NULL || rest == NULL || (norm = alias_normalize(modname)) == NULL)
			continue;
		fprintf(out, "weakdep %s ", norm);
		free(norm);
		for (word = strtok_r(rest, "\t\n\v\f\r ", &save); word != NULL;
		     word = strtok_r(NULL, "\t\n\v\f\r ", &save)) {
			fprintf(out, "%s%s", first ? "" : " ", word);
			first = false;
		}
		fputc('\n', out);
	}
	free(logical);
}
