/*
 * Checkpoint container: a versioned binary file of tagged sections with a
 * checksum, written atomically. The trainer decides what the sections hold.
 *
 * File layout (all integers little-endian):
 *   magic      8 bytes  "LIPGNNCK"
 *   version    u32      LG_CKPT_VERSION
 *   count      u32      number of sections
 *   sections   count x { tag u32, reserved u32 (0), length u64, bytes[length] }
 *   checksum   u64      FNV-1a 64 of every byte before it
 *
 * A save writes "<path>.tmp.<pid>", flushes it to disk (fsync) and renames it
 * over path, so a save interrupted at any point never leaves a damaged file
 * under the target name.
 */
#ifndef LG_TRAIN_CHECKPOINT_H
#define LG_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "lipgnn.h"

#define LG_CKPT_VERSION 1u

/* One section: a tag the trainer chooses and its bytes. */
typedef struct lg_ckpt_section {
    uint32_t tag;      /* what the bytes are (trainer-defined)            */
    uint64_t length;   /* number of bytes                                 */
    const void *data;  /* the bytes (borrowed when saving; owned by the
                          lg_ckpt when loaded)                            */
} lg_ckpt_section;

/* A checkpoint read from a file: sections own their bytes. */
typedef struct lg_ckpt {
    uint32_t version;         /* format version of the file                */
    uint32_t count;           /* sections                                  */
    lg_ckpt_section *sections;
    unsigned char *blob;      /* the whole file; sections point into it   */
} lg_ckpt;

/* The file a save to path writes, in *file: path, or, for a symbolic link,
 * the file it names (written into real, PATH_MAX bytes; one level when that
 * file is not made yet), since the save renames a new file onto its target
 * and renaming onto the link would replace the link. LG_EIO naming path when
 * what is there is not a regular file (a directory, pipe or device: as root,
 * a rename onto /dev/null made it a regular file) or its directory takes no
 * new file (missing, not writable). */
lg_status lg__ckpt_target(const char *path, char *real, const char **file);

/* Writes count sections to path atomically (see above): into a new file
 * beside its target (lg__ckpt_target, checked first: path is left as it is
 * when refused), synced and renamed onto it. If fail_after_bytes is not
 * negative, the write stops after that many bytes as if the process had died
 * (tests), returning LG_EIO and leaving only the temporary file. */
lg_status lg__ckpt_save(const char *path, const lg_ckpt_section *sections, uint32_t count,
                        long long fail_after_bytes);

/* Reads and verifies path: magic, version, sizes against the file length,
 * checksum. Truncated, bit-flipped, wrong-version and non-checkpoint files are
 * LG_EPARSE with a message naming the file and the defect. */
lg_status lg__ckpt_load(lg_ckpt **out, const char *path);

/* The first section with this tag, or NULL. */
const lg_ckpt_section *lg__ckpt_find(const lg_ckpt *c, uint32_t tag);

/* Frees c; NULL is a no-op. */
void lg__ckpt_free(lg_ckpt *c);

/* FNV-1a 64 of n bytes, continuing from h (start with LG_FNV_START). */
#define LG_FNV_START 0xcbf29ce484222325ULL
uint64_t lg__fnv1a(uint64_t h, const void *data, size_t n);

#endif
