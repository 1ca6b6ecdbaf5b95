// SPDX-License-Identifier: LGPL-2.1-or-later
/* One binary for the module tools, as kmod's: the name it is run by picks the command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

static const struct {
	const char *name;
	int (*main)(int argc, char *argv[]);
} commands[] = {
	{ "modprobe", modprobe_main },
	{ "insmod", insmod_main },
	{ "rmmod", rmmod_main },
	{ "lsmod", lsmod_main },
};

int main(int argc, char *argv[])
{
	const char *name = program_invocation_short_name;
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].main(argc, argv);
	/* "kmodns modprobe ARGS": the command as the first argument */
	for (i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			program_invocation_short_name = (char *)commands[i].name;
			return commands[i].main(argc - 1, argv + 1);
		}
	/* "kmodns policy|explain|check ...": the namespace questions of its own */
	if (argc > 1 && (strcmp(argv[1], "policy") == 0 || strcmp(argv[1], "explain") == 0 ||
			 strcmp(argv[1], "check") == 0 || argv[1][0] == '-'))
		return kmodns_command_main(argc, argv);
	fprintf(stderr, "Usage: %s COMMAND [ARGS]   (or run it as one of:", name);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, " %s", commands[i].name);
	fprintf(stderr, ")\n");
	return EXIT_FAILURE;
}
