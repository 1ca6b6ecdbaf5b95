/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The part of modprobe.d that modprobe reads itself: libkmod 30 knows no weakdep. */
#pragma once

#include <stdio.h>

/* Writes "weakdep MODNAME DEP..." to out for each weakdep line of the file at path, as kmod
 * 33+'s modprobe -c does. */
void weakdeps_print(FILE *out, const char *path);
