/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The commands of the kmodns multicall binary, each named by argv[0]'s base name. */
#pragma once

int modprobe_main(int argc, char *argv[]);
int insmod_main(int argc, char *argv[]);
int rmmod_main(int argc, char *argv[]);
int lsmod_main(int argc, char *argv[]);
/* kmodns policy|explain|check: the namespace questions, without loading. */
int kmodns_command_main(int argc, char *argv[]);
