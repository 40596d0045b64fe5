import Foundation
import Scenarios
import Testing

@testable import SimSyncEngine

/// The runner that makes calls into the app's `async` code on the simulator's thread: one worker
/// task for call after call, a task of its own for a call within a call, and a clear failure for
/// a call that waits on something outside the simulator — after which calls still work.
@Suite struct InlineRunnerTests {
  @Test func callAfterCallGivesEachItsResult() throws {
    let runner = InlineRunner()
    for i in 0..<1_000 {
      let r = try runner.run { () async -> Int in
        await Task.yield()
        return i * 2
      }
      #expect(r == i * 2)
    }
  }

  @Test func aCallWithinACallRunsToo() throws {
    let runner = InlineRunner()
    let inner = Unchecked(runner)
    let r = try runner.run { () async -> Int in
      let nested = (try? inner.value.run { () async -> Int in 40 }) ?? -1
      return nested + 2
    }
    #expect(r == 42)
    #expect(try runner.run { () async -> Int in 7 } == 7)
  }

  @Test func aCallThatWaitsElsewhereThrowsAndLaterCallsStillRun() throws {
    let runner = InlineRunner()
    #expect(try runner.run { () async -> Int in 1 } == 1)
    #expect(throws: InlineRunner.Suspended.self) {
      try runner.run { () async -> Int in
        try? await Task.sleep(nanoseconds: 50_000_000)
        return 2
      }
    }
    // The worker left with the call that waited: the next calls get tasks of their own.
    #expect(try runner.run { () async -> Int in 3 } == 3)
    Thread.sleep(forTimeInterval: 0.1)  // the waiting call comes back and is run at the next call
    #expect(try runner.run { () async -> Int in 4 } == 4)
    #expect(try runner.run { () async -> Int in 5 } == 5)
  }

  /// A delegate that waits on something outside the simulator stops the run with the reason,
  /// in the report; the run does not hang.
  @Test func anAppThatWaitsElsewhereIsReported() {
    let report = Fuzzer.run(seed: 3, shape: WorkloadShape(), app: AppUnderTest(RemindersAppWaitingElsewhere.self)).report
    #expect(report.appErrors.contains { $0.contains("waited on something outside the simulator") })
  }
}

/// The reminders app, waiting once on a real timer while the simulator asks what it shows.
final class RemindersAppWaitingElsewhere: RemindersApp, @unchecked Sendable {
  var waited = false
  override func shownRecordChanges() async -> SimShownChanges? {
    if !waited {
      waited = true
      try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return await super.shownRecordChanges()
  }
}
