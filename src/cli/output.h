#pragma once
// Writes command output to stdout or, with -o PATH, to PATH the way a shell's
// `>` would, but safely:
//  - a regular file (new or existing) is replaced atomically: the text goes to
//    a temporary created with O_EXCL beside it, then is renamed over it, so a
//    failed run leaves the old file whole and nothing else behind; an existing
//    file keeps its mode and (as root) its owner and group;
//  - a symlink is followed: its target is written, the link stays a link;
//  - anything else (a character device such as /dev/null, a FIFO, a socket, a
//    terminal) is written in place, never replaced;
//  - /dev/stdout, /dev/stderr and /dev/fd/N write to that descriptor.
// Single-threaded (the CLI's own use).

#include <string>

#include "base/result.h"

namespace gpufleet::cli {

// Text output is made valid UTF-8 on the way out (bytes that are not become "\xNN": names come
// from files other people wrote); `binary` content (an archive) is written as it is.
Status WriteOutput(const std::string& path, const std::string& text, bool binary = false);
// Reads a whole input file: kNotFound if missing, kInvalidArgument for a directory.
Status ReadText(const std::string& path, std::string* text);

}  // namespace gpufleet::cli
