"""The pluggable-allocator entry points loaded the way PyTorch, torch_npu and MindSpore load them:
dlopen the library (ctypes.CDLL), look each name up, take its address and call it through a
function pointer of the framework's type. The device runtime is the fake Ascend runtime, loaded
RTLD_GLOBAL first so the library finds it in the process scope.

Usage: python3 pluggable_ctypes.py LIBSTREAM_ALLOC.so LIBFAKE_ASCEND_RT.so
Checks same-stream reuse, record_stream across streams (reuse only after the event completes,
no host wait), size 0, out of memory after one retry, foreign and double frees refused and
counted, the statistics under torch's names, and an 8-thread stress with no device byte left
after reset. Prints "pluggable ctypes: ok"."""

import ctypes
import json
import sys
import threading

lib_path, fake_path = sys.argv[1], sys.argv[2]
fake = ctypes.CDLL(fake_path, mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(lib_path)

# The frameworks' signatures (torch/csrc/cuda/CUDAPluggableAllocator.h, torch_npu's
# NPUPluggableAllocator.h): what torch does with the names it is given.
ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p)
INIT = ctypes.CFUNCTYPE(None, ctypes.c_int)
RESET = ctypes.CFUNCTYPE(None)
FRACTION = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.c_int)
BASE_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t))
RECORD_STREAM = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def fn(name, kind):
    """The address of `name`, as torch reads it, called through a pointer of type `kind`."""
    address = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    assert address, name
    return kind(address)


alloc = fn("sa_pluggable_malloc", ALLOC)
free = fn("sa_pluggable_free", FREE)
init = fn("sa_pluggable_init", INIT)
reset = fn("sa_pluggable_reset", RESET)
fraction = fn("sa_pluggable_memory_fraction", FRACTION)
base_alloc = fn("sa_pluggable_base_alloc", BASE_ALLOC)
record_stream = fn("sa_pluggable_record_stream", RECORD_STREAM)

lib.sa_last_error_message.restype = ctypes.c_char_p
lib.sa_pluggable_stats_json.restype = ctypes.c_void_p
lib.sa_pluggable_stats_json.argtypes = [ctypes.c_int]
lib.sa_string_free.argtypes = [ctypes.c_void_p]
fake.fake_rt_mem_bytes.restype = ctypes.c_uint64
fake.fake_rt_event_syncs.restype = ctypes.c_uint64
fake.fake_rt_set_mem_capacity.argtypes = [ctypes.c_uint64]


def last_error():
    return lib.sa_last_error_message().decode()


def stats(device=0):
    """torch's memory_stats() for the device, through the library's JSON."""
    p = lib.sa_pluggable_stats_json(device)
    assert p, last_error()
    text = ctypes.string_at(p).decode()
    lib.sa_string_free(p)
    return json.loads(text)


def new_stream():
    s = ctypes.c_void_p()
    assert fake.rtStreamCreateWithFlags(ctypes.byref(s), 0, 0) == 0
    return s.value


init(1)
s0, s1 = new_stream(), new_stream()

# Same stream: the freed block comes back without a device call.
p = alloc(1000, 0, s0)
assert p, last_error()
before = stats()
free(p, 1000, 0, s0)
assert alloc(900, 0, s0) == p
assert stats()["num_device_alloc"] == before["num_device_alloc"]
size = ctypes.c_size_t()
assert base_alloc(p + 10, ctypes.byref(size)) == p and size.value == 1024

# Another stream used it: not reused until its event completes; found by a query.
syncs = fake.fake_rt_event_syncs()
record_stream(p, s1)
free(p, 1000, 0, s0)
q = alloc(1000, 0, s0)
assert q and q != p
fake.fake_rt_complete_all()
assert alloc(1000, 0, s0) == p
assert fake.fake_rt_event_syncs() == syncs, "the host waited"
free(p, 1000, 0, s0)
free(q, 1000, 0, s0)

# Size 0, foreign and double frees.
assert alloc(0, 0, s0) is None
free(None, 0, 0, s0)
buf = ctypes.create_string_buffer(64)
free(ctypes.addressof(buf), 64, 0, s0)
assert "never gave" in last_error(), last_error()
free(q, 1000, 0, s0)
assert "double free" in last_error(), last_error()
st = stats()
assert st["num_foreign_frees"] == 1 and st["num_double_frees"] == 1, st

# Out of memory: the cache is emptied and the allocation retried once, then NULL.
reset()
assert fake.fake_rt_mem_bytes() == 0
fake.fake_rt_set_mem_capacity(1 << 20)
a = alloc(600 << 10, 0, s0)
free(a, 600 << 10, 0, s0)
b = alloc(900 << 10, 0, s0)  # needs the cached 600 KiB back
assert b, last_error()
assert alloc(900 << 10, 0, s0) is None
assert "cannot allocate 921600 bytes" in last_error(), last_error()
st = stats()
assert st["num_alloc_retries"] == 2 and st["num_ooms"] == 1, st
free(b, 900 << 10, 0, s0)
fake.fake_rt_set_mem_capacity(2**64 - 1)

# Eight threads, eight streams, record_stream onto the neighbour's stream.
streams = [new_stream() for _ in range(8)]
failures = []


def worker(i):
    mine, other = streams[i], streams[(i + 1) % 8]
    live = []
    seed = 7 + i
    for r in range(1500):
        seed = (seed * 1103515245 + 12345) % 2**31
        if live and seed % 3 == 0:
            free(live.pop(seed % len(live)), 0, 0, mine)
        else:
            ptr = alloc(1 + seed % 200000, 0, mine)
            if not ptr:
                failures.append(last_error())
                continue
            if seed % 5 == 0:
                record_stream(ptr, other)
            live.append(ptr)
        if r % 101 == 0:
            fake.fake_rt_complete_all()
    for ptr in live:
        free(ptr, 0, 0, mine)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not failures, failures[:3]
st = stats()
assert st["allocated_bytes.all.current"] == 0 and st["allocation.all.current"] == 0, st
assert st["allocation.all.allocated"] == st["allocation.all.freed"], st
fake.fake_rt_complete_all()
reset()
st = stats()
assert st["reserved_bytes.all.current"] == 0, st
assert fake.fake_rt_mem_bytes() == 0, "device bytes left after reset"
print(f"stress: {st['allocation.all.allocated']} allocations, {st['num_device_alloc']} device allocations, "
      f"peak {st['allocated_bytes.all.peak']} allocated, {st['reserved_bytes.all.peak']} reserved")
print("pluggable ctypes: ok")
