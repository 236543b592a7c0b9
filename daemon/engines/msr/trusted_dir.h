/*
 * The state file's directory, reached without trusting anything on the
 * way: the path is walked from "/" one component at a time with openat
 * and O_NOFOLLOW, so a symbolic link anywhere is refused rather than
 * followed, and every directory on the way is checked.  A directory
 * another user could replace or fill would let that user truncate root's
 * file or have it unlinked at the stop.
 */
#ifndef UNCORED_TRUSTED_DIR_H
#define UNCORED_TRUSTED_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * Why st may not be trusted as the state file (is_dir false) or its
 * directory (is_dir true), or NULL when it may: of the right type, owned
 * by root (or by the user uncored runs as: a test tree run as a normal
 * user), and not writable by group or others.
 */
const char *trusted_dir_why(const struct stat *st, bool is_dir);

/*
 * Open the directory dir (an absolute path) by walking it from "/" with
 * openat and O_NOFOLLOW.  A symbolic link anywhere is refused.  dir itself
 * must pass trusted_dir_why; each directory above it too, except that one
 * owned by root and sticky (as /tmp) may be writable by others, since they
 * cannot rename or remove what root owns in it.  Returns the descriptor
 * (O_PATH | O_DIRECTORY | O_CLOEXEC: a directory to open files in, needing
 * no read permission on it), or a negative errno with a
 * sentence in err: -EPERM for anything not trusted, else the failing
 * call's error (-ENOENT for a missing component).
 */
int trusted_dir_open(const char *dir, char *err, size_t errlen);

#endif
