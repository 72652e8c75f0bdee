#ifndef DUMPKIT_CARCHIVE_SHIM_H
#define DUMPKIT_CARCHIVE_SHIM_H

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <zlib.h>

/// File-type constants are cast macros that Swift cannot import; re-export them as plain values.
static const unsigned int dk_AE_IFMT = AE_IFMT;
static const unsigned int dk_AE_IFREG = AE_IFREG;
static const unsigned int dk_AE_IFDIR = AE_IFDIR;
static const unsigned int dk_AE_IFLNK = AE_IFLNK;
static const unsigned int dk_AE_IFCHR = AE_IFCHR;
static const unsigned int dk_AE_IFBLK = AE_IFBLK;
static const unsigned int dk_AE_IFIFO = AE_IFIFO;
static const unsigned int dk_AE_IFSOCK = AE_IFSOCK;

/// zlib's init functions are macros that pass the library version and the stream size; Swift cannot
/// import function-like macros, so this re-exports inflateInit2 as a function.
static inline int dk_inflateInit2(z_stream *strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

/// `futimens` marker for "leave this time as it is"; an expression macro Swift does not import.
static const long dk_UTIME_OMIT = UTIME_OMIT;

#endif
