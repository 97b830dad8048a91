; Kiln's native parallel runtime (see NativePool.java). One loop runs at a time; a kernel that
; finds the pool busy runs its loop itself. Every global sits on its own cache line.

@kiln_rt_gen = internal global i32 0, align 64        ; bumped to publish a loop (workers' futex)
@kiln_rt_done = internal global i32 0, align 64       ; workers finished with the current loop (caller's futex)
@kiln_rt_tnext = internal global [4096 x i64] zeroinitializer, align 64 ; thread t's next iteration, at t * 8
@kiln_rt_tend = internal global [4096 x i64] zeroinitializer, align 64  ; the end of thread t's block, at t * 8
@kiln_rt_nthreads = internal global i64 1, align 64  ; threads of the current loop (the caller and the workers)
@kiln_rt_fn = internal global ptr null, align 64      ; the loop: fn(ctx, begin, end)
@kiln_rt_ctx = internal global ptr null, align 8
@kiln_rt_n = internal global i64 0, align 8
@kiln_rt_chunk = internal global i64 1, align 8
@kiln_rt_busy = internal global i32 0, align 64       ; 1 while a loop runs
@kiln_rt_workers = internal global i32 0, align 64    ; worker threads (the caller is one more)
@kiln_rt_threshold = internal global i64 0, align 8   ; less work than this runs serially
@kiln_rt_spin = internal global i32 0, align 8        ; polls before sleeping
@kiln_rt_cpt = internal global i64 1, align 8         ; chunks per thread
@kiln_rt_stopped = internal global i32 0, align 64
@kiln_rt_hold_count = internal global i32 0, align 64       ; > 0: waiting threads keep polling, never sleep
@kiln_rt_sleepers = internal global i32 0, align 64   ; workers in (or about to enter) the futex wait on gen
@kiln_rt_caller_sleeping = internal global i32 0, align 64 ; 1 while the caller is in the futex wait on done
@kiln_rt_sleep_count = internal global i64 0, align 64     ; futex waits so far, workers and callers (a diagnostic)

declare i64 @syscall(i64, ...) nounwind
declare void @llvm.x86.sse2.pause() nounwind

define internal void @kiln_rt_futex_wait(ptr %addr, i32 %val) nounwind {
  %r = call i64 (i64, ...) @syscall(i64 @SYS_FUTEX@, ptr %addr, i32 128, i32 %val, ptr null)
  ret void
}

define internal void @kiln_rt_futex_wake(ptr %addr, i32 %n) nounwind {
  %r = call i64 (i64, ...) @syscall(i64 @SYS_FUTEX@, ptr %addr, i32 129, i32 %n)
  ret void
}

define void @kiln_rt_configure(i32 %workers, i64 %threshold, i32 %spin, i64 %cpt) nounwind {
  store i64 %threshold, ptr @kiln_rt_threshold, align 8
  store i32 %spin, ptr @kiln_rt_spin, align 8
  store i64 %cpt, ptr @kiln_rt_cpt, align 8
  store atomic i32 %workers, ptr @kiln_rt_workers seq_cst, align 4
  ret void
}

; Runs thread %me's share of the published loop: its own block of iterations first (thread t owns
; [t*n/T, (t+1)*n/T), so consecutive loops over the same space give a thread the same part of it and the
; data it wrote stays in its core's caches), chunk by chunk, then whatever is left of the other threads'
; blocks (a late thread's chunks are taken by the others, so a descheduled worker does not stall the loop).
define internal void @kiln_rt_run_chunks(i64 %me) nounwind {
entry:
  %fn = load ptr, ptr @kiln_rt_fn, align 8
  %ctx = load ptr, ptr @kiln_rt_ctx, align 8
  %chunk = load i64, ptr @kiln_rt_chunk, align 8
  %t = load i64, ptr @kiln_rt_nthreads, align 8
  br label %victim
victim:
  %k = phi i64 [ 0, %entry ], [ %k1, %nextv ]
  %vk = add i64 %me, %k
  %v = urem i64 %vk, %t
  %x8 = shl i64 %v, 3
  %np = getelementptr [4096 x i64], ptr @kiln_rt_tnext, i64 0, i64 %x8
  %ep = getelementptr [4096 x i64], ptr @kiln_rt_tend, i64 0, i64 %x8
  %end = load i64, ptr %ep, align 8
  br label %take
take:
  %b = atomicrmw add ptr %np, i64 %chunk monotonic, align 8
  %more = icmp slt i64 %b, %end
  br i1 %more, label %run, label %nextv
run:
  %e0 = add i64 %b, %chunk
  %short = icmp slt i64 %e0, %end
  %e = select i1 %short, i64 %e0, i64 %end
  call void %fn(ptr %ctx, i64 %b, i64 %e)
  br label %take
nextv:
  %k1 = add i64 %k, 1
  %again = icmp ult i64 %k1, %t
  br i1 %again, label %victim, label %done
done:
  ret void
}

define void @kiln_rt_worker(i32 %id) nounwind {
entry:
  br label %top
top:
  %seen = phi i32 [ 0, %entry ], [ %g, %finish ]
  br label %poll
poll:
  %i = phi i32 [ 0, %top ], [ %i1, %pause ], [ 0, %held ], [ 0, %unsleep ]
  %g = load atomic i32, ptr @kiln_rt_gen acquire, align 4
  %changed = icmp ne i32 %g, %seen
  br i1 %changed, label %got, label %idle
idle:
  %i1 = add i32 %i, 1
  %spin = load i32, ptr @kiln_rt_spin, align 4
  %keep = icmp ult i32 %i1, %spin
  br i1 %keep, label %pause, label %maysleep
pause:
  call void @llvm.x86.sse2.pause()
  br label %poll
maysleep:
  %h = load atomic i32, ptr @kiln_rt_hold_count monotonic, align 4
  %holding = icmp ne i32 %h, 0
  br i1 %holding, label %held, label %sleep
held:
  call void @llvm.x86.sse2.pause()
  br label %poll
sleep:
  ; count ourselves as a sleeper before the last look at gen: a launcher that bumps gen then finds no
  ; sleeper skips the wake, and then this look sees its new gen (both sides seq_cst)
  %s0 = atomicrmw add ptr @kiln_rt_sleepers, i32 1 seq_cst, align 4
  %g2 = load atomic i32, ptr @kiln_rt_gen seq_cst, align 4
  %same = icmp eq i32 %g2, %seen
  br i1 %same, label %wait, label %unsleep
wait:
  %c0 = atomicrmw add ptr @kiln_rt_sleep_count, i64 1 monotonic, align 8
  call void @kiln_rt_futex_wait(ptr @kiln_rt_gen, i32 %seen)
  br label %unsleep
unsleep:
  %s1 = atomicrmw sub ptr @kiln_rt_sleepers, i32 1 seq_cst, align 4
  br label %poll
got:
  %stop = load atomic i32, ptr @kiln_rt_stopped acquire, align 4
  %stopping = icmp ne i32 %stop, 0
  br i1 %stopping, label %exit, label %work
work:
  %id64 = sext i32 %id to i64
  %me = add i64 %id64, 1
  call void @kiln_rt_run_chunks(i64 %me)
  %old = atomicrmw add ptr @kiln_rt_done, i32 1 seq_cst, align 4
  %new = add i32 %old, 1
  %nw = load atomic i32, ptr @kiln_rt_workers monotonic, align 4
  %last = icmp eq i32 %new, %nw
  br i1 %last, label %caller, label %finish
caller:
  %cs = load atomic i32, ptr @kiln_rt_caller_sleeping seq_cst, align 4
  %asleep = icmp ne i32 %cs, 0
  br i1 %asleep, label %wake, label %finish
wake:
  call void @kiln_rt_futex_wake(ptr @kiln_rt_done, i32 1)
  br label %finish
finish:
  br label %top
exit:
  ret void
}

; Runs fn(ctx, b, e) over [0, n) on the pool; returns 0.
define i32 @kiln_rt_native_parallel_for(ptr %fn, ptr %ctx, i64 %n, i64 %cost) nounwind {
entry:
  %pos = icmp sgt i64 %n, 0
  br i1 %pos, label %check, label %ret
check:
  %nw = load atomic i32, ptr @kiln_rt_workers monotonic, align 4
  %has = icmp sgt i32 %nw, 0
  %many = icmp sgt i64 %n, 1
  %thr = load i64, ptr @kiln_rt_threshold, align 8
  %per = udiv i64 %thr, %n
  %big = icmp uge i64 %cost, %per
  %ok1 = and i1 %has, %many
  %ok = and i1 %ok1, %big
  br i1 %ok, label %try, label %serial
serial:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  br label %ret
try:
  %cx = cmpxchg ptr @kiln_rt_busy, i32 0, i32 1 acquire monotonic, align 4
  %won = extractvalue { i32, i1 } %cx, 1
  br i1 %won, label %launch, label %serial
launch:
  %nw64 = sext i32 %nw to i64
  %threads = add i64 %nw64, 1
  %cpt = load i64, ptr @kiln_rt_cpt, align 8
  %pieces = mul i64 %threads, %cpt
  %p1 = add i64 %n, %pieces
  %p2 = sub i64 %p1, 1
  %chunk0 = udiv i64 %p2, %pieces
  %chunk = call i64 @llvm.umax.i64(i64 %chunk0, i64 1)
  store ptr %fn, ptr @kiln_rt_fn, align 8
  store ptr %ctx, ptr @kiln_rt_ctx, align 8
  store i64 %n, ptr @kiln_rt_n, align 8
  store i64 %chunk, ptr @kiln_rt_chunk, align 8
  store i64 %threads, ptr @kiln_rt_nthreads, align 8
  br label %blocks
blocks:
  %bt = phi i64 [ 0, %launch ], [ %bt1, %blocks ]
  %btn = mul i64 %bt, %n
  %bs = udiv i64 %btn, %threads
  %bt1 = add i64 %bt, 1
  %bt1n = mul i64 %bt1, %n
  %be = udiv i64 %bt1n, %threads
  %bx8 = shl i64 %bt, 3
  %bnp = getelementptr [4096 x i64], ptr @kiln_rt_tnext, i64 0, i64 %bx8
  %bep = getelementptr [4096 x i64], ptr @kiln_rt_tend, i64 0, i64 %bx8
  store atomic i64 %bs, ptr %bnp monotonic, align 8
  store i64 %be, ptr %bep, align 8
  %bmore = icmp ult i64 %bt1, %threads
  br i1 %bmore, label %blocks, label %published
published:
  store atomic i32 0, ptr @kiln_rt_done monotonic, align 4
  %gold = atomicrmw add ptr @kiln_rt_gen, i32 1 seq_cst, align 4
  %sl = load atomic i32, ptr @kiln_rt_sleepers seq_cst, align 4
  %anyone = icmp ne i32 %sl, 0
  br i1 %anyone, label %wakeall, label %go
wakeall:
  call void @kiln_rt_futex_wake(ptr @kiln_rt_gen, i32 2147483647)
  br label %go
go:
  call void @kiln_rt_run_chunks(i64 0)
  br label %wpoll
wpoll:
  %i = phi i32 [ 0, %go ], [ %i1, %wpause ], [ 0, %wheld ], [ 0, %wunsleep ]
  %d = load atomic i32, ptr @kiln_rt_done acquire, align 4
  %all = icmp eq i32 %d, %nw
  br i1 %all, label %finish, label %widle
widle:
  %i1 = add i32 %i, 1
  %spin = load i32, ptr @kiln_rt_spin, align 4
  %keep = icmp ult i32 %i1, %spin
  br i1 %keep, label %wpause, label %wmaysleep
wpause:
  call void @llvm.x86.sse2.pause()
  br label %wpoll
wmaysleep:
  %h = load atomic i32, ptr @kiln_rt_hold_count monotonic, align 4
  %holding = icmp ne i32 %h, 0
  br i1 %holding, label %wheld, label %wsleep
wheld:
  call void @llvm.x86.sse2.pause()
  br label %wpoll
wsleep:
  ; as the workers do: say so before the last look at done, so the last worker knows to wake us
  %x0 = atomicrmw xchg ptr @kiln_rt_caller_sleeping, i32 1 seq_cst, align 4
  %d2 = load atomic i32, ptr @kiln_rt_done seq_cst, align 4
  %all2 = icmp eq i32 %d2, %nw
  br i1 %all2, label %wunsleep, label %wwait
wwait:
  %c0 = atomicrmw add ptr @kiln_rt_sleep_count, i64 1 monotonic, align 8
  call void @kiln_rt_futex_wait(ptr @kiln_rt_done, i32 %d2)
  br label %wunsleep
wunsleep:
  %x1 = atomicrmw xchg ptr @kiln_rt_caller_sleeping, i32 0 seq_cst, align 4
  br label %wpoll
finish:
  store atomic i32 0, ptr @kiln_rt_busy release, align 4
  br label %ret
ret:
  ret i32 0
}

; Adds delta (+1 or -1) to the hold count. While it is above 0, waiting threads poll instead of sleeping;
; taking a hold wakes sleeping workers, so they poll by the time the first loop comes.
define void @kiln_rt_hold(i32 %delta) nounwind {
entry:
  %old = atomicrmw add ptr @kiln_rt_hold_count, i32 %delta seq_cst, align 4
  %up = icmp sgt i32 %delta, 0
  %sl = load atomic i32, ptr @kiln_rt_sleepers seq_cst, align 4
  %anyone = icmp ne i32 %sl, 0
  %wake = and i1 %up, %anyone
  br i1 %wake, label %w, label %done
w:
  call void @kiln_rt_futex_wake(ptr @kiln_rt_gen, i32 2147483647)
  br label %done
done:
  ret void
}

; The futex waits of workers and callers so far.
define i64 @kiln_rt_sleeps() nounwind {
  %n = load atomic i64, ptr @kiln_rt_sleep_count monotonic, align 8
  ret i64 %n
}

define void @kiln_rt_stop() nounwind {
  store atomic i32 1, ptr @kiln_rt_stopped seq_cst, align 4
  %g = atomicrmw add ptr @kiln_rt_gen, i32 1 seq_cst, align 4
  call void @kiln_rt_futex_wake(ptr @kiln_rt_gen, i32 2147483647)
  ret void
}

declare i64 @llvm.umax.i64(i64, i64)

; The workspace cache: kernels' heap temporaries (StmtGen's allocations above the stack limit) come
; from kiln_rt_alloc and go back to kiln_rt_free, which keeps up to 64 blocks mapped for the next
; call instead of handing them to free(). A temporary freed at the end of one call is then reused by
; the next without page faults, whatever glibc's heuristics would do with it (map it afresh above its
; mmap threshold, trim it off the top of a heap, delete a thread arena's emptied heap). Each slot is
; guarded by its state: 0 empty, 1 being changed by one thread (taken with cmpxchg, never waited
; for), 2 holding a block of kiln_rt_ws_size bytes. A request takes a block of exactly its size
; (a kernel's temporaries have constant sizes, so its next call asks for the same ones). Slot i's
; state, size and pointer each sit on their own cache line (index i * 16 or i * 8), so threads that
; take and give back blocks in parallel loop bodies do not invalidate each other's slots, and the
; search starts at a slot picked by the size, where blocks of that size were given back.
@kiln_rt_ws_state = internal global [1024 x i32] zeroinitializer, align 64
@kiln_rt_ws_size = internal global [512 x i64] zeroinitializer, align 64
@kiln_rt_ws_ptr = internal global [512 x ptr] zeroinitializer, align 64
@kiln_rt_ws_fresh = internal global i64 0, align 64        ; blocks allocated with aligned_alloc (a diagnostic)

declare ptr @aligned_alloc(i64, i64) nounwind
declare void @free(ptr) nounwind

; A 64-byte aligned block of %size bytes (a multiple of 64): a cached one of that size, else a new one (null when
; the system has no memory left).
define ptr @kiln_rt_alloc(i64 %size) nounwind {
entry:
  %start = lshr i64 %size, 6
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %si = add i64 %start, %i
  %slot = and i64 %si, 63
  %x16 = shl i64 %slot, 4
  %x8 = shl i64 %slot, 3
  %sp = getelementptr [1024 x i32], ptr @kiln_rt_ws_state, i64 0, i64 %x16
  %zp = getelementptr [512 x i64], ptr @kiln_rt_ws_size, i64 0, i64 %x8
  %st = load atomic i32, ptr %sp monotonic, align 4
  %full = icmp eq i32 %st, 2
  br i1 %full, label %peek, label %next
peek:
  %z0 = load atomic i64, ptr %zp monotonic, align 8
  %same0 = icmp eq i64 %z0, %size
  br i1 %same0, label %try, label %next
try:
  %cx = cmpxchg ptr %sp, i32 2, i32 1 acquire monotonic, align 4
  %won = extractvalue { i32, i1 } %cx, 1
  br i1 %won, label %locked, label %next
locked:
  %z = load atomic i64, ptr %zp monotonic, align 8
  %same = icmp eq i64 %z, %size
  br i1 %same, label %take, label %unlock
take:
  %pp = getelementptr [512 x ptr], ptr @kiln_rt_ws_ptr, i64 0, i64 %x8
  %p = load ptr, ptr %pp, align 8
  store atomic i32 0, ptr %sp release, align 4
  ret ptr %p
unlock:
  store atomic i32 2, ptr %sp release, align 4
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 64
  br i1 %more, label %loop, label %fresh
fresh:
  %c = atomicrmw add ptr @kiln_rt_ws_fresh, i64 1 monotonic, align 8
  %q = call ptr @aligned_alloc(i64 64, i64 %size)
  ret ptr %q
}

; Gives back a block of kiln_rt_alloc: kept in an empty slot for the next request of its size, or freed when
; every slot holds one.
define void @kiln_rt_free(ptr %p, i64 %size) nounwind {
entry:
  %start = lshr i64 %size, 6
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %si = add i64 %start, %i
  %slot = and i64 %si, 63
  %x16 = shl i64 %slot, 4
  %x8 = shl i64 %slot, 3
  %sp = getelementptr [1024 x i32], ptr @kiln_rt_ws_state, i64 0, i64 %x16
  %st = load atomic i32, ptr %sp monotonic, align 4
  %empty = icmp eq i32 %st, 0
  br i1 %empty, label %try, label %next
try:
  %cx = cmpxchg ptr %sp, i32 0, i32 1 acquire monotonic, align 4
  %won = extractvalue { i32, i1 } %cx, 1
  br i1 %won, label %keep, label %next
keep:
  %pp = getelementptr [512 x ptr], ptr @kiln_rt_ws_ptr, i64 0, i64 %x8
  %zp = getelementptr [512 x i64], ptr @kiln_rt_ws_size, i64 0, i64 %x8
  store ptr %p, ptr %pp, align 8
  store atomic i64 %size, ptr %zp monotonic, align 8
  store atomic i32 2, ptr %sp release, align 4
  ret void
next:
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 64
  br i1 %more, label %loop, label %drop
drop:
  call void @free(ptr %p)
  ret void
}

; How many blocks kiln_rt_alloc has taken from aligned_alloc so far (cache misses).
define i64 @kiln_rt_ws_fresh_count() nounwind {
  %n = load atomic i64, ptr @kiln_rt_ws_fresh monotonic, align 8
  ret i64 %n
}

declare void @llvm.x86.sse2.clflush(ptr) nounwind
declare void @llvm.x86.sse2.mfence() nounwind

; Evicts [%p, %p + %bytes) from every core's caches (one clflush per 64-byte line, then a fence), as data that no
; kernel touched since an earlier run of a network would be: the tuner's cache flush (TVM's CPU cache flush).
define void @kiln_rt_evict(ptr %p, i64 %bytes) nounwind {
entry:
  %none = icmp eq i64 %bytes, 0
  br i1 %none, label %done, label %loop
loop:
  %off = phi i64 [ 0, %entry ], [ %next, %loop ]
  %line = getelementptr i8, ptr %p, i64 %off
  call void @llvm.x86.sse2.clflush(ptr %line)
  %next = add i64 %off, 64
  %more = icmp ult i64 %next, %bytes
  br i1 %more, label %loop, label %fence
fence:
  call void @llvm.x86.sse2.mfence()
  br label %done
done:
  ret void
}

; Evicts from every core's caches the blocks of exactly %size bytes that the workspace cache holds: the blocks a
; kernel's heap temporaries of that size get on its next call. In a network the blocks a kernel last used were
; pushed out of the caches by the kernels between its calls; the tuner's cache flush evicts them with the
; arguments, so that a program with a large temporary (a padded copy of its input, a packed operand) is timed
; as the network runs it, not with its temporary warm from the previous repeat. A slot is taken as kiln_rt_alloc
; takes it (never waited for: a block in use is skipped), so this is safe while other threads run kernels.
; Returns how many blocks it evicted.
define i64 @kiln_rt_ws_evict(i64 %size) nounwind {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %n = phi i64 [ 0, %entry ], [ %n1, %next ]
  %x16 = shl i64 %i, 4
  %x8 = shl i64 %i, 3
  %sp = getelementptr [1024 x i32], ptr @kiln_rt_ws_state, i64 0, i64 %x16
  %zp = getelementptr [512 x i64], ptr @kiln_rt_ws_size, i64 0, i64 %x8
  %st = load atomic i32, ptr %sp monotonic, align 4
  %full = icmp eq i32 %st, 2
  br i1 %full, label %peek, label %skip
peek:
  %z0 = load atomic i64, ptr %zp monotonic, align 8
  %same0 = icmp eq i64 %z0, %size
  br i1 %same0, label %try, label %skip
try:
  %cx = cmpxchg ptr %sp, i32 2, i32 1 acquire monotonic, align 4
  %won = extractvalue { i32, i1 } %cx, 1
  br i1 %won, label %locked, label %skip
locked:
  %z = load atomic i64, ptr %zp monotonic, align 8
  %same = icmp eq i64 %z, %size
  br i1 %same, label %flush, label %unlock
flush:
  %pp = getelementptr [512 x ptr], ptr @kiln_rt_ws_ptr, i64 0, i64 %x8
  %p = load ptr, ptr %pp, align 8
  call void @kiln_rt_evict(ptr %p, i64 %size)
  store atomic i32 2, ptr %sp release, align 4
  br label %next
unlock:
  store atomic i32 2, ptr %sp release, align 4
  br label %skip
skip:
  br label %next
next:
  %got = phi i64 [ 1, %flush ], [ 0, %skip ]
  %n1 = add i64 %n, %got
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 64
  br i1 %more, label %loop, label %done
done:
  ret i64 %n1
}
