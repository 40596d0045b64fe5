import Foundation
import Scenarios

/// Runs the app's `async` delegate methods to completion on the simulator's thread, so that a
/// delegate written for `CKSyncEngine` keeps its `async` signatures: every job of the call is
/// enqueued here and run at once, in order, and nothing of the simulation interleaves with it.
///
/// A call that waits on something outside the simulator (an actor of its own, the main actor,
/// a real timer) cannot finish here: ``run(_:)`` throws ``Suspended`` instead of hanging.
///
/// Calls are made on one task, kept between calls (the *worker*: it waits for the next call on
/// a continuation), not on a new task each: making and destroying a task, and copying its task
/// locals, cost more than most calls into an app do. A call made while another is running (the
/// app's code calling back into the simulator, which calls the app) gets a task of its own, as
/// does every call after one that suspended elsewhere took the worker with it. The worker ends
/// when its runner is released.
///
/// A call can run another within it on the same executor (``runWithinCurrentCall(_:)``: the
/// app's code running its own `async` code from a synchronous place, `SimDevice.runToCompletion`):
/// the executor whose jobs this thread runs now is kept in a thread-local while it runs them.
final class InlineRunner: Sendable {
  /// The delegate's call suspended on work the simulator does not run.
  struct Suspended: Error, CustomStringConvertible {
    var description: String {
      "the delegate's call waited on something outside the simulator (an actor, the main actor, a timer): delegate code must only await the engine and its own async functions"
    }
  }

  private let executor = InlineExecutor()
  /// The meter bound where the runner was made (read once: a task-local is looked up on every
  /// read). Runners are made with the run that uses them.
  private let meter = AppCostMeter.current

  deinit { executor.stopWorker() }

  /// Whether this thread is making a call into the app now, on any runner.
  static var callUnderWay: Bool { InlineExecutor.current != nil }

  /// Runs `body` to its end as a call within the call this thread is making now (the app's
  /// launch, an intent, a read of what it shows, a delegate call: ``callUnderWay`` must hold),
  /// on that call's executor. When `body` does not finish, this throws, and so does the call it
  /// ran within once it returns — whether or not the app's code caught the error — so the run
  /// fails with the sentence of a call that waited elsewhere itself.
  static func runWithinCurrentCall<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(Suspended) -> T {
    guard let current = InlineExecutor.current else { preconditionFailure("no call into the app is under way on this thread") }
    return try current.runWithin(body)
  }

  /// Runs `body` as a task on this runner's executor until it has nothing left to run; returns
  /// its result, or throws when it did not finish. With an ``AppCostMeter`` bound, the call is
  /// timed as the app's (`delegateCall`: a call into the engine's delegate).
  func run<T: Sendable>(delegateCall: Bool = false, _ body: @escaping @Sendable () async -> T) throws(Suspended) -> T {
    guard let meter else { return try executor.run(body) }
    meter.appCalls += 1
    if delegateCall { meter.delegateCalls += 1 }
    guard meter.depth == 0 else { return try executor.run(body) }
    meter.depth = 1
    defer { meter.depth = 0 }
    // Timed inside the task: handing it over and running its jobs is the simulator's work.
    return try executor.run {
      let start = DispatchTime.now().uptimeNanoseconds
      let result = await body()
      meter.appNanoseconds &+= DispatchTime.now().uptimeNanoseconds &- start
      return result
    }
  }
}

/// The executor behind an ``InlineRunner``: its queue of jobs, run on the simulator's thread,
/// and the worker task that makes the calls.
private final class InlineExecutor: TaskExecutor, @unchecked Sendable {
  typealias Call = @Sendable () async -> Void

  @exclusivity(unchecked) private var jobs: [UnownedJob] = []
  @exclusivity(unchecked) private var head = 0
  /// The worker, waiting for its next call (nil while it runs one, before it is made, and after
  /// a call it ran suspended elsewhere).
  @exclusivity(unchecked) private var parked: UnsafeContinuation<Call?, Never>?
  /// Whether the worker was ever made; whether a call is running on it now.
  @exclusivity(unchecked) private var started = false
  @exclusivity(unchecked) private var busy = false
  /// A call that suspended elsewhere comes back from another thread (the queue and the parked
  /// worker are guarded).
  private let lock = Lock()
  /// How many calls on this executor are under way, one within another (1: the outermost).
  @exclusivity(unchecked) private var depth = 0
  /// A call run within another (``runWithin(_:)``) did not finish: every call it ran within
  /// fails too, up to the outermost, which clears this.
  @exclusivity(unchecked) private var innerCallSuspended = false

