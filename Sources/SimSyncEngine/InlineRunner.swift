import Foundation
import Scenarios

/// Runs the app's `async` delegate methods to completion on the simulator's thread, so that a
/// delegate written for `CKSyncEngine` keeps its `async` signatures: every job of the call is
/// enqueued here and run at once, in order, and nothing of the simulation interleaves with it.
///
/// A call that waits on something outside the simulator (an actor of its own, the main actor,
/// a real timer) cannot finish here: ``run(_:)`` throws ``Suspended`` instead of hanging.
final class InlineRunner: TaskExecutor, @unchecked Sendable {
  /// The delegate's call suspended on work the simulator does not run.
  struct Suspended: Error, CustomStringConvertible {
    var description: String {
      "the delegate's call waited on something outside the simulator (an actor, the main actor, a timer): delegate code must only await the engine and its own async functions"
    }
  }

  private var jobs: [UnownedJob] = []
  private var head = 0
  /// A call that suspended elsewhere comes back from another thread.
  private let lock = NSLock()

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

  /// Runs `body` as a task on this executor until it has nothing left to run; returns its
  /// result, or throws when it did not finish. With an ``AppCostMeter`` bound, the call is timed
  /// as the app's (`delegateCall`: a call into the engine's delegate).
  func run<T: Sendable>(delegateCall: Bool = false, _ body: @escaping @Sendable () async -> T) throws(Suspended) -> T {
    guard let meter = AppCostMeter.current else { return try untimed(body) }
    meter.appCalls += 1
    if delegateCall { meter.delegateCalls += 1 }
    guard meter.depth == 0 else { return try untimed(body) }
    meter.depth = 1
    defer { meter.depth = 0 }
    // Timed inside the task: making it and running its jobs is the simulator's work.
    return try untimed {
      let start = DispatchTime.now().uptimeNanoseconds
      let result = await body()
      meter.appNanoseconds &+= DispatchTime.now().uptimeNanoseconds &- start
      return result
    }
  }

  private func untimed<T: Sendable>(_ body: @escaping @Sendable () async -> T) throws(Suspended) -> T {
    let box = ResultBox<T>()
    Task(executorPreference: self) { box.value = await body() }
    while let job = next() { job.runSynchronously(on: asUnownedTaskExecutor()) }
    guard let value = box.value else { throw Suspended() }
    return value
  }
}

/// Where a task run by ``InlineRunner`` leaves its result.
private final class ResultBox<T>: @unchecked Sendable {
  var value: T?
}
