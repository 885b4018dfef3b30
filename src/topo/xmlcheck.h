/* A check of an hwloc XML topology before hwloc reads it: hwloc 2.x trusts the sets of a
 * non-I/O object and can crash on a file that lacks them, so such a file is refused first. */
#ifndef JT_XMLCHECK_H
#define JT_XMLCHECK_H

#include <stddef.h>

/* Returns 0 when the file is a <topology> whose every non-I/O <object> has cpuset,
 * complete_cpuset, nodeset and complete_nodeset (hwloc 2.x files), or, in an hwloc 1.x file
 * (no version), nodesets on all of them or on none; else -1 with what is wrong (and where). */
int jt_xml_check(const char *path, char *err, size_t errlen);

#endif