  /// The executor whose jobs this thread is running now (the innermost), or nil.
  static var current: InlineExecutor? {
    pthread_getspecific(currentExecutorKey).map { Unmanaged<InlineExecutor>.fromOpaque($0).takeUnretainedValue() }
  }

  func enqueue(_ job: UnownedJob) { lock.withLock { jobs.append(job) } }

  private func next() -> UnownedJob? {
    lock.withLock {
      guard head < jobs.count else {
        jobs.removeAll(keepingCapacity: true)
        head = 0
        return nil
      }
      head += 1
      return jobs[head - 1]
    }
  }

  private func drain() {
    while let job = next() { job.runSynchronously(on: asUnownedTaskExecutor()) }
  }

  func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(InlineRunner.Suspended) -> T {
    // This thread runs this executor's jobs until the call returns (and then the outer one's).
    let outer = pthread_getspecific(currentExecutorKey)
    pthread_setspecific(currentExecutorKey, Unmanaged.passUnretained(self).toOpaque())
    depth += 1
    if depth == 1 { innerCallSuspended = false }
    defer {
      depth -= 1
      pthread_setspecific(currentExecutorKey, outer)
    }
    return try call(body)
  }

  /// Runs `body` as a task of its own within the call under way on this thread (one of this
  /// executor's: ``current``), to its end. When it does not finish, the call it ran within
  /// fails too (``innerCallSuspended``).
  func runWithin<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(InlineRunner.Suspended) -> T {
    nonisolated(unsafe) var result: T? = nil
    Task(executorPreference: self) { result = await body() }
    drain()
    guard let value = result else {
      innerCallSuspended = true
      throw InlineRunner.Suspended()
    }
    return value
  }

  /// Whether a call within the call that is returning now did not finish (the outermost call
  /// clears the mark).
  private func failedWithin() -> Bool {
    guard innerCallSuspended else { return false }
    if depth == 1 { innerCallSuspended = false }
    return true
  }

  private func call<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(InlineRunner.Suspended) -> T {
    // (The result goes in a captured variable, boxed where the call's type is known: a generic
    // class holding it looked up the metadata of `T?` at run time each time one was freed.)
    nonisolated(unsafe) var result: T? = nil
    if !busy {
      if !started {
        started = true
        Task(executorPreference: self) { await self.work() }
        drain()  // the worker runs up to its first wait
      }
      if let worker = lock.withLock({ () -> UnsafeContinuation<Call?, Never>? in
        defer { parked = nil }
        return parked
      }) {
        busy = true
        defer { busy = false }
        worker.resume(returning: { result = await body() })
        drain()
        guard let value = result, !failedWithin() else { throw InlineRunner.Suspended() }
        return value
      }
    }
    // A call within a call, or the worker is gone: a task of its own.
    Task(executorPreference: self) { result = await body() }
    drain()
    guard let value = result, !failedWithin() else { throw InlineRunner.Suspended() }
    return value
  }

  /// The worker: waits for a call, makes it, and waits again, until it is handed nil.
  private func work() async {
    while let call = await withUnsafeContinuation({ (c: UnsafeContinuation<Call?, Never>) in park(c) }) {
      await call()
    }
  }

  private func park(_ worker: UnsafeContinuation<Call?, Never>) {
    // (A worker that comes back from elsewhere after another was parked ends.)
    let keep = lock.withLock { () -> Bool in
      guard parked == nil else { return false }
      parked = worker
      return true
    }
    if !keep { worker.resume(returning: nil) }
  }

  /// Ends the parked worker (run when the runner is released; its last job is run here).
  func stopWorker() {
    guard
      let worker = lock.withLock({ () -> UnsafeContinuation<Call?, Never>? in
        defer { parked = nil }
        return parked
      })
    else { return }
    worker.resume(returning: nil)
    drain()
  }
}

/// The thread-local slot of ``InlineExecutor/current``.
private let currentExecutorKey: pthread_key_t = {
  var key = pthread_key_t()
  pthread_key_create(&key, nil)
  return key
}()

/// A mutex (pthread's, held by a class so that it never moves): cheaper than `NSLock`, which
/// goes through Foundation's classes on every call.
private final class Lock: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

  init() { pthread_mutex_init(mutex, nil) }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  @inline(__always)
  func withLock<R>(_ body: () throws -> R) rethrows -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body()
  }
}
