; The replay's device code, in LLVM IR for the NVPTX backend. `scripts/replay-ptx.sh` turns it
; into replay.ptx (llc -march=nvptx64 -mcpu=sm_70), which the library embeds; the CUDA driver
; JIT-compiles that PTX for the GPU at hand. No CUDA toolkit is needed to build or to run.
;
; sa_replay_kernel: one node of the plan. Thread 0 of every block checks, when the block starts,
; that each dependency's completion flag holds this run's number (a dependency found unfinished
; is written to violations[kernel] as 1 + its index, first writer wins), spins on %globaltimer
; for duration_ns, then counts itself in arrivals[kernel]; the last block of the grid to arrive
; stamps the end time and publishes flags[kernel] = run. Block 0 stamps the start time.
; arrivals[] is never reset: after run r it holds r x grid, so the last block of run r is the
; one that brings it to r x grid.

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.membar.gl()

define ptx_kernel void @sa_replay_kernel(i32 addrspace(1)* %flags, i32 addrspace(1)* %deps,
    i32 addrspace(1)* %violations, i64 addrspace(1)* %times, i32 addrspace(1)* %arrivals,
    i32 %kernel, i32 %dep_begin, i32 %dep_count, i32 %run, i64 %duration_ns) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lead = icmp eq i32 %tid, 0
  br i1 %lead, label %work, label %exit

work:
  %t0 = call i64 asm sideeffect "mov.u64 $0, %globaltimer;", "=l"()
  %kidx = zext i32 %kernel to i64
  %sidx = shl i64 %kidx, 1
  %blk = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %first = icmp eq i32 %blk, 0
  br i1 %first, label %stamp, label %check

stamp:
  %sp = getelementptr i64, i64 addrspace(1)* %times, i64 %sidx
  store volatile i64 %t0, i64 addrspace(1)* %sp
  br label %check

check:
  %i = phi i32 [ 0, %work ], [ 0, %stamp ], [ %inext, %next ]
  %more = icmp ult i32 %i, %dep_count
  br i1 %more, label %body, label %spin

body:
  %di = add i32 %dep_begin, %i
  %di64 = zext i32 %di to i64
  %dp = getelementptr i32, i32 addrspace(1)* %deps, i64 %di64
  %d = load i32, i32 addrspace(1)* %dp
  %d64 = zext i32 %d to i64
  %fp = getelementptr i32, i32 addrspace(1)* %flags, i64 %d64
  %f = load volatile i32, i32 addrspace(1)* %fp
  %ok = icmp eq i32 %f, %run
  br i1 %ok, label %next, label %bad

bad:
  %vp = getelementptr i32, i32 addrspace(1)* %violations, i64 %kidx
  %d1 = add i32 %d, 1
  %x = cmpxchg i32 addrspace(1)* %vp, i32 0, i32 %d1 monotonic monotonic
  br label %next

next:
  %inext = add i32 %i, 1
  br label %check

spin:
  %t = call i64 asm sideeffect "mov.u64 $0, %globaltimer;", "=l"()
  %el = sub i64 %t, %t0
  %wait = icmp ult i64 %el, %duration_ns
  br i1 %wait, label %spin, label %done

done:
  call void @llvm.nvvm.membar.gl()
  %ap = getelementptr i32, i32 addrspace(1)* %arrivals, i64 %kidx
  %prev = atomicrmw add i32 addrspace(1)* %ap, i32 1 monotonic
  %grid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %target = mul i32 %grid, %run
  %arrived = add i32 %prev, 1
  %last = icmp eq i32 %arrived, %target
  br i1 %last, label %finish, label %exit

finish:
  %t1 = call i64 asm sideeffect "mov.u64 $0, %globaltimer;", "=l"()
  %eidx = add i64 %sidx, 1
  %ep = getelementptr i64, i64 addrspace(1)* %times, i64 %eidx
  store volatile i64 %t1, i64 addrspace(1)* %ep
  call void @llvm.nvvm.membar.gl()
  %fk = getelementptr i32, i32 addrspace(1)* %flags, i64 %kidx
  store volatile i32 %run, i32 addrspace(1)* %fk
  br label %exit

exit:
  ret void
}
