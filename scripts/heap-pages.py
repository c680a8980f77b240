#!/usr/bin/env python3
"""Usage: scripts/heap-pages.py PID

Where a process's resident heap pages are held (docs/PERFORMANCE.md, "What
a load leaves behind"). Walks the chunks of every glibc arena of PID (the
main heap and each thread arena), reads which pages are resident
(/proc/PID/pagemap, read before the memory so that reading it maps no
page), and prints per arena the resident kB, the bytes of chunks marked in
use on those pages, and how many resident pages hold less than 1 KiB in
use; then the sizes of the chunks found on such pages, with the first bytes
of two of each, which tell what they are (a string, an Arc's counts, or
glibc's per-thread cache key at offset 8 of a cached free chunk).

Stop the process first (kill -STOP PID; kill -CONT PID after) and run as
root. The layout is glibc 2.36's on x86_64 (Debian 12): a thread arena's
first heap starts with a 48-byte heap_info and the 2,200-byte arena state.
"""
import collections
import struct
import sys

PAGE = 4096
HEAP_MAX = 64 << 20
HEAP_INFO = 0x30
# The first chunk of an arena's first heap: heap_info, the arena's state,
# aligned so that the chunk's memory is 16-byte aligned.
FIRST_CHUNK = 0x8D0


def heaps(pid, read):
    """(name, start, end, first chunk) of the main heap and each arena heap."""
    found = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) > 5 else ""
            if name == "[heap]":
                found.append(("main", start, end, start))
            elif not name and fields[1] == "rw-p" and start % HEAP_MAX == 0:
                arena = struct.unpack("<Q", read(start, 8))[0]
                first = start + (FIRST_CHUNK if arena == start + HEAP_INFO else HEAP_INFO)
                found.append((f"arena@{start:x}", start, end, first))
    return found


def chunks_in_use(data, offset):
    """(offset, size) of each chunk marked in use, walking from `offset`;
    the top chunk and free chunks in the bins are left out (free chunks in a
    thread's cache or a fast bin are marked in use, and counted)."""
    while offset + 16 <= len(data):
        size = struct.unpack_from("<Q", data, offset + 8)[0] & ~7
        after = offset + size
        if size < 16 or after + 16 > len(data):
            return
        if struct.unpack_from("<Q", data, after + 8)[0] & 1:
            yield offset, size
        offset = after


def main():
    pid = int(sys.argv[1])
    with open(f"/proc/{pid}/mem", "rb") as mem, open(f"/proc/{pid}/pagemap", "rb") as pagemap:

        def read(address, length):
            mem.seek(address)
            return mem.read(length)

        def resident(page):
            pagemap.seek(page * 8)
            return struct.unpack("<Q", pagemap.read(8))[0] >> 63 & 1 == 1

        sparse_sizes = collections.Counter()
        samples = collections.defaultdict(list)
        total_resident = total_used = 0
        for name, start, end, first in heaps(pid, read):
            pages = [p for p in range(start // PAGE, (end + PAGE - 1) // PAGE) if resident(p)]
            data = read(start, end - start)
            used = collections.Counter()
            chunks = list(chunks_in_use(data, first - start))
            for offset, size in chunks:
                at = offset
                while at < offset + size:
                    page = (start + at) // PAGE
                    upto = min(offset + size, (page + 1) * PAGE - start)
                    used[page] += upto - at
                    at = upto
            sparse = {p for p in pages if used[p] < 1024}
            in_use = sum(used[p] for p in pages)
            total_resident += len(pages)
            total_used += in_use
            print(
                f"{name:22} resident {len(pages) * 4:6} kB  in use on them {in_use // 1024:6} kB  "
                f"chunks {len(chunks):6}  pages with < 1 KiB in use {len(sparse):5}"
            )
            for offset, size in chunks:
                if (start + offset + 16) // PAGE in sparse:
                    sparse_sizes[size] += 1
                    if len(samples[size]) < 2:
                        samples[size].append(data[offset + 16 : offset + 16 + min(size - 16, 40)])
        print(f"total resident {total_resident * 4} kB, in use on them {total_used // 1024} kB")
        print("chunks on pages with < 1 KiB in use, by size:")
        for size, count in sparse_sizes.most_common(25):
            print(f"{count:6} x {size:5}  " + " | ".join(repr(s) for s in samples[size]))


if __name__ == "__main__":
    main()
